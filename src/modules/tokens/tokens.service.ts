import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { conflict, notFound } from '../../common/errors/domain-error';
import { parseAddress } from '../../common/evm-address';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import type { CreateTokenRequestDto } from './dto/create-token.request.dto';
import type { TokenMetadataRequestDto } from './dto/token-metadata.request.dto';
import { applyMetadataPatch, emptyMetadata, METADATA_FIELDS, TokenMetadata, TokenMetadataInput } from './token-metadata.rules';
import { Token } from './token.entity';
import { TokenRepository } from './token.repository';
import type { TokenView } from './token.view';

export const tokenNotFound = (tokenId: string) => notFound('TOKEN_NOT_FOUND', `Token ${tokenId} does not exist.`);

@Injectable()
export class TokensService {
  constructor(
    private readonly em: EntityManager,
    private readonly tokens: TokenRepository,
    private readonly events: DomainEventPublisher,
  ) {}

  async create(organizationId: string, input: CreateTokenRequestDto): Promise<Token> {
    const contractAddress = parseAddress(input.contractAddress, 'contractAddress');
    const { next: metadata } = applyMetadataPatch(emptyMetadata(), metadataInput(input.metadata));
    const token = new Token({ organizationId, contractAddress, blockchainTokenId: input.blockchainTokenId, metadata });
    try {
      await this.em.transactional((em) => {
        em.persist(token);
        this.events.publish(em, organizationId, {
          webhookType: 'nft',
          resourceType: 'Token',
          action: 'create',
          resourceId: token.id,
          changes: null,
          contractAddress,
        });
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
    return token;
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
   * A PATCH that changes nothing commits nothing and emits no event.
   */
  async updateMetadata(organizationId: string, tokenId: string, patch: TokenMetadataRequestDto): Promise<Token> {
    return this.em.transactional(async (em) => {
      const token = await em.findOne(Token, { organizationId, id: tokenId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!token) throw tokenNotFound(tokenId);
      const { next, changes } = applyMetadataPatch(metadataOf(token), metadataInput(patch));
      if (Object.keys(changes).length === 0) return token;
      Object.assign(token, next);
      this.events.publish(em, organizationId, {
        webhookType: 'nft',
        resourceType: 'Token',
        action: 'update',
        resourceId: token.id,
        changes,
        contractAddress: token.contractAddress,
      });
      return token;
    });
  }

  /** The token within an organization, on the caller's transaction (writes ignore the read-side whitelist). */
  async requireInTransaction(em: EntityManager, organizationId: string, tokenId: string): Promise<Token> {
    const token = await em.getRepository(Token).findInOrganization(organizationId, tokenId);
    if (!token) throw tokenNotFound(tokenId);
    return token;
  }

  /**
   * Which of `tokenIds` belong to the organization, each with its contract address, read on the
   * caller's transaction in one statement.
   */
  existingInTransaction(em: EntityManager, organizationId: string, tokenIds: string[]): Promise<Map<string, string>> {
    return em.getRepository(Token).existingIds(organizationId, tokenIds);
  }
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
