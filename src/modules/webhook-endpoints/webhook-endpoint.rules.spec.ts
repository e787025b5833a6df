import { diffForAudit } from '../audit/audit.rules';
import { DomainError } from '../../common/errors/domain-error';
import { SECRET_SLOT_FIELDS } from './webhook-config.rules';
import { parseContractAddressFilter } from './receiver-choices.rules';
import {
  applyEndpointPatch,
  endpointLimitReached,
  endpointPagePlan,
  endpointView,
  isDefaultEndpoint,
  isEmptyPatch,
  missingForEnabled,
  newEndpointState,
  StoredEndpoint,
  unconfiguredDefault,
  WebhookEndpointState,
} from './webhook-endpoint.rules';
import { auditedEndpoint } from './endpoint-transport.rules';

const ORG = '0193a6c2-7d1e-7c3a-9f10-0a1b2c3d4e5f';
const ENDPOINT = '0193a6c2-8000-7000-8000-000000000001';
// The EIP-55 reference vectors.
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const LOWER = CHECKSUMMED.toLowerCase();
const OTHER = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';

const state: WebhookEndpointState = {
  url: 'https://example.com/hook',
  description: 'warehouse',
  enabled: true,
  webhookTypes: ['transaction', 'nft'],
  contractAddresses: null,
  headers: {},
  rateLimitPerSecond: null,
  maxInFlight: null,
  ordering: 'none',
  payload: 'thin',
  filter: null,
  retrySchedule: null,
  disabledReason: null,
};

