import { extensionMigrations, isDeclaredEvent, registerExtension } from './registry';

class M1 {}
class M2 {}

describe('extension registry', () => {
  const a = {
    name: 'spec-a',
    migrations: [{ name: 'Migration20300101000002B', class: M2 as never }],
    eventTypes: [{ webhookType: 'kyc' as const, resourceType: 'SpecKycCheck', actions: ['create'] }],
  };

  it('registers a module once and knows its events and migrations', () => {
    registerExtension(a);
    registerExtension(a);
    registerExtension({ name: 'spec-b', migrations: [{ name: 'Migration20300101000001A', class: M1 as never }] });
    expect(isDeclaredEvent('kyc', 'SpecKycCheck', 'create')).toBe(true);
    expect(isDeclaredEvent('kyc', 'SpecKycCheck', 'delete')).toBe(false);
    expect(isDeclaredEvent('document', 'SpecKycCheck', 'create')).toBe(false);
    // Applied in name (time) order whatever the registration order.
    expect(extensionMigrations().map((m) => m.name)).toEqual(['Migration20300101000001A', 'Migration20300101000002B']);
  });

  it('refuses a second module under a taken name or resourceType, and built-in resourceTypes', () => {
    expect(() => registerExtension({ ...a })).toThrow(/already registered/);
    expect(() =>
      registerExtension({ name: 'spec-c', eventTypes: [{ webhookType: 'kyc', resourceType: 'SpecKycCheck', actions: ['update'] }] }),
    ).toThrow(/"spec-a"/);
    expect(() =>
      registerExtension({ name: 'spec-d', eventTypes: [{ webhookType: 'nft', resourceType: 'Token', actions: ['burn'] }] }),
    ).toThrow(/built-in/);
  });

  it('refuses an error code of the core catalogue or one another module declared', () => {
    const spec = { status: 404, title: 'Not Found', meaning: 'The spec thing does not exist.' };
    registerExtension({ name: 'spec-e', errors: { SPEC_THING_NOT_FOUND: spec } });
    expect(() => registerExtension({ name: 'spec-f', errors: { SPEC_THING_NOT_FOUND: spec } })).toThrow(/"spec-e"/);
    expect(() => registerExtension({ name: 'spec-g', errors: { WALLET_NOT_FOUND: spec } })).toThrow(/core catalogue/);
  });
});
