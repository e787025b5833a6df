import { disabledReasonAfter, normalizeWebhookTypes } from './webhook-config.rules';

describe('rules every endpoint shares', () => {
  it('stores webhook types in catalogue order', () => {
    expect(normalizeWebhookTypes(['custodialAccount', 'payment', 'nft'])).toEqual(['payment', 'nft', 'custodialAccount']);
    expect(normalizeWebhookTypes(['kyc', 'document'])).toEqual(['kyc', 'document']);
    expect(normalizeWebhookTypes([])).toEqual([]);
  });

  it('drops the reason the service switched it off once a change sets enabled, either way', () => {
    expect(disabledReasonAfter('failing', undefined)).toBe('failing');
    expect(disabledReasonAfter('failing', true)).toBeNull();
    expect(disabledReasonAfter('failing', false)).toBeNull();
    expect(disabledReasonAfter(null, true)).toBeNull();
  });
});
