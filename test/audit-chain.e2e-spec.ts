import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { AuditPruner } from '../src/modules/audit/audit-pruner.service';
import { AuditService } from '../src/modules/audit/audit.service';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { newAddress, sql } from './support/nft';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

const AUDIT = '/api/organization/v1/current-organization/audit-log';
const ZEROS = '0'.repeat(64);

/** The verifier an auditor would write from docs/API.md "Audit log" alone: no service code. */
function recomputeChain(lines: Record<string, unknown>[], previous = ZEROS): { ok: boolean; brokenAt?: string; last: string } {
  let prev = previous;
  for (const line of lines) {
    const { hash, ...entry } = line;
    const expected = createHash('sha256')
      .update(prev + canonicalize(entry)!)
      .digest('hex');
    if (hash !== expected) return { ok: false, brokenAt: line.id as string, last: prev };
    prev = expected;
  }
  return { ok: true, last: prev };
}

/**
 * What someone holding the database as its owner does to get past the immutability trigger: turn
 * triggers off for the session, then edit. Verify must still see it.
 */
async function tamper(query: string, params: unknown[] = []): Promise<void> {
  const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('set session_replication_role = replica');
    let n = 0;
    await client.query(
      query.replace(/\?/g, () => `$${(n += 1)}`),
      params,
    );
  } finally {
    await client.end();
  }
}

/** Collects a streamed body as text, whatever its content type. */
const asText = (res: import('superagent').Response, cb: (err: Error | null, body: string) => void) => {
  const stream = res as unknown as NodeJS.ReadableStream & { setEncoding: (e: string) => void };
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (text += chunk));
  stream.on('end', () => cb(null, text));
};

