import { chainHash, ChainVerifier, ExportedAuditEntry, GENESIS_HASH } from './audit-chain';

const entry = (n: number, changes: ExportedAuditEntry['changes'] = { n: { from: null, to: n } }): ExportedAuditEntry => ({
  id: `id-${n}`,
  action: 'thing.update',
  apiKeyId: null,
  keyPrefix: 'operator',
  requestId: null,
  ip: '127.0.0.1',
  createdAtUtc: '2026-11-22T01:25:42.123000+00:00',
  changes,
});

function chain(count: number) {
  let previous = GENESIS_HASH;
  return Array.from({ length: count }, (_, i) => {
    const e = entry(i + 1);
    previous = chainHash(previous, e);
    return { ...e, hash: previous };
  });
}

describe('chainHash', () => {
  it('is SHA-256 of the previous hash and the RFC 8785 form, whatever the key order', () => {
    // Keys sorted, no whitespace: the form an auditor's own RFC 8785 library produces.
    const canonical =
      '{"action":"a","apiKeyId":null,"changes":{"b":{"from":1,"to":2}},"createdAtUtc":"t","id":"i","ip":null,"keyPrefix":null,"requestId":null}';
    const e = {
      changes: { b: { to: 2, from: 1 } },
      id: 'i',
      action: 'a',
      apiKeyId: null,
      keyPrefix: null,
      requestId: null,
      ip: null,
      createdAtUtc: 't',
    };
    const { createHash } = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    expect(chainHash(GENESIS_HASH, e)).toBe(
      createHash('sha256')
        .update(GENESIS_HASH + canonical)
        .digest('hex'),
    );
  });
});

describe('ChainVerifier', () => {
  it('accepts an intact chain and reports its last hash', () => {
    const entries = chain(5);
    const v = new ChainVerifier(GENESIS_HASH, 0);
    entries.forEach((e, i) => v.add(e, i + 1));
    expect(v.verdict(entries[4].hash, 'id-5')).toEqual({ valid: true, entries: 5, lastHash: entries[4].hash });
  });

  it('names the first entry whose content changed', () => {
    const entries = chain(5);
    entries[2] = { ...entries[2], action: 'other' };
    const v = new ChainVerifier();
    entries.forEach((e) => v.add(e));
    expect(v.verdict()).toEqual({ valid: false, entries: 5, firstBrokenEntryId: 'id-3' });
  });

  it('sees a gap in positions even when hashes were rebuilt around it', () => {
    const entries = chain(3);
    const v = new ChainVerifier(GENESIS_HASH, 0);
    v.add(entries[0], 1);
    v.add(entries[1], 3);
    expect(v.verdict()).toMatchObject({ valid: false, firstBrokenEntryId: 'id-2' });
  });

  it('sees the newest entries cut off through the recorded head', () => {
    const entries = chain(3);
    const v = new ChainVerifier();
    v.add(entries[0]);
    v.add(entries[1]);
    expect(v.verdict(entries[2].hash, 'id-2')).toEqual({ valid: false, entries: 2, firstBrokenEntryId: 'id-2' });
  });

  it('starts from a retention checkpoint', () => {
    const entries = chain(4);
    const v = new ChainVerifier(entries[1].hash, 2);
    v.add(entries[2], 3);
    v.add(entries[3], 4);
    expect(v.verdict(entries[3].hash)).toEqual({ valid: true, entries: 2, lastHash: entries[3].hash });
  });
});

describe('the keyed chain', () => {
  const key = Buffer.alloc(32, 7);

  it('is HMAC-SHA256 keyed with AUDIT_CHAIN_KEY, so the plain formula does not reproduce it', () => {
    const e = entry(1);
    expect(chainHash(GENESIS_HASH, e, key)).not.toBe(chainHash(GENESIS_HASH, e));
    expect(chainHash(GENESIS_HASH, e, key)).not.toBe(chainHash(GENESIS_HASH, e, Buffer.alloc(32, 8)));
  });

  it('checks positions before the keyed start in plain SHA-256 and from it with the key, and says where it begins', () => {
    const plain = chain(2);
    const third = entry(3);
    const keyed = { ...third, hash: chainHash(plain[1].hash, third, key) };
    const verifier = new ChainVerifier(GENESIS_HASH, 0, { key, fromSeq: 3 });
    [...plain, keyed].forEach((e, i) => expect(verifier.add(e, i + 1)).toBe(true));
    expect(verifier.verdict()).toEqual({ valid: true, entries: 3, lastHash: keyed.hash, keyedFromEntryId: keyed.id });
    // Without the key, a keyed position cannot be shown valid.
    const keyless = new ChainVerifier(GENESIS_HASH, 0, { key: null, fromSeq: 3 });
    [...plain, keyed].forEach((e, i) => keyless.add(e, i + 1));
    expect(keyless.verdict()).toMatchObject({ valid: false, firstBrokenEntryId: keyed.id });
  });
});
