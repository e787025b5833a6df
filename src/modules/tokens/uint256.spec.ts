import { validateSync } from 'class-validator';
import { compareUint256, isPositiveUint256, isUint256, IsUint256String, parseUint256, UINT256_MAX } from './uint256';

const MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

describe('uint256 decimal strings', () => {
  it('knows the largest value', () => {
    expect(UINT256_MAX.toString()).toBe(MAX);
    expect(MAX).toHaveLength(78);
  });

  it.each(['0', '1', '42', '1000000000000000000', MAX])('accepts %s', (value) => {
    expect(isUint256(value)).toBe(true);
    expect(parseUint256(value)?.toString()).toBe(value);
  });

  it.each([
    ['one above the maximum', '115792089237316195423570985008687907853269984665640564039457584007913129639936'],
    ['79 digits', '1'.repeat(79)],
    ['a leading zero', '01'],
    ['a sign', '-1'],
    ['a plus sign', '+1'],
    ['a fraction', '1.5'],
    ['an exponent', '1e3'],
    ['hex', '0x10'],
    ['spaces', ' 1'],
    ['empty', ''],
  ])('refuses %s', (_label, value) => {
    expect(isUint256(value)).toBe(false);
    expect(parseUint256(value)).toBeNull();
  });

  it('refuses values that are not strings', () => {
    expect(isUint256(1)).toBe(false);
    expect(isUint256(null)).toBe(false);
    expect(isUint256(10n)).toBe(false);
  });

  it('tells positive amounts from zero', () => {
    expect(isPositiveUint256('0')).toBe(false);
    expect(isPositiveUint256('1')).toBe(true);
    expect(isPositiveUint256(MAX)).toBe(true);
  });

  it('compares numerically, beyond the precision of a double', () => {
    expect(compareUint256('9', '10')).toBe(-1);
    expect(compareUint256('10', '9')).toBe(1);
    expect(compareUint256(MAX, MAX)).toBe(0);
    expect(compareUint256('9007199254740993', '9007199254740992')).toBe(1);
    expect(() => compareUint256('x', '1')).toThrow(RangeError);
  });

  it('validates request fields', () => {
    class Body {
      @IsUint256String()
      id: unknown;
      @IsUint256String({ positive: true })
      amount: unknown;
    }
    const ok = Object.assign(new Body(), { id: '0', amount: '5' });
    expect(validateSync(ok)).toHaveLength(0);
    const bad = Object.assign(new Body(), { id: 7, amount: '0' });
    expect(
      validateSync(bad)
        .map((e) => e.property)
        .sort(),
    ).toEqual(['amount', 'id']);
  });
});
