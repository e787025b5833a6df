import canonicalize from 'canonicalize';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { newAddress, sql } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

const AUDIT = '/api/organization/v1/current-organization/audit-log';
const ZEROS = '0'.repeat(64);

interface Row {
  id: string;
  action: string;
  api_key_id: string | null;
  key_prefix: string | null;
  request_id: string | null;
  ip: string | null;
  created_at: Date;
  changes: unknown;
  chain_seq: string;
  hash: string;
}

/** The exported form of a row: what the published formula hashes. */
const exported = (row: Row) => ({
  id: row.id,
  action: row.action,
  apiKeyId: row.api_key_id,
  keyPrefix: row.key_prefix,
  requestId: row.request_id,
  ip: row.ip,
  createdAtUtc: `${row.created_at.toISOString().slice(0, -1)}000+00:00`,
  changes: row.changes,
});

/** The database owner, with triggers switched off for its session: what a forger holding the database can do. */
async function asForger(statements: (query: (text: string, params?: unknown[]) => Promise<unknown>) => Promise<void>) {
  const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('begin');
    await client.query('set local session_replication_role = replica');
    await statements((text, params) => client.query(text, params));
    await client.query('commit');
  } finally {
    await client.end();
  }
}

describe('audit rows cannot be changed in the database', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('refuses UPDATE, DELETE and TRUNCATE even to the superuser the tests connect as', async () => {
    expect(await sql<{ rolsuper: boolean }>(t, 'select rolsuper from pg_roles where rolname = current_user')).toEqual([{ rolsuper: true }]);
    const [entry] = await sql<{ id: string }>(
      t,
      'select "id" from "audit_entry" where "organization_id" = ? order by "chain_seq" limit 1',
      [org.id],
    );
    await expect(sql(t, `update "audit_entry" set "ip" = '203.0.113.9' where "id" = ?`, [entry.id])).rejects.toThrow(
      /audit entries cannot be changed or deleted \(UPDATE refused\)/,
    );
    await expect(sql(t, 'delete from "audit_entry" where "id" = ?', [entry.id])).rejects.toThrow(/\(DELETE refused\)/);
    await expect(sql(t, 'truncate "audit_entry"')).rejects.toThrow(/\(TRUNCATE refused\)/);
    // Setting the chain columns is an update like any other.
    await expect(sql(t, `update "audit_entry" set "hash" = ? where "id" = ?`, [ZEROS, entry.id])).rejects.toThrow(/UPDATE refused/);
    expect(await sql(t, 'select "ip" from "audit_entry" where "id" = ?', [entry.id])).toEqual([
      { ip: expect.not.stringMatching(/203\.0\.113\.9/) },
    ]);
  });
});

describe('the keyed audit chain (AUDIT_CHAIN_KEY)', () => {
  const key = randomBytes(32);
  let plainApp: TestApp;
  let keyedApp: TestApp;
  let org: TestOrganization;
  let auditor: string;

  const addContract = (app: TestApp) =>
    app
      .http()
      .post('/api/organization/v1/current-organization/nft-whitelist/contracts')
      .set(bearer(org.adminKey))
      .send({ contractAddresses: [newAddress()] })
      .expect(200);
  const verify = async () => (await keyedApp.http().get(`${AUDIT}/verify`).set(bearer(auditor)).expect(200)).body;
  const rows = () =>
    sql<Row>(keyedApp, 'select * from "audit_entry" where "organization_id" = ? order by "chain_seq"', [org.id]).then((list) =>
      list.map((row) => ({ ...row, created_at: new Date(row.created_at) })),
    );

  beforeAll(async () => {
    plainApp = await createTestApp();
    keyedApp = await createTestApp({ AUDIT_CHAIN_KEY: key.toString('base64') });
  });

  afterAll(async () => {
    await plainApp.close();
    await keyedApp.close();
  });

  beforeEach(async () => {
    // Entries from before the key was set, then entries written with it.
    org = await createOrganization(plainApp);
    auditor = (await createApiKey(plainApp, org.id, ['auditor'])).key;
    await addContract(plainApp);
    await addContract(keyedApp);
    await addContract(keyedApp);
  });

  it('keeps the plain hashes written before the key, keys every entry after, and verify says where the keyed part begins', async () => {
    const chain = await rows();
    const firstKeyed = chain.length - 2;
    let previous = ZEROS;
    chain.forEach((row, i) => {
      const digest = i < firstKeyed ? createHash('sha256') : createHmac('sha256', key);
      previous = digest.update(previous + canonicalize(exported(row))!).digest('hex');
      expect(row.hash).toBe(previous);
    });
    expect(await verify()).toEqual({ valid: true, entries: chain.length, lastHash: previous, keyedFromEntryId: chain[firstKeyed].id });
    const res = await keyedApp.http().get(`${AUDIT}/export`).set(bearer(auditor)).expect(200);
    expect(res.headers['x-audit-keyed-from-line']).toBe(String(firstKeyed + 1));
  });

  it('fails verify when a forger holding the database but not the key changes a row and recomputes the chain with the published formula', async () => {
    const chain = await rows();
    const wrongKey = randomBytes(32);
    for (const formula of ['sha256', 'hmac-with-a-guessed-key'] as const) {
      chain[1] = { ...chain[1], ip: '203.0.113.66' };
      let previous = ZEROS;
      await asForger(async (query) => {
        for (const row of chain) {
          const digest = formula === 'sha256' ? createHash('sha256') : createHmac('sha256', wrongKey);
          previous = digest.update(previous + canonicalize(exported(row))!).digest('hex');
          await query('update "audit_entry" set "ip" = $1, "hash" = $2 where "id" = $3', [row.ip, previous, row.id]);
        }
        await query('update "audit_chain" set "head_hash" = $1 where "organization_id" = $2', [previous, org.id]);
      });
      const verdict = await verify();
      expect(verdict.valid).toBe(false);
      // Recomputed in plain SHA-256, the part from before the key is consistent again: the first
      // entry that needs the key gives the forgery away. With a guessed key, the very first does.
      expect(verdict.firstBrokenEntryId).toBe(formula === 'sha256' ? chain[chain.length - 2].id : chain[0].id);
    }
  });

  it('fails verify when a forger moves the start of the keyed part past the head to pass off plain hashes', async () => {
    const chain = await rows();
    let previous = ZEROS;
    await asForger(async (query) => {
      for (const row of chain) {
        previous = createHash('sha256')
          .update(previous + canonicalize(exported(row))!)
          .digest('hex');
        await query('update "audit_entry" set "hash" = $1 where "id" = $2', [previous, row.id]);
      }
      await query('update "audit_chain" set "head_hash" = $1, "keyed_from_seq" = "head_seq" + 1 where "organization_id" = $2', [
        previous,
        org.id,
      ]);
    });
    expect((await verify()).valid).toBe(false);
  });

  it('fails verify when a forger deletes the newest entries and moves the head back to the last one left', async () => {
    const chain = await rows();
    const kept = chain[chain.length - 2];
    await asForger(async (query) => {
      await query('delete from "audit_entry" where "id" = $1', [chain[chain.length - 1].id]);
      await query('update "audit_chain" set "head_seq" = $1, "head_hash" = $2 where "organization_id" = $3', [
        kept.chain_seq,
        kept.hash,
        org.id,
      ]);
    });
    expect(await verify()).toMatchObject({ valid: false, firstBrokenEntryId: kept.id });
  });
});
