import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { badRequest, notFound, unprocessable } from '../../common/errors/domain-error';
import { normalizeAddress, parseAddress, toChecksumAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AppConfig } from '../../config/app-config';
import { AuditService } from '../audit/audit.service';
import { NftWhitelistContract } from './nft-whitelist-contract.entity';
import { NftWhitelistContractRepository } from './nft-whitelist-contract.repository';
import { NftWhitelist } from './nft-whitelist.entity';
import { NftWhitelistRepository } from './nft-whitelist.repository';
import { parseContractAddressList } from './whitelist.rules';

export interface WhitelistPage extends Page<string> {
  enabled: boolean;
}

/**
 * Reads and changes go straight to the database, never through a per-process cache: the balance
 * and token queries apply the whitelist in their own SQL, so a change is seen by the very next
 * request on every instance.
 */
@Injectable()
export class WhitelistService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: NftWhitelistRepository,
    private readonly contracts: NftWhitelistContractRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  /** The switch and one page of addresses (EIP-55), in address order. */
  async get(organizationId: string, pageSize: number, pageKey?: string): Promise<WhitelistPage> {
    const after = pageKey ? decodeAddressPageKey(pageKey) : null;
    const enabled = await this.settings.isEnabled(organizationId);
    const rows = await this.contracts.page(organizationId, after, pageSize + 1);
    const page = toPage(
      rows.map((row) => row.contractAddress),
      pageSize,
      (last) => encodePageKey([last]),
    );
    return { enabled, items: page.items.map(toChecksumAddress), nextPageKey: page.nextPageKey };
  }

  async setEnabled(key: ApiKeyPrincipal, enabled: boolean, meta: RequestMeta): Promise<{ enabled: boolean; contractCount: number }> {
    const organizationId = key.organizationId;
    return this.em.transactional(async (em) => {
      const settings = em.getRepository(NftWhitelist);
      const before = await settings.lockForChange(organizationId);
      if (before.enabled !== enabled) await settings.setEnabled(organizationId, enabled);
      this.audit.record(em, {
        organizationId,
        action: 'nftWhitelist.update',
        actor: key,
        meta,
        changes: before.enabled === enabled ? {} : { enabled: { from: before.enabled, to: enabled } },
      });
      const contractCount = await em.getRepository(NftWhitelistContract).countFor(organizationId);
      return { enabled, contractCount };
    });
  }

  /**
   * Adds what is missing, in one statement. The organization's lock makes the limit exact under
   * concurrent requests; going over it rolls the whole request back.
   */
  async addContracts(
    key: ApiKeyPrincipal,
    inputs: readonly unknown[],
    meta: RequestMeta,
  ): Promise<{ added: number; contractCount: number }> {
    const organizationId = key.organizationId;
    const addresses = parseContractAddressList(inputs);
    const limit = this.config.whitelistMaxContracts;
    return this.em.transactional(async (em) => {
      await em.getRepository(NftWhitelist).lockForChange(organizationId);
      const contracts = em.getRepository(NftWhitelistContract);
      const countBefore = await contracts.countFor(organizationId);
      const inserted = await contracts.insertMissing(organizationId, addresses);
      const contractCount = countBefore + inserted.length;
      // Adding nothing never fails, even above a limit that was lowered after the contracts were added.
      if (inserted.length > 0 && contractCount > limit) {
        throw unprocessable(
          'WHITELIST_FULL',
          `The whitelist holds at most ${limit} contracts: it has ${countBefore}, and this request would add ` +
            `${inserted.length} more. Nothing was added.`,
        );
      }
      const added = sortedChecksummed(inserted);
      this.audit.record(em, {
        organizationId,
        action: 'nftWhitelist.contracts.add',
        actor: key,
        meta,
        changes:
          added.length === 0
            ? {}
            : {
                contractAddresses: { from: null, to: added },
                contractCount: { from: countBefore, to: contractCount },
              },
      });
      return { added: added.length, contractCount };
    });
  }

  async deleteContract(key: ApiKeyPrincipal, input: string, meta: RequestMeta): Promise<void> {
    const organizationId = key.organizationId;
    const address = parseAddress(input, 'contractAddress');
    await this.em.transactional(async (em) => {
      await em.getRepository(NftWhitelist).lockForChange(organizationId);
      const contracts = em.getRepository(NftWhitelistContract);
      if (!(await contracts.deleteOne(organizationId, address))) {
        throw notFound('CONTRACT_NOT_WHITELISTED', `Contract ${toChecksumAddress(address)} is not on the whitelist.`);
      }
      const contractCount = await contracts.countFor(organizationId);
      this.audit.record(em, {
        organizationId,
        action: 'nftWhitelist.contracts.delete',
        actor: key,
        meta,
        changes: {
          contractAddress: { from: toChecksumAddress(address), to: null },
          contractCount: { from: contractCount + 1, to: contractCount },
        },
      });
    });
  }
}

function decodeAddressPageKey(pageKey: string): string {
  const [after] = decodePageKey(pageKey, ['string']) as [string];
  if (normalizeAddress(after) !== after) {
    throw badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');
  }
  return after;
}

function sortedChecksummed(addresses: readonly string[]): string[] {
  return [...addresses].sort().map(toChecksumAddress);
}
