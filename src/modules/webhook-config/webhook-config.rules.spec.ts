import {
  applyWebhookConfigPatch,
  DEFAULT_WEBHOOK_CONFIG,
  disabledReasonAfter,
  isEmptyPatch,
  missingForEnabled,
  normalizeWebhookTypes,
  WebhookConfigState,
} from './webhook-config.rules';

const complete: WebhookConfigState = {
  url: 'https://example.com/hook',
  enabled: true,
  webhookTypes: ['transaction', 'nft'],
  sharedSecret: 'sealed-token',
  disabledReason: null,
};

describe('webhook configuration rules', () => {
  it('starts disabled with nothing configured', () => {
    expect(DEFAULT_WEBHOOK_CONFIG).toEqual({ url: null, enabled: false, webhookTypes: [], sharedSecret: null, disabledReason: null });
  });

  it('keeps the fields a patch leaves out', () => {
    expect(applyWebhookConfigPatch(complete, { enabled: false })).toEqual({ ...complete, enabled: false });
    expect(applyWebhookConfigPatch(complete, {})).toEqual(complete);
  });

  it('clears url and secret with null', () => {
    expect(applyWebhookConfigPatch(complete, { url: null, sharedSecret: null })).toEqual({
      ...complete,
      url: null,
      sharedSecret: null,
    });
  });

  it('stores webhook types in catalogue order', () => {
    expect(normalizeWebhookTypes(['custodialAccount', 'payment', 'nft'])).toEqual(['payment', 'nft', 'custodialAccount']);
    expect(applyWebhookConfigPatch(DEFAULT_WEBHOOK_CONFIG, { webhookTypes: ['kyc', 'document'] }).webhookTypes).toEqual([
      'kyc',
      'document',
    ]);
    expect(applyWebhookConfigPatch(complete, { webhookTypes: [] }).webhookTypes).toEqual([]);
  });

  it('lists what an enabled configuration lacks', () => {
    expect(missingForEnabled(complete)).toEqual([]);
    expect(missingForEnabled({ ...complete, url: null })).toEqual(['url']);
    expect(missingForEnabled({ ...complete, sharedSecret: null })).toEqual(['sharedSecret']);
    expect(missingForEnabled({ ...DEFAULT_WEBHOOK_CONFIG, enabled: true })).toEqual(['url', 'sharedSecret']);
    expect(missingForEnabled({ ...DEFAULT_WEBHOOK_CONFIG, enabled: false })).toEqual([]);
  });

  it('drops the reason the service switched it off once a change sets enabled, either way', () => {
    const failing = { ...complete, enabled: false, disabledReason: 'failing' };
    expect(applyWebhookConfigPatch(failing, { enabled: true })).toEqual({ ...complete, enabled: true, disabledReason: null });
    expect(applyWebhookConfigPatch(failing, { enabled: false })).toEqual({ ...failing, disabledReason: null });
    expect(applyWebhookConfigPatch(failing, { url: 'https://example.com/other' })).toEqual({
      ...failing,
      url: 'https://example.com/other',
    });
    expect(disabledReasonAfter('failing', undefined)).toBe('failing');
    expect(disabledReasonAfter(null, true)).toBeNull();
  });

  it('tells an empty patch apart', () => {
    expect(isEmptyPatch({})).toBe(true);
    expect(isEmptyPatch({ url: undefined })).toBe(true);
    expect(isEmptyPatch({ url: null })).toBe(false);
    expect(isEmptyPatch({ enabled: false })).toBe(false);
  });
});
