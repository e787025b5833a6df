import { pick } from './pick';

describe('pick', () => {
  it('copies the named fields only, null and undefined included', () => {
    const source = { a: 1, b: null, c: undefined, d: 'left out' };
    expect(pick(source, 'a', 'b', 'c')).toEqual({ a: 1, b: null, c: undefined });
    expect(Object.keys(pick(source, 'a', 'c'))).toEqual(['a', 'c']);
  });
});
