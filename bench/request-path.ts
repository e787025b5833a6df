/**
 * The request-path scenarios of `npm run bench` (wired into bench/run.ts with a few lines):
 *
 * - readTokenFixedRate: GET /v1/tokens/{id} at a fixed 500 req/s on the service and on the raw read
 *   baseline; p99 compared (goal: service p99 at most 2x the baseline's).
 * - writeMint: POST /v1/transactions mints, 10 concurrent clients each minting its own token into
 *   its own wallet, closed loop, against bench/write-baseline-server.ts (node:http + pg running the
 *   same statements in one transaction); goal >= 0.4 of the baseline's throughput.
 * - singleMint: the same, one client; goal: mean latency at most 2x the baseline's.
 * - airdrop: 10,000 mints in 10 POST /v1/transactions/batch requests of 1,000, one after the
 *   other; time until all are recorded (goal < 5 s) and until the receiver has every webhook.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client as PgClient } from 'pg';
import { Client } from 'undici';
import autocannon from 'autocannon';

export interface RequestPathHarness {
  serviceUrl: string;
  databaseUrl: string;
  db: PgClient;
  rounds: number;
  durationS: number;
  sharedSecret: string;
  log: (message: string) => void;
  createOrg: (name: string) => Promise<{ id: string; key: string }>;
  api: <T>(method: string, path: string, key: string, body?: unknown) => Promise<T>;
  startHelper: (script: string, env: Record<string, string>) => Promise<{ child: ChildProcess; port: number }>;
  ask: <T>(child: ChildProcess, type: string, extra?: Record<string, unknown>) => Promise<T>;
  stopChild: (child: ChildProcess) => Promise<void>;
  /** Starts another service process with ROLE=api on the same database and Redis. */
  startApiProcess: () => Promise<{ url: string; stop: () => Promise<void> }>;
}

