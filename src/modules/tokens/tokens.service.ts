import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { conflict, notFound } from '../../common/errors/domain-error';
import { parseAddress } from '../../common/evm-address';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { MediaService } from '../media/media.service';
import type { CreateTokenRequestDto } from './dto/create-token.request.dto';
import type { TokenMetadataRequestDto } from './dto/token-metadata.request.dto';
import { applyMetadataPatch, emptyMetadata, METADATA_FIELDS, TokenMetadata, TokenMetadataInput } from './token-metadata.rules';
import { ChainStandard, Token } from './token.entity';
import { queryRows } from '../../database/raw-sql';
import { ExistingToken, TokenRepository } from './token.repository';
import type { TokenView } from './token.view';
import type { MediaState } from '../media/media.rules';
import { spamViewFromColumn, tokenSpamColumnSql } from '../spam/spam-filter';
import type { SpamView } from '../spam/spam.rules';
import { tokenCreated, tokenUpdated } from '../domain-events/domain-event.catalogue';

/** A token as a chain names it, within one organization. */
export interface ChainTokenKey {
  organizationId: string;
  chainId: number;
  contractAddress: string;
  blockchainTokenId: string;
  standard: ChainStandard;
}

/** The map key of a chain token in findChainTokens / ensureChainTokens answers. */
export const chainTokenKey = (key: Omit<ChainTokenKey, 'standard'>) =>
  `${key.organizationId}/${key.chainId}/${key.contractAddress}/${key.blockchainTokenId}`;

export const tokenNotFound = (tokenId: string) => notFound('TOKEN_NOT_FOUND', `Token ${tokenId} does not exist.`);

@Injectable()
export class TokensService {
  constructor(
    private readonly em: EntityManager,
    private readonly tokens: TokenRepository,
    private readonly events: DomainEventPublisher,
    private readonly media: MediaService,
  ) {}

