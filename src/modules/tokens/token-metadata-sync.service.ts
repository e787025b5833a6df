import { LockMode } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { queryRows } from '../../database/raw-sql';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { SpamInbox } from '../spam/spam-inbox';
import type { MediaStatus } from '../media/media.rules';
import { MediaService } from '../media/media.service';
import { applyMetadataPatch, METADATA_FIELDS, TokenMetadata, TokenMetadataInput } from './token-metadata.rules';
import { ChainStandard, Token } from './token.entity';
import { TokensService } from './tokens.service';
import { tokenUpdated } from '../domain-events/domain-event.catalogue';

/** A chain token whose metadata is due to be fetched, as claimed by one worker. */
export interface DueMetadataToken {
  id: string;
  organizationId: string;
  chainId: number;
  standard: ChainStandard;
  /** Lowercase 0x address. */
  contractAddress: string;
  blockchainTokenId: string;
  /** Failed attempts so far (0 on a first fetch or after a refresh). */
  attempts: number;
}

/** A contract on a chain; the address lowercase, as tokens store it. */
export interface MetadataContract {
  chainId: number;
  contractAddress: string;
}

/** What the claiming worker holds already, and how much of its slots one organization or contract may take. */
export interface MetadataClaimShares {
  /** Tokens being fetched now, per organization id. */
  busyOrganizations?: ReadonlyMap<string, number>;
  /** Tokens being fetched now, per contract. */
  busyContracts?: Iterable<[MetadataContract, number]>;
  /** At most this many tokens of one organization held at once (default: the limit). */
  perOrganization?: number;
  /** At most this many tokens of one contract held at once (default: the limit). */
  perContract?: number;
}

/**
 * How deep into each organization's queue a claim looks. It bounds the work of one claim
 * whatever one organization has pending (each organization's window is read from the claim
 * index in order); tokens further back come forward as those ahead go. Contracts take turns
 * within this window of an organization's queue.
 */
const CANDIDATES_PER_ORGANIZATION = 32;

/**
 * The tokens module's side of fetching chain token metadata (docs/CHAIN.md "Following a chain"): the
 * metadata worker of the chain module claims due tokens here, and writes back what it fetched or
 * why it failed. A token's `metadataStatus` is `pending` while a fetch is due or being retried,
 * `ok` once fetched, `failed` when it cannot succeed or the retries ran out; `metadataError` says
 * why the last attempt failed.
 */
@Injectable()
export class TokenMetadataSyncService {
  constructor(
    private readonly em: EntityManager,
    private readonly tokens: TokensService,
    private readonly events: DomainEventPublisher,
    private readonly media: MediaService,
    private readonly spam: SpamInbox,
  ) {}

