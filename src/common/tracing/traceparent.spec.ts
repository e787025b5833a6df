import { formatTraceparent, parseTraceparent } from './traceparent';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a version-00 value and writes it back unchanged', () => {
    const value = `00-${TRACE}-${SPAN}-01`;
    expect(parseTraceparent(value)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    expect(formatTraceparent(parseTraceparent(value)!)).toBe(value);
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 0 })).toBe(`00-${TRACE}-${SPAN}-00`);
  });

  it('accepts the extra fields of a later version', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
  });

  it.each([
    [undefined],
    [''],
    ['garbage'],
    [`00-${TRACE}-${SPAN}-01-extra`],
    [`ff-${TRACE}-${SPAN}-01`],
    [`00-${'0'.repeat(32)}-${SPAN}-01`],
    [`00-${TRACE}-${'0'.repeat(16)}-01`],
    [`00-${TRACE.toUpperCase()}-${SPAN}-01`],
    [`00-${TRACE}-${SPAN}`],
  ])('ignores %p', (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});
