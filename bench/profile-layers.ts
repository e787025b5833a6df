/**
 * Splits a service CPU profile (written by `BENCH_CPU_PROF=<dir> npm run bench`) into the layers a
 * request passes through, and divides by the number of requests the profile covered:
 *
 *   npx ts-node --swc bench/profile-layers.ts <file.cpuprofile> <requests per second> <window s> [<label>]
 *
 * Only the last <window s> of the profile (less the half second of shutdown) is counted, so the
 * start-up, the seeding and the other scenarios stay out: run one scenario alone with one round
 * (e.g. `BENCH_ONLY=readToken BENCH_ROUNDS=1`), whose service side then runs last, and pass the
 * service's req/s from that run. Requests = req/s x window.
 *
 * Each sample is charged to the innermost frame on its stack that belongs to a named layer (so
 * the SQL driver's time under the ORM is the driver's, the ORM's own bookkeeping the ORM's);
 * samples with no named frame go to the generic layers (Express/Nest routing, Node's HTTP), then
 * to "other". Idle time is left out.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Specific layers, matched on the frame's file (and a few function names). */
const LAYERS: [string, RegExp][] = [
  ['helmet', /\/helmet\//],
  [
    'request logging (pino-http)',
    /\/(pino|pino-http|pino-std-serializers|sonic-boom|nestjs-pino|thread-stream|fast-redact)\/|\/src\/logging\./,
  ],
  ['request id', /request-id\./],
  ['rate limit (guard + Redis client)', /rate-limit\.guard|redis-throttler|\/@nestjs\/throttler\/|\/ioredis\/|\/redis-parser\/|\/denque\//],
  [
    'auth lookup (passport, key cache, guards)',
    /\/passport\/|\/passport-strategy\/|\/@nestjs\/passport\/|api-key\.(strategy|rules)|bearer-header|\/auth\/guards\.|organizations\.service|\/lru-cache\//,
  ],
  [
    'validation pipes (class-validator/-transformer)',
    /\/class-validator\/|\/class-transformer\/|\/validator\/|validation\.pipe|uuid-param|\/pipes\//,
  ],
  ['interceptors + metrics', /http-metrics\.interceptor|\/prom-client\/|\/rxjs\/|interceptors-consumer|\/tdigest\/|\/bintrees\//],
  ['ORM (MikroORM: context, unit of work, hydration)', /\/@mikro-orm\//],
  ['SQL driver (knex, pg)', /\/knex\/|\/pg\/|\/pg-protocol\/|\/pg-pool\/|\/pg-types\/|\/postgres-/],
  ['response serialization (res.json, ETag, DTOs)', /\/etag\/|\/fast-json-stringify\/|\.response\.dto\.|\/token\.view\.|response\.js$/],
  ['body parsing', /\/body-parser\/|\/raw-body\/|json-body-rules|\/type-is\//],
  ['webhook worker, relay, Bull (not the request path)', /\/modules\/webhooks\/|\/bull\/|\/@nestjs\/bull/],
];
const GENERIC: [string, RegExp][] = [
  ['Express + Nest routing', /\/express\/|\/router\/|\/@nestjs\/|\/finalhandler\/|\/send\/|\/on-finished\/|\/path-to-regexp\//],
  ['Node HTTP + sockets', /^node:|^internal\//],
];
const NATIVE: Record<string, string> = {
  '(garbage collector)': 'garbage collection',
  stringify: 'response serialization (res.json, ETag, DTOs)',
  parse: 'body parsing',
};

function main(): void {
  const [file, rpsArg, windowArg, label] = process.argv.slice(2);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const windowUs = Number(windowArg) * 1e6;
  const requests = Math.round(Number(rpsArg) * Number(windowArg));
  // PROFILE_END_BEFORE_S moves the window earlier, for a scenario that is not the run's last.
  const windowEnd = profile.endTime - 500_000 - Number(process.env.PROFILE_END_BEFORE_S ?? 0) * 1e6;
  const windowStart = windowEnd - windowUs;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const layerOf = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    if (layerOf.has(id)) return layerOf.get(id)!;
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(root)') {
      layerOf.set(id, functionName === '(program)' ? 'V8 (program)' : null);
      return layerOf.get(id)!;
    }
    let found: string | null = NATIVE[functionName] && !url ? NATIVE[functionName] : null;
    for (let at: number | undefined = id; !found && at !== undefined; at = parent.get(at)) {
      const frameUrl = byId.get(at)!.callFrame.url;
      found = LAYERS.find(([, pattern]) => pattern.test(frameUrl))?.[0] ?? null;
    }
    for (let at: number | undefined = id; !found && at !== undefined; at = parent.get(at)) {
      const frameUrl = byId.get(at)!.callFrame.url;
      found = GENERIC.find(([, pattern]) => pattern.test(frameUrl))?.[0] ?? null;
    }
    layerOf.set(id, found ?? 'other (app code, async plumbing)');
    return layerOf.get(id)!;
  };

  const micros = new Map<string, number>();
  const frames = new Map<string, Map<string, number>>();
  let busy = 0;
  let idle = 0;
  let clock = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    clock += dt;
    if (clock < windowStart || clock > windowEnd) return;
    const layer = classify(id);
    if (layer === null) {
      idle += dt;
      return;
    }
    busy += dt;
    micros.set(layer, (micros.get(layer) ?? 0) + dt);
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame as { functionName: string; url: string; lineNumber?: number };
    const frame = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, '')}:${lineNumber ?? ''}`;
    const perLayer = frames.get(layer) ?? new Map<string, number>();
    perLayer.set(frame, (perLayer.get(frame) ?? 0) + dt);
    frames.set(layer, perLayer);
  });

  const rows = [...micros.entries()].sort((a, b) => b[1] - a[1]);
  const out = [
    `${label ?? file}: ${(busy / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle${requests ? `, ${requests} requests, ${(busy / requests).toFixed(0)} µs CPU per request` : ''}`,
    '',
    '| layer | share of busy CPU | µs per request |',
    '|---|---|---|',
    ...rows.map(([layer, us]) => `| ${layer} | ${((100 * us) / busy).toFixed(1)} % | ${requests ? (us / requests).toFixed(0) : '-'} |`),
  ];
  if (process.env.PROFILE_DETAIL) {
    for (const [layer] of rows) {
      out.push('', `${layer}:`);
      const top = [...(frames.get(layer) ?? new Map<string, number>()).entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
      for (const [frame, us] of top) out.push(`  ${((100 * us) / busy).toFixed(1)} %  ${frame}`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
