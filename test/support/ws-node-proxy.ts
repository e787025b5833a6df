import { AddressInfo, createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a node's WebSocket endpoint (anvil answers ws on its HTTP port), for
 * the suites that break what the service's subscription runs on while the chain itself goes on:
 * `dropAll()` cuts every connection (a lost subscription), `away()` cuts every connection as it
 * opens until `back()` (a node gone for a while, then back at the same address), and with
 * `refuseSubscriptions` it answers every eth_subscribe with an error itself (a provider that
 * pushes nothing), passing every other call on.
 */
export class WsNodeProxy {
  /** eth_subscribe calls answered with an error. */
  refused = 0;
  /** Connections cut as they opened while away. */
  turnedAway = 0;
  private server: Server | null = null;
  private port = 0;
  private gone = false;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly upstreamPort: number,
    private readonly options: { refuseSubscriptions?: boolean } = {},
  ) {}

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await this.listen(0);
    return this;
  }

  /** Cuts every open connection; new ones are still accepted. */
  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Cuts the open connections, and every new one as it opens, until back(). */
  away(): void {
    this.gone = true;
    this.dropAll();
  }

  back(): void {
    this.gone = false;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.dropAll();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((client) => this.connect(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private connect(client: Socket): void {
    if (this.gone) {
      this.turnedAway += 1;
      client.destroy();
      return;
    }
    const upstream = new Socket();
    this.sockets.add(client);
    this.sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(this.upstreamPort, '127.0.0.1');
    if (!this.options.refuseSubscriptions) {
      client.pipe(upstream);
      upstream.pipe(client);
      return;
    }
    // Whole frames both ways, so that an answer written here never lands inside one of the node's.
    const toNode = new FrameReader(true, (frame, text) => {
      const call = text === null ? null : parseCall(text);
      if (call?.method !== 'eth_subscribe') return upstream.write(frame);
      this.refused += 1;
      client.write(
        textFrame(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'subscriptions are not supported' } })),
      );
    });
    const toClient = new FrameReader(false, (frame) => client.write(frame));
    client.on('data', (chunk: Buffer) => toNode.push(chunk));
    upstream.on('data', (chunk: Buffer) => toClient.push(chunk));
  }
}

function parseCall(text: string): { id: unknown; method?: unknown } | null {
  try {
    return JSON.parse(text) as { id: unknown; method?: unknown };
  } catch {
    return null;
  }
}

/**
 * Splits one direction of a WebSocket connection into its HTTP handshake (passed on as it is, but
 * without any Sec-WebSocket-Extensions offer, so frames stay uncompressed and readable) and then
 * whole frames, each given with its text when it is an unfragmented text frame.
 */
class FrameReader {
  private buffer = Buffer.alloc(0);
  private handshaken = false;

  constructor(
    private readonly masked: boolean,
    private readonly onFrame: (frame: Buffer, text: string | null) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (!this.handshaken) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buffer.subarray(0, end + 4).toString('latin1');
      this.onFrame(Buffer.from(head.replace(/^Sec-WebSocket-Extensions:.*\r\n/gim, ''), 'latin1'), null);
      this.buffer = this.buffer.subarray(end + 4);
      this.handshaken = true;
    }
    for (;;) {
      const frame = this.nextFrame();
      if (!frame) return;
      this.onFrame(frame.bytes, frame.text);
    }
  }

  private nextFrame(): { bytes: Buffer; text: string | null } | null {
    const b = this.buffer;
    if (b.length < 2) return null;
    let length = b[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (b.length < 4) return null;
      length = b.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (b.length < 10) return null;
      length = Number(b.readBigUInt64BE(2));
      offset = 10;
    }
    const hasMask = (b[1] & 0x80) !== 0;
    const total = offset + (hasMask ? 4 : 0) + length;
    if (b.length < total) return null;
    const bytes = b.subarray(0, total);
    this.buffer = b.subarray(total);
    const fin = (b[0] & 0x80) !== 0;
    const opcode = b[0] & 0x0f;
    if (!fin || opcode !== 1 || hasMask !== this.masked) return { bytes, text: null };
    const payload = Buffer.from(bytes.subarray(total - length));
    if (hasMask) {
      const mask = bytes.subarray(offset, offset + 4);
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
    }
    return { bytes, text: payload.toString('utf8') };
  }
}

/** A server's (unmasked) text frame. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  let header: Buffer;
  if (payload.length < 126) header = Buffer.from([0x81, payload.length]);
  else if (payload.length < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x81;
    header[1] = 126;
    header.writeUInt16BE(payload.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x81;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  return Buffer.concat([header, payload]);
}