  /** Records a token; its image, if any, is fetched in the background (`media.status` `pending`). */
  async create(organizationId: string, input: CreateTokenRequestDto): Promise<TokenView> {
    const contractAddress = parseAddress(input.contractAddress, 'contractAddress');
    const { next: metadata } = applyMetadataPatch(emptyMetadata(), metadataInput(input.metadata));
    const token = new Token({ organizationId, contractAddress, blockchainTokenId: input.blockchainTokenId, metadata });
    let media: MediaState;
    try {
      media = await this.em.transactional(async (em) => {
        em.persist(token);
        this.events.publish(em, organizationId, tokenCreated(token));
        // The token's row first: the media row refers to it.
        await em.flush();
        return this.media.imageChanged(em, { id: token.id, organizationId, contractAddress, image: token.image });
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw conflict(
          'TOKEN_ALREADY_EXISTS',
          `A token with blockchainTokenId ${input.blockchainTokenId} of contract ${input.contractAddress} already exists.`,
        );
      }
      throw error;
    }
    return { ...viewOf(token), media, spam: null };
  }

  /** Reads apply the whitelist: a hidden token answers exactly like an unknown one. */
  async getVisible(organizationId: string, tokenId: string): Promise<TokenView> {
    const token = await this.tokens.findVisible(organizationId, tokenId);
    if (!token) throw tokenNotFound(tokenId);
    return token;
  }

  /**
   * Changes a subset of the metadata. The row is locked for the transaction so that the changes
   * reported in the event are exactly what this request changed, even under concurrent updates.
   * A PATCH that changes nothing commits nothing and emits no event. Setting or changing the image
   * starts its fetch over (`media.status` `pending`); clearing it leaves `none`.
   */
  async updateMetadata(organizationId: string, tokenId: string, patch: TokenMetadataRequestDto): Promise<TokenView> {
    return this.em.transactional(async (em) => {
      const token = await em.findOne(Token, { organizationId, id: tokenId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!token) throw tokenNotFound(tokenId);
      const { next, changes } = applyMetadataPatch(metadataOf(token), metadataInput(patch));
      if (Object.keys(changes).length === 0) {
        return { ...viewOf(token), media: await this.media.stateOf(em, token), spam: await spamOf(em, token) };
      }
      Object.assign(token, next);
      const media =
        'image' in changes
          ? await this.media.imageChanged(em, { id: token.id, organizationId, contractAddress: token.contractAddress, image: token.image })
          : await this.media.stateOf(em, token);
      this.events.publish(em, organizationId, tokenUpdated(token, changes));
      return { ...viewOf(token), media, spam: await spamOf(em, token) };
    });
  }

  /** The token within an organization, on the caller's transaction (writes ignore the read-side whitelist). */
  async requireInTransaction(em: EntityManager, organizationId: string, tokenId: string): Promise<Token> {
    const token = await em.getRepository(Token).findInOrganization(organizationId, tokenId);
    if (!token) throw tokenNotFound(tokenId);
    return token;
  }

  /**
   * Which of `tokenIds` belong to the organization, each with its contract address and chain
   * (null for API tokens), read on the caller's transaction in one statement.
   */
  existingInTransaction(em: EntityManager, organizationId: string, tokenIds: string[]): Promise<Map<string, ExistingToken>> {
    return em.getRepository(Token).existingIds(organizationId, tokenIds);
  }

  /** The contract address of each of `tokenIds` that exists (any organizations), read on the caller's transaction in one statement. */
  contractAddressesInTransaction(em: EntityManager, tokenIds: string[]): Promise<Map<string, string>> {
    return em.getRepository(Token).contractAddresses(tokenIds);
  }

  /** The ids of those chain tokens that exist, by chainTokenKey, in one statement (any organizations). */
  async findChainTokens(em: EntityManager, keys: Omit<ChainTokenKey, 'standard'>[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await queryRows<{
      id: string;
      organization_id: string;
      chain_id: string;
      contract_address: string;
      blockchain_token_id: string;
    }>(
      em,
      `select t."id", t."organization_id", t."chain_id"::text as "chain_id", t."contract_address", t."blockchain_token_id"
         from unnest(?::uuid[], ?::bigint[], ?::text[], ?::text[]) as k("organization_id", "chain_id", "contract_address", "blockchain_token_id")
         -- LATERAL: one probe of the unique key per token, whatever the planner guesses of unnest.
         cross join lateral (
           select * from "token" t where t."organization_id" = k."organization_id" and t."chain_id" = k."chain_id"
              and t."contract_address" = k."contract_address" and t."blockchain_token_id" = k."blockchain_token_id"
         ) t`,
      [
        keys.map((k) => k.organizationId),
        keys.map((k) => k.chainId),
        keys.map((k) => k.contractAddress),
        keys.map((k) => k.blockchainTokenId),
      ],
    );
    return new Map(
      rows.map((row) => [
        chainTokenKey({
          organizationId: row.organization_id,
          chainId: Number(row.chain_id),
          contractAddress: row.contract_address,
          blockchainTokenId: row.blockchain_token_id,
        }),
        row.id,
      ]),
    );
  }

  /**
   * The token of each chain key, created on first sight (per organization) with its chain, its
   * standard and metadata `pending` (the metadata worker fills it in), each new one with the `nft`
   * `create` webhook; all in the caller's transaction, in three statements whatever the count.
   * Concurrent callers creating the same token wait on its unique key, then both see one token.
   * Answers by chainTokenKey; `created` lists the ids of the tokens this call created.
   */
  async ensureChainTokens(em: EntityManager, keys: ChainTokenKey[]): Promise<Map<string, string>> {
    return (await this.ensureChainTokensReporting(em, keys)).tokens;
  }

  /**
   * Every organization's tokens of one chain contract (id and organization), read on `em`: the
   * spam module tells each holder organization about a change of the contract's classification.
   */
  async chainTokensOf(
    em: EntityManager,
    chainId: number,
    contractAddress: string,
    organizationId?: string,
  ): Promise<{ id: string; organizationId: string }[]> {
    const rows = await queryRows<{ id: string; organization_id: string }>(
      em,
      `select t."id", t."organization_id" from "token" t
        where t."chain_id" = ? and t."contract_address" = ? ${organizationId === undefined ? '' : 'and t."organization_id" = ?'}
        order by t."organization_id", t."id"`,
      organizationId === undefined ? [chainId, contractAddress] : [chainId, contractAddress, organizationId],
    );
    return rows.map((row) => ({ id: row.id, organizationId: row.organization_id }));
  }

  /** ensureChainTokens, also telling which tokens it created. */
  async ensureChainTokensReporting(em: EntityManager, keys: ChainTokenKey[]): Promise<{ tokens: Map<string, string>; created: string[] }> {
    const unique = [...new Map(keys.map((k) => [chainTokenKey(k), k])).values()];
    if (unique.length === 0) return { tokens: new Map(), created: [] };
    const fresh = unique.map((k) => ({ key: k, id: uuidv7() }));
    const inserted = await queryRows<{ id: string; organization_id: string; contract_address: string }>(
      em,
      `insert into "token" ("id", "created_at", "organization_id", "chain_id", "chain_standard", "contract_address", "blockchain_token_id", "metadata_status")
       select k."id", now(), k."organization_id", k."chain_id", k."standard", k."contract_address", k."blockchain_token_id", 'pending'
         from unnest(?::uuid[], ?::uuid[], ?::bigint[], ?::text[], ?::text[], ?::text[])
              with ordinality as k("id", "organization_id", "chain_id", "standard", "contract_address", "blockchain_token_id", "n")
        order by k."n"
       on conflict ("organization_id", "chain_id", "contract_address", "blockchain_token_id") do nothing
       returning "id", "organization_id", "contract_address"`,
      [
        fresh.map((f) => f.id),
        fresh.map((f) => f.key.organizationId),
        fresh.map((f) => f.key.chainId),
        fresh.map((f) => f.key.standard),
        fresh.map((f) => f.key.contractAddress),
        fresh.map((f) => f.key.blockchainTokenId),
      ],
    );
    // Events in the order the tokens were first seen, grouped per organization.
    const byOrganization = new Map<string, typeof inserted>();
    const insertedIds = new Set(inserted.map((row) => row.id));
    for (const f of fresh) {
      if (!insertedIds.has(f.id)) continue;
      const list = byOrganization.get(f.key.organizationId) ?? [];
      list.push({ id: f.id, organization_id: f.key.organizationId, contract_address: f.key.contractAddress });
      byOrganization.set(f.key.organizationId, list);
    }
    for (const [organizationId, rows] of byOrganization) {
      await this.events.publishMany(
        em,
        organizationId,
        rows.map((row) => tokenCreated({ id: row.id, contractAddress: row.contract_address })),
      );
    }
    const tokens =
      inserted.length === unique.length ? new Map(fresh.map((f) => [chainTokenKey(f.key), f.id])) : await this.findChainTokens(em, unique);
    return { tokens, created: fresh.filter((f) => insertedIds.has(f.id)).map((f) => f.id) };
  }
}

/** A token's spam classification as its organization sees it (null for API tokens), read on `em`. */
async function spamOf(em: EntityManager, token: Token): Promise<SpamView | null> {
  if (token.chainId === null) return null;
  const [row] = await queryRows<{ spam: unknown }>(em, `select ${tokenSpamColumnSql('t')} as "spam" from "token" t where t."id" = ?`, [
    token.id,
  ]);
  return spamViewFromColumn(row?.spam);
}

/** A token entity as a read shows it, its media and spam aside. */
function viewOf(token: Token): Omit<TokenView, 'media' | 'spam'> {
  return {
    ...metadataOf(token),
    id: token.id,
    organizationId: token.organizationId,
    contractAddress: token.contractAddress,
    blockchainTokenId: token.blockchainTokenId,
    chainId: token.chainId,
    metadataStatus: token.metadataStatus,
    metadataError: token.metadataError,
  };
}

function metadataOf(token: Token): TokenMetadata {
  return Object.fromEntries(METADATA_FIELDS.map((field) => [field, token[field]])) as TokenMetadata;
}

/** Only the fields the client actually sent (JSON cannot carry undefined, so undefined means absent). */
function metadataInput(dto: TokenMetadataRequestDto | null | undefined): TokenMetadataInput {
  if (!dto) return {};
  const input: Record<string, unknown> = {};
  for (const field of METADATA_FIELDS) {
    if (dto[field] !== undefined) input[field] = dto[field];
  }
  return input;
}
