import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { badRequest } from '../../common/errors/domain-error';
import { AuditService } from '../audit/audit.service';
import { ChainClients } from '../chain/chain-clients';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { tokenUpdated } from '../domain-events/domain-event.catalogue';
import { ContractTokens } from './contract-tokens';
import { SpamInbox } from './spam-inbox';
import { SpamOverrideRow, SpamRepository } from './spam.repository';
import { mergeHits, NO_HITS, RuleHits, sameSpamView, SpamView, spamViewOf } from './spam.rules';

/** The map key of viewsOf answers. */
export const spamKey = (key: { chainId: number; contractAddress: string }) => `${key.chainId}/${key.contractAddress.toLowerCase()}`;

/**
 * Spam classification of chain contracts (docs/API.md "Activity, collections and spam"): the rules' verdicts, each
 * organization's overrides, and the `nft` `update` webhooks that tell organizations about a change.
 * Other modules read it through viewsOf (or the SQL of spam-filter.ts inside their own queries)
 * and report chain transactions through judgeTransaction (or SpamInbox on their transaction).
 */
@Injectable()
export class SpamService {
  constructor(
    private readonly em: EntityManager,
    private readonly repository: SpamRepository,
    private readonly inbox: SpamInbox,
    private readonly tokens: ContractTokens,
    private readonly events: DomainEventPublisher,
    private readonly chains: ChainClients,
    private readonly audit: AuditService,
  ) {}

  /**
   * How one organization sees each (chainId, contractAddress), by spamKey, in one statement: its
   * override with the rules' reasons, or the rules' verdict; a contract never judged is not spam.
   */
  async viewsOf(organizationId: string, keys: { chainId: number; contractAddress: string }[]): Promise<Map<string, SpamView>> {
    const unique = [
      ...new Map(keys.map((k) => [spamKey(k), { chainId: k.chainId, contractAddress: k.contractAddress.toLowerCase() }])).values(),
    ];
    const states = await this.repository.statesOf(organizationId, unique);
    return new Map(states.map((s) => [spamKey(s), spamViewOf(s.hits, s.override)]));
  }

  /**
   * Reports that chain transaction `transactionHash` of `chainId` moved NFTs the service records:
   * its whole receipt is judged in the background (massAirdrop), once. With `em`, queued on that
   * transaction (so it is judged only if the caller commits).
   */
  async judgeTransaction(chainId: number, transactionHash: string, em?: EntityManager): Promise<void> {
    if (em) return this.inbox.transactionsRecorded(em, [{ chainId, transactionHash }]);
    await this.em.fork().transactional((tx) => this.inbox.transactionsRecorded(tx, [{ chainId, transactionHash }]));
  }

  /**
   * Records what the rules found on a contract. Its first classification is recorded as is and
   * tells no one (the tokens' first state); afterwards a rule firing for the first time changes
   * what every organization holding its tokens sees, and each gets the `nft` `update` webhook per
   * token whose view changed, with `changes: {spam}`, in the same transaction.
   */
  async recordRuleHits(em: EntityManager, chainId: number, contractAddress: string, found: Partial<RuleHits>): Promise<void> {
    const contract = contractAddress.toLowerCase();
    if (await this.repository.classifyFirst(em, chainId, contract, mergeHits(NO_HITS, found))) return;
    const before = (await this.repository.lockHits(em, chainId, contract)) ?? NO_HITS;
    const after = mergeHits(before, found);
    if (after.massAirdrop === before.massAirdrop && after.lureMetadata === before.lureMetadata) return;
    await this.repository.updateHits(em, chainId, contract, after);
    const overrides = await this.repository.overridesOf(em, chainId, contract);
    await this.tell(em, chainId, contract, (organizationId) => {
      const override = overrides.get(organizationId) ?? null;
      return { before: spamViewOf(before, override), after: spamViewOf(after, override) };
    });
  }

