/**
 * A webhook receiver: verify the signature (Standard Webhooks' `webhook-signature`, with its
 * 5-minute timestamp window), store the webhook, answer 200 at once, process later, and
 * deduplicate by id (delivery is at-least-once).
 *
 *   SHARED_SECRET=... PORT=4545 npx ts-node --swc examples/webhook-receiver.ts
 *
 * During a secret rotation set PREVIOUS_SHARED_SECRET too (or give the new one as SHARED_SECRET
 * and the old one as PREVIOUS_SHARED_SECRET): a webhook signed with either is accepted.
 *
 * Storage here is an append-only JSON-lines file; use your own table in production.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
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

/**
 * The legacy check (README.md "Verifying a webhook"): Base64(HMAC-SHA256(sharedSecret, rawBody)) compared in constant time
 * with `x-service-webhook-hmac`. It proves who signed the body, but it signs no time, so a
 * captured webhook still verifies when replayed later: `verifyWebhook` does not accept it alone.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, sharedSecret: string): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', sharedSecret).update(rawBody).digest();
  const given = Buffer.from(header, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Standard Webhooks' replay window: a webhook-timestamp further than this from now is refused. */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

export type Verdict = { ok: true; scheme: 'standard-webhooks' } | { ok: false; reason: string };

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const sameBase64 = (given: string, expected: Buffer): boolean => {
  const bytes = Buffer.from(given, 'base64');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
};

/**
 * Verifies a webhook with any of the secrets the receiver knows (two during a rotation), by
 * Standard Webhooks' `webhook-signature`, which is required: HMAC-SHA256 with the UTF-8 secret over
 * "{webhook-id}.{webhook-timestamp}.{body}", and a timestamp within 5 minutes, so a captured
 * webhook cannot be replayed later. The service sends it on every attempt. A webhook carrying only
 * the legacy `x-service-webhook-hmac` is refused: that legacy check signs no time and cannot stop
 * a replay.
 */
export function verifyWebhook(rawBody: Buffer, headers: IncomingHttpHeaders, secrets: readonly string[], now = Date.now()): Verdict {
  const signature = header(headers, 'webhook-signature');
  if (signature === undefined) {
    return { ok: false, reason: 'webhook-signature missing (x-service-webhook-hmac alone cannot stop a replayed webhook)' };
  }
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  if (!id || !timestamp || !/^\d+$/.test(timestamp)) return { ok: false, reason: 'webhook-id or webhook-timestamp missing or malformed' };
  if (Math.abs(now / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'webhook-timestamp outside 5 minutes' };
  }
  const given = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.`).update(rawBody).digest();
    if (given.some((value) => sameBase64(value, expected))) return { ok: true, scheme: 'standard-webhooks' };
  }
  return { ok: false, reason: 'no webhook-signature entry matches a known secret' };
}

export interface ReceiverOptions {
  /** The shared secret, or every secret to accept (the new and the previous one during a rotation). */
  sharedSecret: string | readonly string[];
  port?: number;
  host?: string;
  /** JSON-lines file the webhooks are stored in before answering. */
  storePath?: string;
  /** Called after the answer has gone out, once per webhook id. */
  onWebhook?: (webhook: ReceivedWebhook) => void;
}

export async function startReceiver(options: ReceiverOptions): Promise<{ server: Server; url: string }> {
  const seen = new Set<string>();
  const secrets = [options.sharedSecret].flat();
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
      if (!verifyWebhook(raw, req.headers, secrets).ok) {
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
    sharedSecret: [sharedSecret, process.env.PREVIOUS_SHARED_SECRET].filter((s): s is string => Boolean(s)),
    port: Number(process.env.PORT ?? 4545),
    host: process.env.HOST ?? '127.0.0.1',
    storePath: process.env.STORE ?? 'webhooks.jsonl',
    // The recommended next step: fetch the object named by resourceType and resourceId.
    onWebhook: (w) => process.stdout.write(`${w.createdAtUtc} ${w.resourceType} ${w.action} ${w.resourceId} (webhook ${w.id})\n`),
  }).then(({ url }) => process.stdout.write(`receiving webhooks at ${url}\n`));
}