function problem(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('webhook endpoint rules', () => {
  it('knows the default endpoint by the organization id, in any case', () => {
    expect(isDefaultEndpoint(ORG, ORG)).toBe(true);
    expect(isDefaultEndpoint(ORG.toUpperCase(), ORG)).toBe(true);
    expect(isDefaultEndpoint(ENDPOINT, ORG)).toBe(false);
  });

  it('counts the default endpoint in the limit of 20', () => {
    expect(endpointLimitReached(0)).toBe(false);
    expect(endpointLimitReached(18)).toBe(false);
    expect(endpointLimitReached(19)).toBe(true);
    expect(endpointLimitReached(25)).toBe(true);
  });

  describe('contract address filter', () => {
    it('stores addresses lowercase, sorted and without repeats', () => {
      expect(parseContractAddressFilter([OTHER, CHECKSUMMED, LOWER, LOWER.toUpperCase().replace('0X', '0x')])).toEqual([LOWER, OTHER]);
    });

    it('means no filter when absent or null', () => {
      expect(parseContractAddressFilter(undefined)).toBeNull();
      expect(parseContractAddressFilter(null)).toBeNull();
    });

    it('names every bad entry at once, a wrong checksum included', () => {
      const wrongChecksum = CHECKSUMMED.replace('a', 'A');
      const error = problem(() => parseContractAddressFilter([LOWER, wrongChecksum, 42, '0x123']));
      expect(error.status).toBe(400);
      expect(error.code).toBe('INVALID_ADDRESS');
      expect(error.errors?.map((e) => e.field)).toEqual([
        'filters.contractAddresses[1]',
        'filters.contractAddresses[2]',
        'filters.contractAddresses[3]',
      ]);
    });
  });

  describe('a new endpoint', () => {
    it('is enabled unless told otherwise, its types in catalogue order', () => {
      expect(newEndpointState({ url: 'https://a.example/', webhookTypes: ['nft', 'payment'], contractAddresses: null })).toEqual({
        url: 'https://a.example/',
        description: null,
        enabled: true,
        webhookTypes: ['payment', 'nft'],
        contractAddresses: null,
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        ordering: 'none',
        payload: 'thin',
        filter: null,
        retrySchedule: null,
        disabledReason: null,
      });
      expect(
        newEndpointState({ url: 'https://a.example/', webhookTypes: [], contractAddresses: null, ordering: 'resource' }).ordering,
      ).toBe('resource');
      expect(newEndpointState({ url: 'https://a.example/', enabled: false, webhookTypes: [], contractAddresses: [LOWER] }).enabled).toBe(
        false,
      );
    });
  });

  describe('a PATCH', () => {
    it('replaces the custom headers as a whole, or keeps them when left out', () => {
      const withHeaders = { ...state, headers: { 'x-a': '1', 'x-b': '2' } };
      expect(applyEndpointPatch(withHeaders, { headers: { 'x-c': '3' } }).headers).toEqual({ 'x-c': '3' });
      expect(applyEndpointPatch(withHeaders, { headers: {} }).headers).toEqual({});
      expect(applyEndpointPatch(withHeaders, { description: 'x' }).headers).toEqual({ 'x-a': '1', 'x-b': '2' });
    });

    it('sets, keeps or clears the rate limit and maxInFlight', () => {
      const limited = applyEndpointPatch(state, { rateLimitPerSecond: 20 });
      expect(limited.rateLimitPerSecond).toBe(20);
      expect(applyEndpointPatch(limited, { description: 'x' }).rateLimitPerSecond).toBe(20);
      expect(applyEndpointPatch(limited, { rateLimitPerSecond: null }).rateLimitPerSecond).toBeNull();
      const bounded = applyEndpointPatch(state, { maxInFlight: 200 });
      expect(bounded.maxInFlight).toBe(200);
      expect(applyEndpointPatch(bounded, { description: 'x' }).maxInFlight).toBe(200);
      expect(applyEndpointPatch(bounded, { maxInFlight: null }).maxInFlight).toBeNull();
    });

    it('clears the url with null (the default endpoint, while disabled)', () => {
      expect(applyEndpointPatch(state, { url: null }).url).toBeNull();
      expect(applyEndpointPatch(state, { url: undefined }).url).toBe(state.url);
    });

    it('keeps the fields it leaves out', () => {
      expect(applyEndpointPatch(state, {})).toEqual(state);
      expect(applyEndpointPatch(state, { url: 'https://example.com/other' })).toEqual({ ...state, url: 'https://example.com/other' });
    });

    it('clears the description and the filter with null', () => {
      const filtered = { ...state, contractAddresses: [LOWER] };
      expect(applyEndpointPatch(filtered, { description: null, contractAddresses: null })).toEqual({ ...state, description: null });
      expect(applyEndpointPatch(state, { contractAddresses: [LOWER] }).contractAddresses).toEqual([LOWER]);
    });

    it('changes the ordering only when it names one', () => {
      expect(applyEndpointPatch(state, { ordering: 'resource' })).toEqual({ ...state, ordering: 'resource' });
      expect(applyEndpointPatch({ ...state, ordering: 'resource' }, { enabled: true }).ordering).toBe('resource');
    });

    it('normalizes the types it sets', () => {
      expect(applyEndpointPatch(state, { webhookTypes: ['custodialAccount', 'payment'] }).webhookTypes).toEqual([
        'payment',
        'custodialAccount',
      ]);
    });

    it("drops the service's disabled reason whenever it sets enabled", () => {
      const failing = { ...state, enabled: false, disabledReason: 'failing' };
      expect(applyEndpointPatch(failing, { enabled: true })).toEqual({ ...state, enabled: true, disabledReason: null });
      expect(applyEndpointPatch(failing, { enabled: false })).toEqual({ ...failing, disabledReason: null });
      expect(applyEndpointPatch(failing, { description: 'x' })).toEqual({ ...failing, description: 'x' });
    });
  });

  describe('views', () => {
    const row: StoredEndpoint = {
      id: ENDPOINT,
      isDefault: false,
      ...state,
      contractAddresses: [LOWER],
      sharedSecretSealed: 'sealed-a',
      destination: null,
      destinationCredentialsSealed: null,
      previousSharedSecretSealed: 'sealed-old',
      previousSecretExpiresAt: new Date('2026-11-24T00:00:00Z'),
      signingPrivateKeySealed: 'sealed-key',
      signingPublicKey: 'cHVibGlj',
      previousSigningPrivateKeySealed: 'sealed-old-key',
      previousSigningPublicKey: 'b2xk',
      auth: { type: 'oauth2ClientCredentials', tokenUrl: 'https://auth.example.com/token', clientId: 'client', scope: null },
      authClientSecretSealed: 'sealed-client-secret',
      tls: null,
      tlsClientKeySealed: null,
      createdAt: new Date('2026-11-20T00:00:00Z'),
      updatedAt: new Date('2026-11-21T00:00:00Z'),
    };

    it('shows an endpoint without its secrets, the previous one only while it signs', () => {
      const view = endpointView(row, new Date('2026-11-23T00:00:00Z'));
      expect(view).toEqual({
        id: ENDPOINT,
        isDefault: false,
        url: state.url,
        description: 'warehouse',
        enabled: true,
        webhookTypes: ['transaction', 'nft'],
        contractAddresses: [LOWER],
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        ordering: 'none',
        payload: 'thin',
        filter: null,
        retrySchedule: null,
        hasSharedSecret: true,
        previousSecretExpiresAt: new Date('2026-11-24T00:00:00Z'),
        publicKey: 'whpk_cHVibGlj',
        previousPublicKey: 'whpk_b2xk',
        auth: {
          type: 'oauth2ClientCredentials',
          tokenUrl: 'https://auth.example.com/token',
          clientId: 'client',
          scope: null,
          hasClientSecret: true,
        },
        tls: null,
        destination: null,
        disabledReason: null,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
      });
      expect(JSON.stringify(view)).not.toContain('sealed');
      expect(endpointView(row, new Date('2026-11-25T00:00:00Z')).previousSecretExpiresAt).toBeNull();
      // The replaced key pair is shown exactly as long as it signs: with the previous secret.
      expect(endpointView(row, new Date('2026-11-25T00:00:00Z')).previousPublicKey).toBeNull();
    });

    it('shows a default endpoint never changed as disabled, without url, secret, description or filter, created with the organization', () => {
      const createdAt = new Date('2026-11-01T00:00:00Z');
      expect(endpointView(unconfiguredDefault(ORG, createdAt), new Date())).toEqual({
        id: ORG,
        isDefault: true,
        url: null,
        description: null,
        enabled: false,
        webhookTypes: [],
        contractAddresses: null,
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        ordering: 'none',
        payload: 'thin',
        filter: null,
        retrySchedule: null,
        hasSharedSecret: false,
        previousSecretExpiresAt: null,
        publicKey: null,
        previousPublicKey: null,
        auth: null,
        tls: null,
        destination: null,
        disabledReason: null,
        createdAt,
        updatedAt: createdAt,
      });
    });
  });

  describe('completeness', () => {
    it('lists what an enabled endpoint lacks, and nothing while disabled', () => {
      expect(missingForEnabled(state, 'sealed')).toEqual([]);
      expect(missingForEnabled({ ...state, url: null }, 'sealed')).toEqual(['url']);
      expect(missingForEnabled(state, null)).toEqual(['sharedSecret']);
      expect(missingForEnabled({ enabled: true, url: null }, null)).toEqual(['url', 'sharedSecret']);
      // A broker destination stands for the url.
      expect(missingForEnabled({ ...state, url: null }, 'sealed', true)).toEqual([]);
      expect(missingForEnabled({ enabled: false, url: null }, null)).toEqual([]);
    });

    it('tells an empty patch apart', () => {
      expect(isEmptyPatch({})).toBe(true);
      expect(isEmptyPatch({ url: undefined })).toBe(true);
      expect(isEmptyPatch({ url: null })).toBe(false);
      expect(isEmptyPatch({ enabled: false })).toBe(false);
    });
  });

  describe('pages', () => {
    it('starts with the default endpoint, then the others from the beginning', () => {
      expect(endpointPagePlan(ORG, null, 10)).toEqual({ includeDefault: true, afterId: null, othersLimit: 10 });
      expect(endpointPagePlan(ORG, ORG, 10)).toEqual({ includeDefault: false, afterId: null, othersLimit: 11 });
      expect(endpointPagePlan(ORG, ENDPOINT.toUpperCase(), 1)).toEqual({ includeDefault: false, afterId: ENDPOINT, othersLimit: 2 });
    });
  });

  describe('audit', () => {
    const slots = { sharedSecret: 'sealed-a', previousSharedSecret: null, previousSecretExpiresAt: null };

    it('shows addresses in EIP-55 form and secrets only as redacted', () => {
      const before = auditedEndpoint(state, slots);
      const after = auditedEndpoint({ ...state, contractAddresses: [LOWER] }, { ...slots, sharedSecret: 'sealed-b' });
      expect(diffForAudit(before, after, SECRET_SLOT_FIELDS)).toEqual({
        contractAddresses: { from: null, to: [CHECKSUMMED] },
        sharedSecret: { from: '[redacted]', to: '[redacted]' },
      });
      expect(diffForAudit({}, after, SECRET_SLOT_FIELDS)).toEqual(
        expect.objectContaining({ url: { from: null, to: state.url }, sharedSecret: { from: null, to: '[redacted]' } }),
      );
    });
  });
});
