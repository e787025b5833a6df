import { responseBodyText } from './webhook-sender';

describe('responseBodyText', () => {
  it('decodes UTF-8 as is', () => {
    expect(responseBodyText(Buffer.from('{"ok":true} é 漢'))).toBe('{"ok":true} é 漢');
  });

  it('replaces invalid sequences and NUL with U+FFFD', () => {
    expect(responseBodyText(Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63]))).toBe('a\uFFFDb\uFFFDc');
  });

  it('leaves out a character split by the cut of a longer answer, but not at the real end of an answer', () => {
    const split = Buffer.from('ab漢').subarray(0, 4); // "ab" and the first two of the character's three bytes
    expect(responseBodyText(split, true)).toBe('ab');
    expect(responseBodyText(split, false)).toBe('ab\uFFFD');
  });

  it('gives an empty string for an empty answer', () => {
    expect(responseBodyText(Buffer.alloc(0))).toBe('');
  });
});
