import { LockMode } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { queryRows } from '../../database/raw-sql';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import type { MediaStatus } from '../media/media.rules';
import { MediaService } from '../media/media.service';
import { applyMetadataPatch, METADATA_FIELDS, TokenMetadata, TokenMetadataInput } from './token-metadata.rules';
import { ChainStandard, Token } from './token.entity';
import { TokensService } from './tokens.service';

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

/**
 * The tokens module's side of fetching chain token metadata (README.md "Following a chain"): the
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
  ) {}

  /**
   * Claims up to `limit` pending chain tokens whose next attempt is due, oldest due first. A claim
   * moves the next attempt `leaseMs` ahead, so concurrent workers (any instance) skip it, and a
   * worker that dies mid-fetch leaves the token due again after the lease.
   */
  async claimDueMetadata(limit: number, leaseMs = 60_000): Promise<DueMetadataToken[]> {
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
      `with due as (
         select "id" from "token"
          where "metadata_status" = 'pending' and "chain_id" is not null
            and ("metadata_next_attempt_at" is null or "metadata_next_attempt_at" <= now())
          order by "metadata_next_attempt_at" nulls first, "id"
          limit ? for update skip locked)
       update "token" t set "metadata_next_attempt_at" = now() + ? * interval '1 millisecond'
         from due where t."id" = due."id"
       returning t."id", t."organization_id", t."chain_id"::text as "chain_id", t."chain_standard", t."contract_address",
                 t."blockchain_token_id", t."metadata_attempts"`,
      [limit, leaseMs],
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
      if (Object.keys(changes).length > 0) {
        this.events.publish(em, token.organizationId, {
          webhookType: 'nft',
          resourceType: 'Token',
          action: 'update',
          resourceId: token.id,
          changes,
          contractAddress: token.contractAddress,
        });
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
   * Asks for a token to be fetched again, now: a chain token's metadata (status `pending`, retries
   * reset) and any token's image, even from a URL fetched before. A token the caller cannot see
   * (unknown, another organization's, hidden by the whitelist) is 404 as on every read; a token
   * recorded through the API has no token URI, so only its image is fetched again.
   */
  async requestMetadataRefresh(
    organizationId: string,
    tokenId: string,
  ): Promise<{ metadataStatus: 'pending' | 'ok'; mediaStatus: MediaStatus }> {
    await this.tokens.getVisible(organizationId, tokenId);
    return this.em.fork().transactional(async (em) => {
      const updated = await queryRows<{ id: string }>(
        em,
        `update "token" set "metadata_status" = 'pending', "metadata_error" = null, "metadata_attempts" = 0, "metadata_next_attempt_at" = null
          where "organization_id" = ? and "id" = ? and "chain_id" is not null
          returning "id"`,
        [organizationId, tokenId],
      );
      const media = await this.media.refresh(em, tokenId);
      return { metadataStatus: updated.length > 0 ? 'pending' : 'ok', mediaStatus: media.status };
    });
  }
}
