import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { MikroORM } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Address } from 'viem';
import { TokensService } from '../../src/modules/tokens/tokens.service';
import { bearer, TestOrganization } from './factories';
import { waitUntil } from './receiver';
import type { TestApp } from './test-app';

/**
 * A collection's metadata server (or an IPFS gateway) on loopback: answers per path and records
 * every path it is asked for, in order, so a test can tell what was (and was not) fetched.
 */
export class MetadataServer {
  readonly requests: string[] = [];
  readonly routes = new Map<string, (req: IncomingMessage, res: ServerResponse, n: number) => void>();
  private server: Server | null = null;

  json(path: string, body: unknown): void {
    this.routes.set(path, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      this.requests.push(path);
      const route = this.routes.get(path);
      if (!route) return void res.writeHead(404).end('not found');
      route(req, res, this.requests.filter((p) => p === path).length);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A tarpit: a TCP server that accepts every connection and never answers (nor closes), the
 * cheapest way to hold a client's fetch for its whole timeout. It counts the connections and
 * when each came.
 */
export class Tarpit {
  /** Arrival time (ms since the epoch) of every connection accepted. */
  readonly connections: number[] = [];
  private readonly sockets = new Set<Socket>();
  private server: TcpServer | null = null;

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** Connections accepted at or after `since` (ms since the epoch) and before `until`. */
  connectionsBetween(since: number, until = Infinity): number {
    return this.connections.filter((t) => t >= since && t < until).length;
  }

  async start(): Promise<this> {
    this.server = createTcpServer((socket) => {
      this.connections.push(Date.now());
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
      // Read and drop whatever the client sends, so its writes never block.
      socket.resume();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** What GET /v1/tokens/{id} shows of a token's metadata state. */
export async function tokenOf(t: TestApp, org: TestOrganization, tokenId: string) {
  return (await t.http().get(`/v1/tokens/${tokenId}`).set(bearer(org.adminKey)).expect(200)).body;
}

export async function settled(t: TestApp, org: TestOrganization, tokenId: string) {
  return waitUntil(
    () => tokenOf(t, org, tokenId),
    (token) => token.metadataStatus !== 'pending',
    20_000,
  );
}

/**
 * The token as the follower creates it on first sight (pending, `nft` create), through the tokens
 * module's own entry point: these tests are about what happens to its metadata afterwards.
 */
export async function chainToken(
  t: TestApp,
  org: TestOrganization,
  chainId: number,
  contract: Address,
  blockchainTokenId: bigint,
  standard: 'erc721' | 'erc1155',
): Promise<string> {
  const em = t.app.get(MikroORM).em.fork() as EntityManager;
  const key = {
    organizationId: org.id,
    chainId,
    contractAddress: contract.toLowerCase(),
    blockchainTokenId: String(blockchainTokenId),
    standard,
  };
  const tokens = await em.transactional((tx) => t.app.get(TokensService).ensureChainTokens(tx, [key]));
  return [...tokens.values()][0];
}