  /**
   * Claims up to `limit` pending chain tokens whose next attempt is due, fairly: organizations
   * take turns (one organization's long queue never holds back another's new token), and within
   * an organization its contracts do (one contract's airdrop does not hold back the rest). A token
   * queues behind the tokens its organization and contract already have waiting, in order of due
   * time, tokens never tried first; `shares` caps how many tokens of one organization or contract
   * the caller may hold at once, counting those it is fetching now.
   *
   * A claim moves the next attempt `leaseMs` ahead, so concurrent workers (any instance) skip
   * it, and a worker that dies mid-fetch leaves the token due again after the lease.
   */
  async claimDueMetadata(limit: number, leaseMs = 60_000, shares: MetadataClaimShares = {}): Promise<DueMetadataToken[]> {
    const busyOrganizations = [...(shares.busyOrganizations ?? new Map<string, number>())];
    const busyContracts = [...(shares.busyContracts ?? [])];
    const rows = await queryRows<{
      id: string;
      organization_id: string;
      chain_id: string;
      chain_standard: ChainStandard;
      contract_address: string;
      blockchain_token_id: string;
      metadata_attempts: number;
    }>(
      this.em,
      // The organizations with pending chain tokens, one index probe each (a skip scan), then the
      // first due tokens of each (never tried, then by due time): a bounded set to rank, however
      // long one organization's queue is.
      `with recursive "orgs" as (
         (select "organization_id" from "token"
           where "metadata_status" = 'pending' and "chain_id" is not null
           order by "organization_id" limit 1)
         union all
         select (select t."organization_id" from "token" t
                  where t."metadata_status" = 'pending' and t."chain_id" is not null and t."organization_id" > o."organization_id"
                  order by t."organization_id" limit 1)
           from "orgs" o where o."organization_id" is not null
       ),
       "candidates" as (
         select c.* from "orgs" o cross join lateral (
           select * from (
             (select t."id", t."organization_id", t."chain_id", t."contract_address", t."metadata_next_attempt_at" as "due_at"
                from "token" t
               where t."organization_id" = o."organization_id" and t."metadata_status" = 'pending' and t."chain_id" is not null
                 and t."metadata_next_attempt_at" is null
               order by t."organization_id", t."metadata_next_attempt_at", t."id" limit ?)
             union all
             (select t."id", t."organization_id", t."chain_id", t."contract_address", t."metadata_next_attempt_at" as "due_at"
                from "token" t
               where t."organization_id" = o."organization_id" and t."metadata_status" = 'pending' and t."chain_id" is not null
                 and t."metadata_next_attempt_at" <= now()
               order by t."organization_id", t."metadata_next_attempt_at", t."id" limit ?)
           ) u order by u."due_at" nulls first, u."id" limit ?
         ) c
         where o."organization_id" is not null
       ),
       "by_contract" as (
         select c.*, coalesce(bc."n", 0)
                     + row_number() over (partition by c."chain_id", c."contract_address" order by c."due_at" nulls first, c."id") as "contract_turn"
           from "candidates" c
           left join unnest(?::bigint[], ?::text[], ?::int[]) as bc("chain_id", "contract_address", "n")
             on bc."chain_id" = c."chain_id" and bc."contract_address" = c."contract_address"
       ),
       "by_organization" as (
         select b.*, coalesce(bo."n", 0)
                     + row_number() over (partition by b."organization_id" order by b."contract_turn", b."due_at" nulls first, b."id") as "organization_turn"
           from "by_contract" b
           left join unnest(?::uuid[], ?::int[]) as bo("organization_id", "n") on bo."organization_id" = b."organization_id"
          where b."contract_turn" <= ?
       ),
       "picked" as (
         select "id" from "by_organization" where "organization_turn" <= ?
          order by "organization_turn", "due_at" nulls first, "id" limit ?
       ),
       "claimed" as (
         select t."id" from "token" t join "picked" p on p."id" = t."id"
          where t."metadata_status" = 'pending' and (t."metadata_next_attempt_at" is null or t."metadata_next_attempt_at" <= now())
          for update of t skip locked
       )
       update "token" t set "metadata_next_attempt_at" = now() + ? * interval '1 millisecond'
         from "claimed" where t."id" = "claimed"."id"
       returning t."id", t."organization_id", t."chain_id"::text as "chain_id", t."chain_standard", t."contract_address",
                 t."blockchain_token_id", t."metadata_attempts"`,
      [
        CANDIDATES_PER_ORGANIZATION,
        CANDIDATES_PER_ORGANIZATION,
        CANDIDATES_PER_ORGANIZATION,
        busyContracts.map(([key]) => key.chainId),
        busyContracts.map(([key]) => key.contractAddress),
        busyContracts.map(([, n]) => n),
        busyOrganizations.map(([id]) => id),
        busyOrganizations.map(([, n]) => n),
        shares.perContract ?? limit,
        shares.perOrganization ?? limit,
        limit,
        leaseMs,
      ],
    );
    return rows.map((row) => ({
      id: row.id,
      organizationId: row.organization_id,
      chainId: Number(row.chain_id),
      standard: row.chain_standard,
      contractAddress: row.contract_address,
      blockchainTokenId: row.blockchain_token_id,
      attempts: row.metadata_attempts,
    }));
  }

  /**
   * Puts off the metadata of pending tokens until `until`, without counting an attempt (the
   * fetcher held them back, e.g. their contract's circuit breaker is open); `error` says why.
   */
  async deferMetadata(tokenIds: string[], until: Date, error: string): Promise<void> {
    if (tokenIds.length === 0) return;
    await queryRows(
      this.em,
      `update "token" set "metadata_next_attempt_at" = ?, "metadata_error" = ?
        where "id" = any(?::uuid[]) and "metadata_status" = 'pending'`,
      [until, error, tokenIds],
    );
  }

