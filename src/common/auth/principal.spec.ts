import { hasRole } from './principal';

describe('hasRole', () => {
  it('grants exactly the listed roles', () => {
    expect(hasRole(['read'], 'read')).toBe(true);
    expect(hasRole(['read'], 'write')).toBe(false);
    expect(hasRole(['write'], 'read')).toBe(false);
    expect(hasRole(['read'], 'admin')).toBe(false);
  });

  it('lets admin do everything', () => {
    expect(hasRole(['admin'], 'read')).toBe(true);
    expect(hasRole(['admin'], 'write')).toBe(true);
    expect(hasRole(['admin'], 'admin')).toBe(true);
  });
});
