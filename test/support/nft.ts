import { MikroORM } from '@mikro-orm/core';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { bearer } from './factories';
import type { TestApp } from './test-app';

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const UTC_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
export const UNKNOWN_ID = '01930000-0000-7000-8000-000000000000';

/**
 * A UUIDv7 made in SQL at the moment `at` (default: the statement's clock), for rows a suite writes
 * straight to the history tables. Those are partitioned by id, one range of UUIDv7s per day: a
 * random UUID's first 48 bits land on a random far-off day in the default partition, and making
 * that day's partition later (retention, days ahead) then fails on it.
 */
export const uuid7Sql = (at = 'clock_timestamp()') =>
  `(lpad(to_hex(floor(extract(epoch from ${at}) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid`;

export const METADATA_KEYS = [
  'name',
  'description',
  'image',
  'animationUrl',
  'externalUrl',
  'backgroundColor',
  'editionId',
  'totalEdition',
  'creatorName',
  'creatorImageUrl',
  'creatorExternalPageUrl',
];

/** A fresh random contract address, lowercase. */
export const newAddress = () => `0x${randomBytes(20).toString('hex')}`;
export const checksum = (address: string) => getAddress(address);

let blockchainTokenCounter = 0;
export const nextBlockchainTokenId = () => String(++blockchainTokenCounter);

/** The calls of the NFT data API under one key, returning the bodies of successful answers. */
export function nftApi(t: TestApp, key: string) {
  const auth = bearer(key);
  return {
    auth,
    async wallet(body: Record<string, unknown> = {}) {
      return (await t.http().post('/v1/wallets').set(auth).send(body).expect(201)).body;
    },
    async token(body: Record<string, unknown> = {}) {
      const res = await t
        .http()
        .post('/v1/tokens')
        .set(auth)
        .send({ contractAddress: newAddress(), blockchainTokenId: nextBlockchainTokenId(), ...body })
        .expect(201);
      return res.body;
    },
    async move(body: Record<string, unknown>) {
      return (await t.http().post('/v1/transactions').set(auth).send(body).expect(201)).body;
    },
    async mint(tokenId: string, toWalletId: string, amount = '1') {
      return this.move({ tokenId, toWalletId, amount });
    },
    balancesPage(walletId: string, query: Record<string, unknown> = {}) {
      return t.http().get(`/v2/wallets/${walletId}/nft-balances`).query(query).set(auth);
    },
    /** Every balance of the wallet, read page by page. */
    async allBalances(walletId: string, pageSize = 1000): Promise<{ tokenId: string; amount: string }[]> {
      const all: { tokenId: string; amount: string }[] = [];
      let pageKey: string | null = null;
      do {
        const res: { body: { nftTokenBalances: { tokenId: string; amount: string }[]; nextPageKey: string | null } } =
          await this.balancesPage(walletId, pageKey ? { pageSize, pageKey } : { pageSize }).expect(200);
        all.push(...res.body.nftTokenBalances);
        pageKey = res.body.nextPageKey;
      } while (pageKey);
      return all;
    },
    async amountOf(walletId: string, tokenId: string): Promise<string> {
      const balances = await this.allBalances(walletId);
      return balances.find((b) => b.tokenId === tokenId)?.amount ?? '0';
    },
  };
}

/** Plain SQL against the app's database, to check what was (or was not) written. */
export async function sql<T = Record<string, unknown>>(t: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return t.app.get(MikroORM).em.getConnection().execute<T[]>(query, params);
}

export async function eventsFor(t: TestApp, resourceId: string) {
  return sql<{
    organization_id: string;
    webhook_type: string;
    resource_type: string;
    resource_id: string;
    action: string;
    changes: unknown;
    created_at: Date;
  }>(t, 'select * from "domain_event" where "resource_id" = ? order by "id"', [resourceId]);
}

/**
 * The organization's events, less those announcing how a token image's fetch ended (`changes.media`):
 * the media worker writes those in the background whenever a fetch ends, not the request a test counts for.
 */
export async function eventCount(t: TestApp, organizationId: string): Promise<number> {
  const [row] = await sql<{ n: string }>(
    t,
    `select count(*)::text as n from "domain_event" where "organization_id" = ? and ("changes"::jsonb -> 'media') is null`,
    [organizationId],
  );
  return Number(row.n);
}

/**
 * `perResource` updates of each resource, committed at once as a bulk import would, in event
 * order step by step (step 1 of every resource, then step 2, …); each event's changes name its step.
 */
export async function insertUpdates(t: TestApp, organizationId: string, resources: string[], perResource: number): Promise<void> {
  await t.app
    .get(MikroORM)
    .em.fork()
    .getConnection()
    .execute(
      `insert into domain_event (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, changes)
       select ${uuid7Sql()}, now() + ((s * 100 + r.k) * interval '1 microsecond'), ?, 'custodialAccount', 'Wallet', r.id, 'update',
              jsonb_build_object('step', s)
         from generate_series(1, ?) s cross join unnest(?::uuid[]) with ordinality as r(id, k)`,
      [organizationId, perResource, `{${resources.join(',')}}`],
    );
}