  /**
   * Puts off every pending token of a contract (every organization's) until `until` at the
   * earliest, without counting an attempt: its circuit breaker opened. `error` says so.
   */
  async pauseContractMetadata(chainId: number, contractAddress: string, until: Date, error: string): Promise<number> {
    const rows = await queryRows<{ id: string }>(
      this.em,
      `update "token" set "metadata_next_attempt_at" = ?, "metadata_error" = ?
        where "chain_id" = ? and "contract_address" = ? and "metadata_status" = 'pending'
          and ("metadata_next_attempt_at" is null or "metadata_next_attempt_at" < ?)
        returning "id"`,
      [until, error, chainId, contractAddress, until],
    );
    return rows.length;
  }

  /**
   * Stores fetched metadata: the given fields replace the token's (null clears), the status
   * becomes `ok`. When a field changed, the `nft` `update` event carries `changes` exactly as a
   * PATCH would; nothing changed, no event. Returns the changed fields.
   */
  async applyFetchedMetadata(tokenId: string, metadata: TokenMetadataInput): Promise<Partial<TokenMetadata>> {
    return this.em.fork().transactional(async (em) => {
      const token = await em.findOne(Token, { id: tokenId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!token) return {};
      const current = Object.fromEntries(METADATA_FIELDS.map((field) => [field, token[field]])) as TokenMetadata;
      const { next, changes } = applyMetadataPatch(current, metadata);
      Object.assign(token, next);
      token.metadataStatus = 'ok';
      token.metadataError = null;
      token.metadataAttempts = 0;
      token.metadataNextAttemptAt = null;
      if ('image' in changes) {
        await this.media.imageChanged(em, {
          id: token.id,
          organizationId: token.organizationId,
          contractAddress: token.contractAddress,
          image: token.image,
        });
      }
      if (token.chainId !== null) {
        await this.spam.tokenMetadataRead(em, {
          chainId: token.chainId,
          contractAddress: token.contractAddress,
          name: token.name,
          description: token.description,
        });
      }
      if (Object.keys(changes).length > 0) {
        this.events.publish(em, token.organizationId, tokenUpdated(token, changes));
      }
      return changes;
    });
  }

  /**
   * Records a failed attempt: the error is shown on the token; with `nextAttemptAt` the token stays
   * `pending` and is claimed again then, without it the token is `failed` until a refresh.
   */
  async recordMetadataFailure(tokenId: string, error: string, nextAttemptAt: Date | null): Promise<void> {
    await queryRows(
      this.em,
      `update "token" set "metadata_status" = ?, "metadata_error" = ?, "metadata_attempts" = "metadata_attempts" + 1,
              "metadata_next_attempt_at" = ?
        where "id" = ? and "metadata_status" = 'pending'`,
      [nextAttemptAt === null ? 'failed' : 'pending', error, nextAttemptAt, tokenId],
    );
  }

  /**
   * Asks for a token to be fetched again: a chain token's metadata (status `pending`, retries
   * reset, due now) and any token's image, even from a URL fetched before. Due now, not "never
   * tried": the token queues in its organization's turn behind the tokens already waiting, so
   * refreshing again and again never puts it ahead of other organizations' tokens. A token the
   * caller cannot see (unknown, another organization's, hidden by the whitelist) is 404 as on every
   * read; a token recorded through the API has no token URI, so only its image is fetched again.
   */
  async requestMetadataRefresh(
    organizationId: string,
    tokenId: string,
  ): Promise<{ metadataStatus: 'pending' | 'ok'; mediaStatus: MediaStatus }> {
    await this.tokens.getVisible(organizationId, tokenId);
    return this.em.fork().transactional(async (em) => {
      const updated = await queryRows<{ id: string }>(
        em,
        `update "token" set "metadata_status" = 'pending', "metadata_error" = null, "metadata_attempts" = 0, "metadata_next_attempt_at" = now()
          where "organization_id" = ? and "id" = ? and "chain_id" is not null
          returning "id"`,
        [organizationId, tokenId],
      );
      const media = await this.media.refresh(em, tokenId);
      return { metadataStatus: updated.length > 0 ? 'pending' : 'ok', mediaStatus: media.status };
    });
  }
}