const FIXED_RATE = 500;
const WRITERS = 10;
const AIRDROP = 10_000;
const AIRDROP_BATCH = 1_000;
/** BENCH_WRITE_SCENARIOS narrows the writes, e.g. to writeMint alone for a CPU profile of it. */
const WRITE_SCENARIOS = new Set((process.env.BENCH_WRITE_SCENARIOS ?? 'writeMint,singleMint,airdrop').split(','));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const pct = (values: number[], p: number) => {
  const s = sorted(values);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const median = (values: number[]) => pct(values, 50);

export interface FixedRateResult {
  rate: number;
  service: { p50: number; p99: number; rps: number };
  baseline: { p50: number; p99: number; rps: number };
  p99Ratio: number;
}

/** readToken at a fixed rate on both sides (alternating), p99 of each side's median round. */
export async function fixedRateReads(h: RequestPathHarness, baselineUrl: string, key: string, paths: string[]): Promise<FixedRateResult> {
  const run = async (url: string) => {
    const r = await autocannon({
      url,
      connections: 10,
      overallRate: FIXED_RATE,
      duration: h.durationS,
      headers: { authorization: `Bearer ${key}` },
      requests: [
        {
          method: 'GET',
          setupRequest: (req: Record<string, unknown>) => ({
            ...req,
            path: paths[Math.floor(Math.random() * paths.length)],
          }),
        } as never,
      ],
    });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`fixed-rate reads on ${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return {
      p50: r.latency.p50,
      p99: r.latency.p99,
      rps: round(r.requests.average, 1),
    };
  };
  const runs = {
    service: [] as { p50: number; p99: number; rps: number }[],
    baseline: [] as { p50: number; p99: number; rps: number }[],
  };
  for (let i = 0; i < h.rounds; i += 1) {
    for (const side of i % 2 === 0 ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const)) {
      const r = await run(side === 'service' ? h.serviceUrl : baselineUrl);
      runs[side].push(r);
      h.log(`readToken at ${FIXED_RATE}/s ${side} round ${i + 1}: p50 ${r.p50} ms, p99 ${r.p99} ms`);
    }
  }
  const pick = (list: { p50: number; p99: number; rps: number }[]) => ({
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    rps: median(list.map((r) => r.rps)),
  });
  const service = pick(runs.service);
  const baseline = pick(runs.baseline);
  return {
    rate: FIXED_RATE,
    service,
    baseline,
    p99Ratio: round(service.p99 / Math.max(1, baseline.p99), 2),
  };
}

interface LoopResult {
  rps: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

/**
 * A closed loop of `workers` clients, each on its own keep-alive connection, each sending its own
 * body (so every client has its own wallet and token) for `seconds`.
 */
async function closedLoop(url: string, key: string, bodies: string[], seconds: number): Promise<LoopResult> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    bodies.map(async (body) => {
      const client = new Client(url, { keepAliveTimeout: 30_000 });
      try {
        while (Date.now() < deadline) {
          const t0 = performance.now();
          const res = await client.request({
            path: '/v1/transactions',
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
            },
            body,
          });
          const text = await res.body.text();
          if (res.statusCode !== 201) throw new Error(`POST /v1/transactions on ${url}: ${res.statusCode} ${text.slice(0, 300)}`);
          latencies.push(performance.now() - t0);
        }
      } finally {
        await client.close();
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  return {
    rps: round(latencies.length / elapsed, 1),
    meanMs: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length), 2),
    p50Ms: round(pct(latencies, 50), 2),
    p99Ms: round(pct(latencies, 99), 2),
    requests: latencies.length,
  };
}

export interface WriteResult {
  writeMint?: {
    service: LoopResult;
    baseline: LoopResult;
    ratio: number;
    runs: { service: LoopResult[]; baseline: LoopResult[] };
  };
  singleMint?: {
    service: LoopResult;
    baseline: LoopResult;
    latencyRatio: number;
  };
  /** Posted to a ROLE=api process while the ROLE=all one relays and delivers, as API and workers are deployed. */
  airdrop?: AirdropResult;
  /** Posted to the ROLE=all process, which also relays and delivers the webhooks meanwhile. */
  airdropSameProcess?: AirdropResult;
}

interface AirdropResult {
  mints: number;
  batchSize: number;
  recordedSeconds: number;
  deliveredSeconds: number;
  delivered: number;
  badSignatures: number;
}

/** writeMint, singleMint and airdrop; starts and stops its own baseline server and receiver. */
export async function writeScenarios(h: RequestPathHarness): Promise<WriteResult> {
  const org = await h.createOrg('bench writes');
  const wallets = await Promise.all(
    Array.from({ length: WRITERS }, (_, i) =>
      h.api<{ id: string }>('POST', '/v1/wallets', org.key, {
        name: `writer ${i}`,
      }),
    ),
  );
  const tokens = await Promise.all(
    Array.from({ length: WRITERS }, (_, i) =>
      h.api<{ id: string }>('POST', '/v1/tokens', org.key, {
        contractAddress: `0x${'1'.repeat(39)}${i}`,
        blockchainTokenId: String(i + 1),
      }),
    ),
  );
  const bodies = wallets.map((w, i) => JSON.stringify({ tokenId: tokens[i].id, toWalletId: w.id }));

  const baseline = await h.startHelper('write-baseline-server.ts', {
    BASELINE_DATABASE_URL: h.databaseUrl,
    BASELINE_ORGANIZATION_ID: org.id,
    BASELINE_POOL_MAX: '10',
  });
  const baselineUrl = `http://127.0.0.1:${baseline.port}`;
  const result: WriteResult = {};
  try {
    if (WRITE_SCENARIOS.has('writeMint')) result.writeMint = await mintLoad(h, baselineUrl, org.key, bodies);
    if (WRITE_SCENARIOS.has('singleMint')) result.singleMint = await singleMintLatency(h, baselineUrl, org.key, bodies);
  } finally {
    await h.stopChild(baseline.child);
  }
  if (WRITE_SCENARIOS.has('airdrop')) {
    const api = await h.startApiProcess();
    try {
      result.airdrop = await airdrop(h, api.url);
    } finally {
      await api.stop();
    }
    result.airdropSameProcess = await airdrop(h, h.serviceUrl);
  }
  return result;
}

async function mintLoad(
  h: RequestPathHarness,
  baselineUrl: string,
  key: string,
  bodies: string[],
): Promise<NonNullable<WriteResult['writeMint']>> {
  h.log('writeMint: warm-up');
  await closedLoop(h.serviceUrl, key, bodies, 2);
  await closedLoop(baselineUrl, key, bodies, 2);
  const runs = { service: [] as LoopResult[], baseline: [] as LoopResult[] };
  for (let i = 0; i < h.rounds; i += 1) {
    for (const side of i % 2 === 0 ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const)) {
      const r = await closedLoop(side === 'service' ? h.serviceUrl : baselineUrl, key, bodies, h.durationS);
      runs[side].push(r);
      h.log(`writeMint ${side} round ${i + 1}: ${r.rps} mints/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
    }
  }
  const pick = (list: LoopResult[]) => [...list].sort((a, b) => a.rps - b.rps)[Math.floor((list.length - 1) / 2)];
  const writeMint = {
    service: pick(runs.service),
    baseline: pick(runs.baseline),
    ratio: 0,
    runs,
  };
  writeMint.ratio = round(writeMint.service.rps / writeMint.baseline.rps, 3);
  return writeMint;
}

async function singleMintLatency(
  h: RequestPathHarness,
  baselineUrl: string,
  key: string,
  bodies: string[],
): Promise<NonNullable<WriteResult['singleMint']>> {
  const single = {
    service: [] as LoopResult[],
    baseline: [] as LoopResult[],
  };
  for (let i = 0; i < h.rounds; i += 1) {
    for (const side of i % 2 === 0 ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const)) {
      const r = await closedLoop(side === 'service' ? h.serviceUrl : baselineUrl, key, bodies.slice(0, 1), Math.max(2, h.durationS / 2));
      single[side].push(r);
      h.log(`singleMint ${side} round ${i + 1}: mean ${r.meanMs} ms, p50 ${r.p50Ms} ms`);
    }
  }
  const byMean = (list: LoopResult[]) => [...list].sort((a, b) => a.meanMs - b.meanMs)[Math.floor((list.length - 1) / 2)];
  const singleMint = {
    service: byMean(single.service),
    baseline: byMean(single.baseline),
    latencyRatio: 0,
  };
  singleMint.latencyRatio = round(singleMint.service.meanMs / singleMint.baseline.meanMs, 2);
  return singleMint;
}

/** 10,000 tokens minted to 1,000 wallets in batches of 1,000, with every webhook delivered. */
async function airdrop(h: RequestPathHarness, apiUrl: string): Promise<AirdropResult> {
  const org = await h.createOrg('bench airdrop');
  const receiver = await h.startHelper('receiver.ts', {});
  try {
    await h.ask(receiver.child, 'reset', { secret: h.sharedSecret });
    await h.api('PATCH', '/api/organization/v1/current-organization/webhook-config', org.key, {
      url: `http://127.0.0.1:${receiver.port}/webhooks`,
      sharedSecret: h.sharedSecret,
      webhookTypes: ['transaction'],
      enabled: true,
    });
    const wallets = (
      await h.db.query(
        `insert into "wallet" ("id", "created_at", "organization_id", "name")
         select gen_random_uuid(), now(), $1, 'airdrop ' || i from generate_series(1, 1000) i returning "id"`,
        [org.id],
      )
    ).rows.map((r: { id: string }) => r.id);
    const tokens = (
      await h.db.query(
        `insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id")
         select gen_random_uuid(), now(), $1, '0x00000000000000000000000000000000000a1d20', i::text from generate_series(1, ${AIRDROP}) i returning "id"`,
        [org.id],
      )
    ).rows.map((r: { id: string }) => r.id);
    await h.db.query('analyze "wallet"; analyze "token"');

    h.log(
      `airdrop: ${AIRDROP} mints in batches of ${AIRDROP_BATCH} to ${apiUrl === h.serviceUrl ? 'the ROLE=all process' : 'a ROLE=api process'}`,
    );
    const started = Date.now();
    for (let from = 0; from < AIRDROP; from += AIRDROP_BATCH) {
      const transactions = tokens.slice(from, from + AIRDROP_BATCH).map((tokenId: string, i: number) => ({
        tokenId,
        toWalletId: wallets[(from + i) % wallets.length],
      }));
      const res = await fetch(`${apiUrl}/v1/transactions/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transactions }),
      });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`POST /v1/transactions/batch: ${res.status} ${text.slice(0, 300)}`);
    }
    const recordedSeconds = round((Date.now() - started) / 1000, 2);
    h.log(`  recorded in ${recordedSeconds} s; waiting for the webhooks`);
    const deadline = Date.now() + 300_000;
    let count = { unique: 0, badSignatures: 0 };
    while (Date.now() < deadline) {
      count = await h.ask<{ unique: number; badSignatures: number }>(receiver.child, 'count');
      if (count.unique >= AIRDROP) break;
      await sleep(100);
    }
    const deliveredSeconds = round((Date.now() - started) / 1000, 2);
    h.log(`  ${count.unique} webhooks delivered after ${deliveredSeconds} s`);
    return {
      mints: AIRDROP,
      batchSize: AIRDROP_BATCH,
      recordedSeconds,
      deliveredSeconds,
      delivered: count.unique,
      badSignatures: count.badSignatures,
    };
  } finally {
    await h.stopChild(receiver.child);
  }
}

/**
 * Requests the service has answered so far, by route (from its own /metrics), so that a CPU
 * profile of the run can be divided per request (bench/profile-layers.ts).
 */
export async function requestCounts(serviceUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^http_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = `${labels.method} ${labels.route}`;
    counts[key] = (counts[key] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** The goals of the request path, judged on one run's figures. */
export function requestPathGoals(
  r: {
    readToken?: { ratio: number };
    readBalances?: { ratio: number };
    readTokenFixedRate?: FixedRateResult;
  } & Partial<WriteResult>,
) {
  return {
    ...(r.readTokenFixedRate
      ? {
          readTokenP99AtFixedRate: {
            target: '<= 2x baseline p99',
            holds: r.readTokenFixedRate.p99Ratio <= 2,
          },
        }
      : {}),
    ...(r.writeMint ? { writeMint: { target: '>= 0.4', holds: r.writeMint.ratio >= 0.4 } } : {}),
    ...(r.singleMint
      ? {
          singleMintLatency: {
            target: '<= 2x baseline',
            holds: r.singleMint.latencyRatio <= 2,
          },
        }
      : {}),
    ...(r.airdrop
      ? {
          airdropRecorded: {
            target: '10,000 mints < 5 s',
            holds: r.airdrop.recordedSeconds < 5,
          },
          airdropDelivered: {
            target: 'every webhook',
            holds: r.airdrop.delivered === r.airdrop.mints && r.airdrop.badSignatures === 0,
          },
        }
      : {}),
    ...(r.airdropSameProcess
      ? {
          airdropSameProcessRecorded: { target: '10,000 mints < 5 s', holds: r.airdropSameProcess.recordedSeconds < 5 },
          airdropSameProcessDelivered: {
            target: 'every webhook',
            holds: r.airdropSameProcess.delivered === r.airdropSameProcess.mints && r.airdropSameProcess.badSignatures === 0,
          },
        }
      : {}),
  };
}

/** Rows of the Markdown table for these scenarios. */
export function requestPathTable(r: { readTokenFixedRate?: FixedRateResult } & Partial<WriteResult>): string[] {
  const lines: string[] = [];
  const f = r.readTokenFixedRate;
  if (f) {
    lines.push(
      `| readToken at ${f.rate} req/s | p50 ${f.service.p50} ms, p99 ${f.service.p99} ms | p50 ${f.baseline.p50} ms, p99 ${f.baseline.p99} ms | **p99 ${f.p99Ratio}x** | p99 ≤ 2x |`,
    );
  }
  if (r.writeMint) {
    const w = r.writeMint;
    const g = (l: LoopResult) => `${l.rps} mints/s, p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms`;
    lines.push(`| writeMint (10 clients) | ${g(w.service)} | ${g(w.baseline)} | **${w.ratio}** | ≥ 0.4 |`);
  }
  if (r.singleMint) {
    const s = r.singleMint;
    lines.push(
      `| one mint alone (1 client) | mean ${s.service.meanMs} ms, p50 ${s.service.p50Ms} ms | mean ${s.baseline.meanMs} ms, p50 ${s.baseline.p50Ms} ms | **${s.latencyRatio}x** | ≤ 2x |`,
    );
  }
  const drops: [string, AirdropResult | undefined][] = [
    ['ROLE=api process, delivery by the ROLE=all one', r.airdrop],
    ['one ROLE=all process recording and delivering', r.airdropSameProcess],
  ];
  for (const [where, a] of drops) {
    if (!a) continue;
    lines.push(
      `| airdrop: ${a.mints} mints in batches of ${a.batchSize} (${where}) | recorded in ${a.recordedSeconds} s; ${a.delivered} webhooks delivered after ${a.deliveredSeconds} s | | | < 5 s, every webhook |`,
    );
  }
  return lines;
}
