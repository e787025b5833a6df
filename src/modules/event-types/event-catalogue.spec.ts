import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_TYPES } from '../../common/webhook-types';
import { buildEventCatalogue } from './event-types.service';

const catalogue = buildEventCatalogue([{ webhookType: 'payment', resourceType: 'Payment', actions: ['create', 'settle'] }]);

/** A strict validator: an unknown keyword or format in a schema is an error, not ignored. */
function validatorFor(webhookType: string, resourceType: string) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  const entry = catalogue.find((e) => e.webhookType === webhookType && e.resourceType === resourceType);
  if (!entry) throw new Error(`no entry ${webhookType}/${resourceType}`);
  return ajv.compile(entry.schema);
}

const ORG = '01937a5e-1c2b-7d3e-8f40-0123456789ab';
const body = (fields: Record<string, unknown>) => ({
  organizationId: ORG,
  action: 'create',
  id: '01937a5e-1c2b-7d3e-8f40-0123456789ac',
  resourceId: '01937a5e-1c2b-7d3e-8f40-0123456789ad',
  resourceType: 'Token',
  createdAtUtc: '2026-11-22T01:25:42.123456+00:00',
  changes: null,
  ...fields,
});

const MEDIA = { status: 'failed', error: 'TIMEOUT', width: null, height: null, contentType: null, sha256: null };

describe('the event catalogue', () => {
  it('has one entry per type and resource the service sends, and a test webhook under every type', () => {
    expect(catalogue.map((e) => `${e.webhookType}/${e.resourceType}: ${e.actions.join(',')}`)).toEqual([
      'payment/Payment: create,settle',
      'payment/WebhookTest: test',
      'transaction/Transaction: create,update',
      'transaction/WebhookTest: test',
      'nft/Token: create,update',
      'nft/WebhookTest: test',
      'kyc/WebhookTest: test',
      'document/WebhookTest: test',
      'custodialAccount/Wallet: create',
      'custodialAccount/WebhookTest: test',
      'operational/WebhookEndpoint: disabled,enabled,failing,recovered',
      'operational/Webhook: exhausted',
      'operational/WebhookTest: test',
    ]);
    expect(new Set(catalogue.map((e) => e.webhookType))).toEqual(new Set(WEBHOOK_TYPES));
  });

  it('gives every entry a self-contained schema a strict JSON Schema 2020-12 validator compiles', () => {
    for (const entry of catalogue) {
      expect(
        JSON.stringify(entry.schema)
          .match(/"\$ref":"[^"]*"/g)
          ?.filter((ref) => !ref.startsWith('"$ref":"#/$defs/')) ?? [],
      ).toEqual([]);
      expect(() => validatorFor(entry.webhookType, entry.resourceType)).not.toThrow();
    }
  });

  it('admits what each token update producer sends, and nothing else', () => {
    const valid = validatorFor('nft', 'Token');
    const update = (changes: unknown) => valid(body({ action: 'update', changes }));
    expect(update({ name: 'Renamed', image: null, editionId: 3 })).toBe(true);
    expect(update({ spam: { isSpam: true, reasons: ['massAirdrop'], source: 'rules' } })).toBe(true);
    expect(update({ media: MEDIA })).toBe(true);
    expect(update({ media: { ...MEDIA, thumbnails: null } })).toBe(false);
    expect(update({ spam: { isSpam: true } })).toBe(false);
    expect(update({ editionId: 'three' })).toBe(false);
    expect(update({ owner: 'someone' })).toBe(false);
    expect(update({})).toBe(false);
    expect(update(null)).toBe(false);
    expect(valid(body({ changes: { name: 'x' } }))).toBe(false);
    expect(valid(body({}))).toBe(true);
  });

  it('closes the envelope: every key required, no other key, the action and resourceType of the entry', () => {
    const valid = validatorFor('nft', 'Token');
    const { changes: _changes, ...missing } = body({});
    expect(valid(missing)).toBe(false);
    expect(valid(body({ webhookType: 'nft' }))).toBe(false);
    expect(valid(body({ action: 'delete' }))).toBe(false);
    expect(valid(body({ resourceType: 'Wallet' }))).toBe(false);
    expect(valid(body({ createdAtUtc: '2026-11-22T01:25:42Z' }))).toBe(false);
    expect(valid(body({ id: 'not-a-uuid' }))).toBe(false);
  });

  it('describes the changes of reverted transactions and operational events', () => {
    const transaction = validatorFor('transaction', 'Transaction');
    expect(transaction(body({ resourceType: 'Transaction', action: 'update', changes: { status: 'reverted' } }))).toBe(true);
    expect(transaction(body({ resourceType: 'Transaction', action: 'update', changes: { status: 'confirmed' } }))).toBe(false);

    const endpoint = validatorFor('operational', 'WebhookEndpoint');
    const event = (action: string, changes: unknown) => endpoint(body({ resourceType: 'WebhookEndpoint', action, changes }));
    expect(event('disabled', { enabled: false, disabledReason: 'failing' })).toBe(true);
    expect(event('disabled', { enabled: false, disabledReason: null })).toBe(true);
    expect(event('disabled', { enabled: true, disabledReason: null })).toBe(false);
    expect(event('enabled', { enabled: true, disabledReason: null })).toBe(true);
    expect(event('enabled', { enabled: true, disabledReason: 'failing' })).toBe(false);
    expect(event('failing', null)).toBe(true);
    expect(event('recovered', { enabled: true, disabledReason: null })).toBe(false);

    const webhook = validatorFor('operational', 'Webhook');
    expect(webhook(body({ resourceType: 'Webhook', action: 'exhausted', changes: { endpointId: ORG } }))).toBe(true);
    expect(webhook(body({ resourceType: 'Webhook', action: 'exhausted', changes: null }))).toBe(false);
  });

  it("checks a full payload's data against the resource's GET answer, null for test webhooks, anything for an extension's", () => {
    const wallet = validatorFor('custodialAccount', 'Wallet');
    const walletBody = (data: unknown) => body({ resourceType: 'Wallet', data });
    const answer = { id: ORG, organizationId: ORG, name: null, address: null, createdAtUtc: '2026-11-22T01:25:42.123000+00:00' };
    expect(wallet(walletBody(answer))).toBe(true);
    expect(wallet(walletBody({ ...answer, name: 7 }))).toBe(false);
    expect(wallet(walletBody(null))).toBe(false);

    const test = validatorFor('kyc', 'WebhookTest');
    expect(test(body({ resourceType: 'WebhookTest', action: 'test', data: null }))).toBe(true);
    expect(test(body({ resourceType: 'WebhookTest', action: 'test', data: {} }))).toBe(false);

    const payment = validatorFor('payment', 'Payment');
    expect(payment(body({ resourceType: 'Payment', action: 'settle', changes: { amount: '5' }, data: { any: 'thing' } }))).toBe(true);
    expect(payment(body({ resourceType: 'Payment', action: 'settle', changes: 'text' }))).toBe(false);
  });
});
