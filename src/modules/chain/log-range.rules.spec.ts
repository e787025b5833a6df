import { afterAcceptance, afterRefusal, firstRange, halvedRange, LogRange } from './log-range.rules';

describe('halvedRange', () => {
  it('halves the refused range, rounding down', () => {
    expect(halvedRange(100, 199)).toBe(50);
    expect(halvedRange(100, 102)).toBe(1);
  });

  it('never goes below one block', () => {
    expect(halvedRange(7, 7)).toBe(1);
  });
});

describe('afterRefusal', () => {
  it('starts counting accepted ranges again', () => {
    expect(afterRefusal(0, 999)).toEqual({ size: 500, accepted: 0 });
  });
});

describe('firstRange', () => {
  it('starts at the largest size', () => {
    expect(firstRange({ largest: 1000, regrowAfter: 4 })).toEqual({ size: 1000, accepted: 0 });
  });
});

describe('afterAcceptance', () => {
  const accept = (range: LogRange, times: number): LogRange => {
    let next = range;
    for (let i = 0; i < times; i++) next = afterAcceptance(next, { largest: 1000, regrowAfter: 4 });
    return next;
  };

  it('keeps a halved size until enough ranges were accepted in a row, then doubles it', () => {
    expect(accept({ size: 250, accepted: 0 }, 3)).toEqual({ size: 250, accepted: 3 });
    expect(accept({ size: 250, accepted: 0 }, 4)).toEqual({ size: 500, accepted: 0 });
  });

  it('never grows past the largest size', () => {
    expect(accept({ size: 600, accepted: 0 }, 4)).toEqual({ size: 1000, accepted: 0 });
    expect(accept({ size: 1000, accepted: 0 }, 9)).toEqual({ size: 1000, accepted: 0 });
  });

  it('counts from where a refusal left it', () => {
    expect(accept(afterRefusal(0, 999), 4)).toEqual({ size: 1000, accepted: 0 });
  });
});
