import { EntityManager } from '@mikro-orm/postgresql';
import { parseAddress } from '../../common/evm-address';
import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import type { CreateWalletRequestDto } from './dto/create-wallet.request.dto';
import { Wallet } from './wallet.entity';
import { WalletAtAddress, WalletRepository } from './wallet.repository';
import { parseWalletAddress } from './wallet.rules';

export const walletNotFound = (walletId: string) => notFound('WALLET_NOT_FOUND', `Wallet ${walletId} does not exist.`);

@Injectable()
export class WalletsService {
  constructor(
    private readonly em: EntityManager,
    private readonly wallets: WalletRepository,
    private readonly events: DomainEventPublisher,
  ) {}

  async create(organizationId: string, input: CreateWalletRequestDto): Promise<Wallet> {
    const address = input.address == null ? null : parseWalletAddress(input.address);
    const wallet = new Wallet({ organizationId, name: input.name ?? null, address });
    await this.em.transactional((em) => {
      em.persist(wallet);
      this.events.publish(em, organizationId, {
        webhookType: 'custodialAccount',
        resourceType: 'Wallet',
        action: 'create',
        resourceId: wallet.id,
        changes: null,
      });
    });
    return wallet;
  }

  /** The organization's wallets among `ids`. */
  findMany(organizationId: string, ids: readonly string[]): Promise<Wallet[]> {
    return this.em.find(Wallet, { organizationId, id: { $in: [...ids] } });
  }

  async get(organizationId: string, walletId: string): Promise<Wallet> {
    const wallet = await this.wallets.findInOrganization(organizationId, walletId);
    if (!wallet) throw walletNotFound(walletId);
    return wallet;
  }

  /**
   * The wallet within an organization, read on the caller's EntityManager so a write can check
   * its wallets inside its own transaction.
   */
  async requireInTransaction(em: EntityManager, organizationId: string, walletId: string): Promise<Wallet> {
    const wallet = await em.getRepository(Wallet).findInOrganization(organizationId, walletId);
    if (!wallet) throw walletNotFound(walletId);
    return wallet;
  }

  /** Which of `walletIds` belong to the organization, read on the caller's transaction in one statement. */
  existingInTransaction(em: EntityManager, organizationId: string, walletIds: string[]): Promise<Set<string>> {
    return em.getRepository(Wallet).existingIds(organizationId, walletIds);
  }

  /**
   * Which of `addresses` (lowercase) are watched, i.e. held by a wallet of any organization: what
   * a chain follower asks about the parties of the movements it has just read. Its cost follows
   * the movements read, not the number of wallets.
   */
  watchedAmong(addresses: string[]): Promise<Set<string>> {
    return this.wallets.watchedAmong(addresses);
  }

  /**
   * Every watched address, a page at a time in address order (`after` the last one of the
   * previous page): for reading a block by address when it cannot be read whole.
   */
  watchedAddressesAfter(after: string | null, limit: number): Promise<string[]> {
    return this.wallets.watchedAddressesAfter(after, limit);
  }

  /** The wallet's address (lowercase) or null when it has none; 404 when the wallet is not the organization's. */
  async walletAddress(organizationId: string, walletId: string): Promise<string | null> {
    // A plain statement: callers include background workers, outside any request's context.
    const found = await this.wallets.addressOf(organizationId, walletId);
    if (found === undefined) throw walletNotFound(walletId);
    return found;
  }

  /** The wallets at `addresses` across organizations, read on the caller's transaction in one statement, oldest first. */
  walletsAtAddresses(em: EntityManager, addresses: string[]): Promise<WalletAtAddress[]> {
    return em.getRepository(Wallet).byAddresses(addresses);
  }

  /** A page of the organization's wallets; with `address`, only those at that address (how a wallet is found by its address). */
  async list(organizationId: string, pageSize: number, pageKey?: string, address?: string): Promise<Page<Wallet>> {
    const at = address === undefined ? null : parseAddress(address, 'address');
    const after = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.wallets.page(organizationId, after, pageSize + 1, at);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }
}