  /** Sets the organization's verdict on a contract of a followed chain; its tokens' holders see the change at once. */
  async putOverride(key: ApiKeyPrincipal, row: SpamOverrideRow, meta: RequestMeta): Promise<SpamOverrideRow> {
    this.assertFollowed(row.chainId);
    const organizationId = key.organizationId;
    await this.em.transactional(async (em) => {
      const previous = await this.repository.lockOverride(em, organizationId, row.chainId, row.contractAddress);
      await this.repository.putOverride(em, organizationId, row);
      this.audit.record(em, {
        organizationId,
        action: 'spamOverride.put',
        actor: key,
        meta,
        changes: { [`${row.chainId}/${row.contractAddress}`]: { from: previous, to: row.isSpam } },
      });
      const hits = await this.repository.hits(em, row.chainId, row.contractAddress);
      await this.tell(
        em,
        row.chainId,
        row.contractAddress,
        () => ({ before: spamViewOf(hits, previous), after: spamViewOf(hits, row.isSpam) }),
        organizationId,
      );
    });
    return row;
  }

  async deleteOverride(key: ApiKeyPrincipal, chainId: number, contractAddress: string, meta: RequestMeta): Promise<void> {
    const organizationId = key.organizationId;
    await this.em.transactional(async (em) => {
      const previous = await this.repository.lockOverride(em, organizationId, chainId, contractAddress);
      if (previous === null || !(await this.repository.deleteOverride(em, organizationId, chainId, contractAddress))) {
        throw notFound('SPAM_OVERRIDE_NOT_FOUND', `No spam override for contract ${contractAddress} of chain ${chainId}.`);
      }
      this.audit.record(em, {
        organizationId,
        action: 'spamOverride.delete',
        actor: key,
        meta,
        changes: { [`${chainId}/${contractAddress}`]: { from: previous, to: null } },
      });
      const hits = await this.repository.hits(em, chainId, contractAddress);
      await this.tell(
        em,
        chainId,
        contractAddress,
        () => ({ before: spamViewOf(hits, previous), after: spamViewOf(hits, null) }),
        organizationId,
      );
    });
  }

  async overrides(organizationId: string, pageSize: number, pageKey: string | undefined): Promise<Page<SpamOverrideRow>> {
    let after: { chainId: number; contractAddress: string } | null = null;
    if (pageKey !== undefined) {
      const [chainId, contractAddress] = decodePageKey(pageKey, ['number', 'string']) as [number, string];
      if (!Number.isSafeInteger(chainId) || !/^0x[0-9a-f]{40}$/.test(contractAddress)) {
        throw badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');
      }
      after = { chainId, contractAddress };
    }
    const rows = await this.repository.overridePage(organizationId, after, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.chainId, last.contractAddress]));
  }

  private assertFollowed(chainId: number): void {
    if (!this.chains.has(chainId)) throw unprocessable('UNKNOWN_CHAIN', `Chain ${chainId} is not followed by this service.`);
  }

  /**
   * The `nft` `update` webhook, `changes: {spam}`, for every token of the contract (of
   * `organizationId` only, when given) whose organization's view changed.
   */
  private async tell(
    em: EntityManager,
    chainId: number,
    contractAddress: string,
    viewsFor: (organizationId: string) => { before: SpamView; after: SpamView },
    organizationId?: string,
  ): Promise<void> {
    const tokens = await this.tokens.chainTokensOf(em, chainId, contractAddress, organizationId);
    const byOrganization = new Map<string, string[]>();
    for (const token of tokens) byOrganization.set(token.organizationId, [...(byOrganization.get(token.organizationId) ?? []), token.id]);
    for (const [org, tokenIds] of byOrganization) {
      const { before, after } = viewsFor(org);
      if (sameSpamView(before, after)) continue;
      await this.events.publishMany(
        em,
        org,
        tokenIds.map((id) =>
          tokenUpdated({ id, contractAddress }, { spam: { isSpam: after.isSpam, reasons: [...after.reasons], source: after.source } }),
        ),
      );
    }
  }
}