const parseNdjson = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('tamper-evident audit log', () => {
  let t: TestApp;
  let org: TestOrganization;
  let auditorKey: string;

  const addContract = (key = org.adminKey) =>
    t
      .http()
      .post('/api/organization/v1/current-organization/nft-whitelist/contracts')
      .set(bearer(key))
      .send({ contractAddresses: [newAddress()] });
  const verify = () => t.http().get(`${AUDIT}/verify`).set(bearer(auditorKey));
  const exportAll = async (query = '', key = auditorKey, app = t) => {
    const res = await app.http().get(`${AUDIT}/export${query}`).set(bearer(key)).buffer(true).parse(asText);
    return { res, lines: parseNdjson(res.body as string) };
  };
  const exportOf = async (key: string) => (await exportAll('', key)).lines;
  const chainRows = (organizationId = org.id) =>
    sql<{ id: string; chain_seq: string; hash: string; changes: unknown }>(
      t,
      'select "id", "chain_seq", "hash", "changes" from "audit_entry" where "organization_id" = ? order by "chain_seq"',
      [organizationId],
    );

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    auditorKey = (await createApiKey(t, org.id, ['auditor'])).key;
    for (let i = 0; i < 3; i += 1) await addContract().expect(200);
  });
  afterAll(() => t.close());

  describe('the auditor role', () => {
    it('reads every administration page, verifies and exports', async () => {
      for (const path of [
        AUDIT,
        `${AUDIT}/verify`,
        '/api/organization/v1/current-organization/webhook-config',
        '/api/organization/v1/current-organization/nft-whitelist',
        '/api/organization/v1/current-organization/api-keys',
        '/api/organization/v1/current-organization/webhooks',
      ]) {
        const res = await t.http().get(path).set(bearer(auditorKey));
        expect([path, res.status]).toEqual([path, 200]);
      }
      const { res } = await exportAll();
      expect(res.status).toBe(200);
    });

    it('changes nothing: every write of the organization is refused with 403', async () => {
      const before = await chainRows();
      expectProblem(await addContract(auditorKey), 403, 'FORBIDDEN');
      expectProblem(
        await t.http().patch('/api/organization/v1/current-organization/nft-whitelist').set(bearer(auditorKey)).send({ enabled: true }),
        403,
        'FORBIDDEN',
      );
      expectProblem(
        await t
          .http()
          .post('/api/organization/v1/current-organization/api-keys')
          .set(bearer(auditorKey))
          .send({ name: 'x', roles: ['admin'] }),
        403,
        'FORBIDDEN',
      );
      expect(await chainRows()).toEqual(before);
    });

    it('is a role an organization admin can issue, like the operator', async () => {
      const res = await t
        .http()
        .post('/api/organization/v1/current-organization/api-keys')
        .set(bearer(org.adminKey))
        .send({ name: 'external auditor', roles: ['auditor'] })
        .expect(201);
      expect(res.body.roles).toEqual(['auditor']);
      await t.http().get(`${AUDIT}/verify`).set(bearer(res.body.key)).expect(200);
    });

    it('reads no wallet or token data (that is the read role)', async () => {
      expectProblem(await t.http().get('/v1/wallets').set(bearer(auditorKey)), 403, 'FORBIDDEN');
    });

    it('verify and export stay closed to read and write keys, open to admin', async () => {
      const read = (await createApiKey(t, org.id, ['read'])).key;
      expectProblem(await t.http().get(`${AUDIT}/verify`).set(bearer(read)), 403, 'FORBIDDEN');
      expectProblem(await t.http().get(`${AUDIT}/export`).set(bearer(read)), 403, 'FORBIDDEN');
      await t.http().get(`${AUDIT}/verify`).set(bearer(org.adminKey)).expect(200);
    });
  });

  describe('the chain', () => {
    it('links every entry, operator actions included, and verify says so', async () => {
      const rows = await chainRows();
      expect(rows.map((r) => Number(r.chain_seq))).toEqual(rows.map((_, i) => i + 1));
      const res = await verify().expect(200);
      expect(res.body).toEqual({ valid: true, entries: rows.length, lastHash: rows[rows.length - 1].hash });
      // The organization was created and its keys issued by the operator: the first links of its chain.
      const { lines } = await exportAll();
      expect(lines[0]).toMatchObject({ action: 'organization.create', keyPrefix: 'operator' });
      expect(lines.filter((l) => l.keyPrefix === 'operator').length).toBeGreaterThanOrEqual(3);
    });

    it('exports NDJSON that verifies offline, and the list shows the same hashes', async () => {
      const { res, lines } = await exportAll();
      expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
      expect(res.headers['x-audit-previous-hash']).toBe(ZEROS);
      const offline = recomputeChain(lines);
      expect(offline).toEqual({ ok: true, last: lines[lines.length - 1].hash });
      expect(Object.keys(lines[0]).sort()).toEqual(
        ['action', 'apiKeyId', 'changes', 'createdAtUtc', 'hash', 'id', 'ip', 'keyPrefix', 'requestId'].sort(),
      );
      const list = await t.http().get(`${AUDIT}?pageSize=1000`).set(bearer(auditorKey)).expect(200);
      expect([...list.body.entries].reverse()).toEqual(lines);
    });

    it('exports a time window that still verifies from the hash it links to', async () => {
      const { lines: all } = await exportAll();
      const since = all[2].createdAtUtc as string;
      const until = all[all.length - 1].createdAtUtc as string;
      const { res, lines } = await exportAll(`?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((l) => (l.createdAtUtc as string) >= since && (l.createdAtUtc as string) < until)).toBe(true);
      expect(recomputeChain(lines, res.headers['x-audit-previous-hash']).ok).toBe(true);
      expect(res.headers['x-audit-previous-hash']).toBe(all[all.indexOf(all.find((l) => l.id === lines[0].id)!) - 1].hash);
    });

    it('refuses a malformed or inverted window with 400 and streams nothing', async () => {
      expectProblem(await t.http().get(`${AUDIT}/export?since=yesterday`).set(bearer(auditorKey)), 400, 'VALIDATION_FAILED');
      expectProblem(
        await t.http().get(`${AUDIT}/export?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z`).set(bearer(auditorKey)),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('stays one chain under concurrent writes, from several keys and the operator at once', async () => {
      const other = (await createApiKey(t, org.id, ['admin'])).key;
      const before = (await chainRows()).length;
      const writes = Array.from({ length: 24 }, (_, i) => {
        if (i % 3 === 0) return addContract(other);
        if (i % 3 === 1) return addContract();
        return t
          .http()
          .post(`/admin/v1/organizations/${org.id}/api-keys`)
          .set(bearer(OPERATOR_KEY))
          .send({ name: `k${i}`, roles: ['read'] });
      });
      const results = await Promise.all(writes);
      expect(results.map((r) => r.status).filter((s) => s >= 300)).toEqual([]);
      const rows = await chainRows();
      expect(rows.length).toBe(before + 24);
      expect(rows.map((r) => Number(r.chain_seq))).toEqual(rows.map((_, i) => i + 1));
      expect((await verify().expect(200)).body).toMatchObject({ valid: true, entries: rows.length });
      const { lines } = await exportAll();
      expect(recomputeChain(lines).ok).toBe(true);
    });

    it('keeps other organizations out of this chain', async () => {
      const stranger = await createOrganization(t);
      await t
        .http()
        .post('/api/organization/v1/current-organization/nft-whitelist/contracts')
        .set(bearer(stranger.adminKey))
        .send({ contractAddresses: [newAddress()] })
        .expect(200);
      const { lines } = await exportAll();
      const strangers = (await chainRows(stranger.id)).map((r) => r.id);
      expect(strangers.length).toBeGreaterThan(0);
      expect(lines.filter((l) => strangers.includes(l.id as string))).toEqual([]);
      expect((await verify().expect(200)).body.valid).toBe(true);
    });
  });

  describe('tampering in the database', () => {
    let victim: TestOrganization;
    let victimAuditor: string;
    const victimVerify = () => t.http().get(`${AUDIT}/verify`).set(bearer(victimAuditor)).expect(200);

    beforeEach(async () => {
      victim = await createOrganization(t);
      victimAuditor = (await createApiKey(t, victim.id, ['auditor'])).key;
      for (let i = 0; i < 4; i += 1) await addContract(victim.adminKey).expect(200);
      expect((await victimVerify()).body.valid).toBe(true);
    });

    it('an edited entry breaks the chain at that entry', async () => {
      const rows = await chainRows(victim.id);
      const target = rows[3];
      await tamper(`update "audit_entry" set "changes" = '{"enabled":{"from":false,"to":true}}' where "id" = ?`, [target.id]);
      expect((await victimVerify()).body).toEqual({ valid: false, entries: rows.length, firstBrokenEntryId: target.id });
    });

    it('an edit whose own hash is recomputed still breaks the entry after it', async () => {
      const rows = await chainRows(victim.id);
      const lines = await exportOf(victimAuditor);
      const { hash: _old, ...original } = lines[2];
      const body = { ...original, ip: '203.0.113.9' };
      const forgedHash = createHash('sha256')
        .update((lines[1].hash as string) + canonicalize(body)!)
        .digest('hex');
      await tamper(`update "audit_entry" set "ip" = '203.0.113.9', "hash" = ? where "id" = ?`, [forgedHash, rows[2].id]);
      expect((await victimVerify()).body).toEqual({ valid: false, entries: rows.length, firstBrokenEntryId: rows[3].id });
    });

    it('a deleted entry breaks the chain at the entry after it', async () => {
      const rows = await chainRows(victim.id);
      await tamper('delete from "audit_entry" where "id" = ?', [rows[2].id]);
      expect((await victimVerify()).body).toEqual({ valid: false, entries: rows.length - 1, firstBrokenEntryId: rows[3].id });
    });

    it('deleting the newest entries shows as a cut after the last one left', async () => {
      const rows = await chainRows(victim.id);
      await tamper('delete from "audit_entry" where "id" = ?', [rows[rows.length - 1].id]);
      expect((await victimVerify()).body).toEqual({
        valid: false,
        entries: rows.length - 1,
        firstBrokenEntryId: rows[rows.length - 2].id,
      });
    });

    it('reordered entries break the chain at the first one moved', async () => {
      const rows = await chainRows(victim.id);
      const [a, b] = [rows[1], rows[4]];
      await tamper('update "audit_entry" set "chain_seq" = -1 where "id" = ?', [a.id]);
      await tamper('update "audit_entry" set "chain_seq" = ? where "id" = ?', [a.chain_seq, b.id]);
      await tamper('update "audit_entry" set "chain_seq" = ? where "id" = ?', [b.chain_seq, a.id]);
      expect((await victimVerify()).body).toEqual({ valid: false, entries: rows.length, firstBrokenEntryId: b.id });
    });

    it('an exported line edited after the export fails offline verification at that line', async () => {
      const lines = await exportOf(victimAuditor);
      expect(recomputeChain(lines).ok).toBe(true);
      lines[2] = { ...lines[2], action: 'nothing.happened' };
      expect(recomputeChain(lines)).toMatchObject({ ok: false, brokenAt: lines[2].id });
    });
  });

  describe('retention', () => {
    it('prunes entries past AUDIT_RETENTION in batches, keeps a checkpoint, and verify starts from it', async () => {
      const retention = 3_600_000;
      const app = await createTestApp({ AUDIT_RETENTION: '1h', AUDIT_PRUNE_INTERVAL: '1h' });
      try {
        const keep = await createOrganization(app);
        const auditor = (await createApiKey(app, keep.id, ['auditor'])).key;
        const add = () =>
          app
            .http()
            .post('/api/organization/v1/current-organization/nft-whitelist/contracts')
            .set(bearer(keep.adminKey))
            .send({ contractAddresses: [newAddress()] })
            .expect(200);
        for (let i = 0; i < 3; i += 1) await add();
        const old = await chainRows(keep.id);
        // "Now" is one retention period after the last old entry: everything before it is past retention.
        const [{ t: boundary }] = await sql<{ t: Date }>(app, 'select now() as t');
        await sql(app, 'select pg_sleep(0.01)');
        for (let i = 0; i < 2; i += 1) await add();

        const pruner = app.app.get(AuditPruner);
        // While another process holds the pruning lock, this one deletes nothing.
        const other = new Client({ connectionString: app.config.databaseUrl });
        await other.connect();
        try {
          await other.query('select pg_advisory_lock(7341017)');
          expect(await pruner.prune(new Date(new Date(boundary).getTime() + retention))).toBeNull();
          expect(await chainRows(keep.id)).toHaveLength(old.length + 2);
        } finally {
          await other.end();
        }
        const deleted = await pruner.prune(new Date(new Date(boundary).getTime() + retention));
        expect(deleted).toBeGreaterThanOrEqual(old.length);

        const rest = await chainRows(keep.id);
        expect(rest.map((r) => r.id)).toEqual(expect.not.arrayContaining(old.map((r) => r.id)));
        expect(rest).toHaveLength(2);
        const [checkpoint] = await sql<{ checkpoint_seq: string; checkpoint_hash: string }>(
          app,
          'select "checkpoint_seq", "checkpoint_hash" from "audit_chain" where "organization_id" = ?',
          [keep.id],
        );
        expect(checkpoint).toEqual({ checkpoint_seq: String(old.length), checkpoint_hash: old[old.length - 1].hash });

        const res = await app.http().get(`${AUDIT}/verify`).set(bearer(auditor)).expect(200);
        expect(res.body).toEqual({ valid: true, entries: 2, lastHash: rest[1].hash });
        const exported = await exportAll('', auditor, app);
        expect(exported.res.headers['x-audit-previous-hash']).toBe(checkpoint.checkpoint_hash);
        expect(recomputeChain(exported.lines, checkpoint.checkpoint_hash).ok).toBe(true);

        // A second pass finds nothing more, and new entries keep chaining from the head.
        expect(await pruner.prune(new Date(new Date(boundary).getTime() + retention))).toBe(0);
        await add();
        expect((await app.http().get(`${AUDIT}/verify`).set(bearer(auditor)).expect(200)).body).toMatchObject({ valid: true, entries: 3 });
      } finally {
        await app.close();
      }
    });

    it('fails an export whose remaining entries retention prunes under it, rather than send a chain with a hole', async () => {
      const orgId = '01930000-0000-7000-8000-00000000e0a1';
      await sql(t, `insert into "organization" ("id", "created_at", "name") values (?, '2020-01-01T00:00:00Z', 'Old')`, [orgId]);
      // 1,500 entries of 2020: more than one page of the export.
      await sql(
        t,
        `insert into "audit_entry" ("id", "created_at", "organization_id", "action", "key_prefix", "changes", "chain_seq", "hash")
         select ('01930000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, '2020-01-01T00:00:00Z'::timestamptz + i * interval '1 ms',
                ?, 'old.thing', 'operator', '{}'::jsonb, i, encode(sha256(i::text::bytea), 'hex')
           from generate_series(1, 1500) as i`,
        [orgId],
      );
      await sql(
        t,
        `insert into "audit_chain" ("organization_id", "head_seq", "head_hash") values (?, 1500, encode(sha256('1500'::bytea), 'hex'))`,
        [orgId],
      );
      const retentionMs = t.config.audit.retentionMs;
      const pruner = t.app.get(AuditPruner);
      const sent: number[] = [];
      const exporting = t.app.get(AuditService).export(
        orgId,
        { since: null, until: null },
        () => undefined,
        async (page) => {
          sent.push(...page.map((e) => e.seq));
          // Between two pages, a worker prunes everything of 2020.
          if (sent.length === page.length) await pruner.prune(new Date(Date.parse('2020-01-02T00:00:00Z') + retentionMs));
          return true;
        },
      );
      await expect(exporting).rejects.toThrow(/pruned while this export/);
      expect(sent).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    });
  });
});
