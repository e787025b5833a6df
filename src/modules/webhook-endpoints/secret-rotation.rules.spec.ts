import { livePreviousSecretExpiry, replaceSecretSlots, rotateSecretSlots, SecretSlots } from './webhook-config.rules';

describe('secret rotation rules', () => {
  const now = new Date('2026-11-23T10:00:00.000Z');
  const current: SecretSlots = { sharedSecret: 'sealed-a', previousSharedSecret: null, previousSecretExpiresAt: null };

  it('keeps the current secret as the previous one for the window', () => {
    expect(rotateSecretSlots(current, 'sealed-b', 86_400, now)).toEqual({
      slots: { sharedSecret: 'sealed-b', previousSharedSecret: 'sealed-a', previousSecretExpiresAt: new Date('2026-11-24T10:00:00.000Z') },
      previousSecretExpiresAt: new Date('2026-11-24T10:00:00.000Z'),
    });
  });

  it('drops an older previous secret still in its window: only the newest two sign', () => {
    const during = {
      sharedSecret: 'sealed-b',
      previousSharedSecret: 'sealed-a',
      previousSecretExpiresAt: new Date(now.getTime() + 60_000),
    };
    expect(rotateSecretSlots(during, 'sealed-c', 10, now)?.slots).toEqual({
      sharedSecret: 'sealed-c',
      previousSharedSecret: 'sealed-b',
      previousSecretExpiresAt: new Date(now.getTime() + 10_000),
    });
  });

  it('keeps nothing with a zero window, and refuses when there is no secret to rotate', () => {
    expect(rotateSecretSlots(current, 'sealed-b', 0, now)).toEqual({
      slots: { sharedSecret: 'sealed-b', previousSharedSecret: null, previousSecretExpiresAt: null },
      previousSecretExpiresAt: now,
    });
    expect(rotateSecretSlots({ ...current, sharedSecret: null }, 'sealed-b', 60, now)).toBeNull();
  });

  it('a replaced secret drops any previous one', () => {
    expect(replaceSecretSlots('sealed-z')).toEqual({ sharedSecret: 'sealed-z', previousSharedSecret: null, previousSecretExpiresAt: null });
    expect(replaceSecretSlots(null)).toEqual({ sharedSecret: null, previousSharedSecret: null, previousSecretExpiresAt: null });
  });

  it('shows the expiry only while the previous secret still signs', () => {
    const expiresAt = new Date(now.getTime() + 1);
    expect(livePreviousSecretExpiry({ previousSharedSecret: 'sealed-a', previousSecretExpiresAt: expiresAt }, now)).toEqual(expiresAt);
    expect(livePreviousSecretExpiry({ previousSharedSecret: 'sealed-a', previousSecretExpiresAt: now }, now)).toBeNull();
    expect(livePreviousSecretExpiry({ previousSharedSecret: null, previousSecretExpiresAt: null }, now)).toBeNull();
  });
});
