/**
 * The integrator's side of the webhook benchmark, in its own process: a node:http server that
 * verifies the signature of every request (as an integrator must), answers 200, and records the
 * receipt time of each webhook id. Commit-to-receipt latency is measured against the body's
 * createdAtUtc, which is the event row's created_at (same machine, same clock).
 * Talks to bench/run.ts over IPC: `reset` (with the shared secret), `stats`.
 * BENCH_RECEIVER_DELAY_MS makes it a slow receiver: every answer comes that long after the request.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';

let secret = '';
let seen = new Set<string>();
let latencies: number[] = [];
let received = 0;
let badSignatures = 0;
let firstAt = 0;
let lastAt = 0;
const delayMs = Number(process.env.BENCH_RECEIVER_DELAY_MS ?? 0);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    const raw = Buffer.concat(chunks);
    const expected = createHmac('sha256', secret).update(raw).digest('base64');
    if (req.headers['x-service-webhook-hmac'] !== expected) {
      badSignatures += 1;
      res.writeHead(401).end();
      return;
    }
    received += 1;
    const body = JSON.parse(raw.toString('utf8')) as { id: string; createdAtUtc: string };
    if (!seen.has(body.id)) {
      seen.add(body.id);
      latencies.push(now - Date.parse(body.createdAtUtc));
      if (firstAt === 0) firstAt = now;
      lastAt = now;
    }
    const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (message: { type: string; secret?: string }) => {
  if (message.type === 'reset') {
    secret = message.secret ?? secret;
    seen = new Set();
    latencies = [];
    received = 0;
    badSignatures = 0;
    firstAt = 0;
    lastAt = 0;
    process.send?.({ type: 'reset' });
  } else if (message.type === 'stats') {
    process.send?.({ type: 'stats', unique: seen.size, received, badSignatures, firstAt, lastAt, latencies });
  } else if (message.type === 'count') {
    process.send?.({ type: 'count', unique: seen.size, badSignatures });
  }
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port }));
