/**
 * A webhook receiver as the seed recommends (section 6): verify the signature, store the webhook,
 * answer 200 at once, process later, and deduplicate by id (delivery is at-least-once).
 *
 *   SHARED_SECRET=... PORT=4545 npx ts-node --swc examples/webhook-receiver.ts
 *
 * Storage here is an append-only JSON-lines file; use your own table in production.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  id: string;
  organizationId: string;
  action: string;
  resourceId: string;
  resourceType: string;
  createdAtUtc: string;
  changes: Record<string, unknown> | null;
}

/** Base64(HMAC-SHA256(sharedSecret, rawBody)) compared in constant time with the header. */
export function verifySignature(rawBody: Buffer, header: string | undefined, sharedSecret: string): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', sharedSecret).update(rawBody).digest();
  const given = Buffer.from(header, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface ReceiverOptions {
  sharedSecret: string;
  port?: number;
  host?: string;
  /** JSON-lines file the webhooks are stored in before answering. */
  storePath?: string;
  /** Called after the answer has gone out, once per webhook id. */
  onWebhook?: (webhook: ReceivedWebhook) => void;
}

export async function startReceiver(options: ReceiverOptions): Promise<{ server: Server; url: string }> {
  const seen = new Set<string>();
  if (options.storePath && existsSync(options.storePath)) {
    for (const line of readFileSync(options.storePath, 'utf8').split('\n')) {
      if (line) seen.add((JSON.parse(line) as ReceivedWebhook).id);
    }
  }
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      // Verify the exact bytes received, before parsing anything.
      if (!verifySignature(raw, req.headers['x-service-webhook-hmac'] as string | undefined, options.sharedSecret)) {
        res.writeHead(401).end();
        return;
      }
      const webhook = JSON.parse(raw.toString('utf8')) as ReceivedWebhook;
      const duplicate = seen.has(webhook.id);
      if (!duplicate) {
        seen.add(webhook.id);
        if (options.storePath) appendFileSync(options.storePath, `${JSON.stringify(webhook)}\n`);
      }
      // Answer first (the sender allows 3 s), then do the work.
      res.writeHead(200).end();
      if (!duplicate) setImmediate(() => options.onWebhook?.(webhook));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return { server, url: `http://${address}:${port}/webhooks` };
}

if (require.main === module) {
  const sharedSecret = process.env.SHARED_SECRET;
  if (!sharedSecret) {
    process.stderr.write('Set SHARED_SECRET to the sharedSecret of your webhook configuration.\n');
    process.exit(2);
  }
  void startReceiver({
    sharedSecret,
    port: Number(process.env.PORT ?? 4545),
    host: process.env.HOST ?? '127.0.0.1',
    storePath: process.env.STORE ?? 'webhooks.jsonl',
    // The recommended next step: fetch the object named by resourceType and resourceId.
    onWebhook: (w) => process.stdout.write(`${w.createdAtUtc} ${w.resourceType} ${w.action} ${w.resourceId} (webhook ${w.id})\n`),
  }).then(({ url }) => process.stdout.write(`receiving webhooks at ${url}\n`));
}
