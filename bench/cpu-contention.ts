/**
 * How much CPU time the same work costs when several processes share this machine's cores:
 *
 *   npm run bench:cpu-contention            (BENCH_CONTENTION_SECONDS, default 6 per round)
 *
 * Each process repeats what a worker does per webhook in pure CPU (build a payload, serialize it,
 * sign it with HMAC-SHA256, parse it back) and counts how many it completes per CPU second of its
 * own (user + system, from process.cpuUsage), so time spent waiting for a core is left out. Rounds
 * run 1, 2 and 3 processes side by side, first with the work alone, then with each process also
 * reading and writing a heap the size of a busy worker's at random.
 *
 * With independent cores, 2 processes (one per core) do the same work per CPU second as 1. With
 * 3 processes on 2 cores, the scheduler switches between them: work that fits in the caches pays
 * almost nothing for that, work with a large heap refills its caches after each switch. That is
 * the situation of two workers beside PostgreSQL and Redis on a 2-core machine, which the
 * scale-out comparison (one worker against two, BENCHMARKS.md) measures.
 */
import { fork } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';

const SECONDS = Number(process.env.BENCH_CONTENTION_SECONDS ?? 6);
const SECRET = Buffer.from('whsec-bench-contention-secret-32b');
/**
 * A heap the size of a busy worker's, read and written at random on every unit, so each process
 * also needs its caches: the pure CPU work above fits in them and would not notice two processes
 * sharing a core's cache after each context switch.
 */
const HEAP_OBJECTS = 1_000_000;
const TOUCHES_PER_UNIT = 64;
let heap: { n: number; s: string }[] = [];

function touchHeap(i: number): number {
  let sum = 0;
  let x = i * 2654435761;
  for (let t = 0; t < TOUCHES_PER_UNIT; t += 1) {
    x = (x * 1103515245 + 12345) >>> 0;
    const o = heap[x % HEAP_OBJECTS];
    o.n += 1;
    sum += o.s.length;
  }
  return sum;
}

/** One webhook's worth of CPU work; returns something derived from it so nothing is optimised away. */
function unit(i: number): number {
  const payload = JSON.stringify({
    webhookId: randomUUID(),
    resourceType: 'Transaction',
    action: 'create',
    createdAtUtc: new Date().toISOString(),
    data: {
      id: randomUUID(),
      walletId: randomUUID(),
      tokenId: randomUUID(),
      amount: String(i),
      status: 'confirmed',
      contractAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      blockchainTokenId: String(i * 7),
    },
  });
  const signature = createHmac('sha256', SECRET).update(`${i}.${Date.now()}.${payload}`).digest('base64');
  const back = JSON.parse(payload) as { data: { amount: string } };
  return signature.length + back.data.amount.length + (heap.length > 0 ? touchHeap(i) : 0);
}

/** In a child: work for SECONDS of wall time, then report units per CPU second. */
function child(withHeap: boolean): void {
  if (withHeap) heap = Array.from({ length: HEAP_OBJECTS }, (_, n) => ({ n, s: `entry-${n}` }));
  let sink = 0;
  let done = 0;
  const cpu = process.cpuUsage();
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) {
    for (let k = 0; k < 200; k += 1) sink += unit(done + k);
    done += 200;
  }
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  process.send!({ perCpuSecond: done / cpuSeconds, cpuSeconds, sink });
}

async function run(processes: number, withHeap: boolean): Promise<{ perCpuSecond: number; cpuSeconds: number }[]> {
  return Promise.all(
    Array.from(
      { length: processes },
      () =>
        new Promise<{ perCpuSecond: number; cpuSeconds: number }>((resolve, reject) => {
          const worker = fork(__filename, ['child', withHeap ? 'heap' : 'cpu'], { execArgv: process.execArgv });
          worker.once('message', (message) => resolve(message as { perCpuSecond: number; cpuSeconds: number }));
          worker.once('error', reject);
        }),
    ),
  );
}

async function main(): Promise<void> {
  const results: Record<string, Record<string, number[]>> = {};
  for (const withHeap of [false, true]) {
    const label = withHeap ? `with a ${HEAP_OBJECTS.toLocaleString('en')}-object heap` : 'CPU only';
    const byCount: Record<string, number[]> = {};
    // A first round to warm the machine up, not counted; then 1, 2, 3 and back, so that a linear
    // drift of the machine over the rounds cancels out of each count's mean.
    await run(1, withHeap);
    let alone = 0;
    for (const processes of [1, 2, 3, 3, 2, 1]) {
      const rounds = await run(processes, withHeap);
      const mean = rounds.reduce((sum, r) => sum + r.perCpuSecond, 0) / rounds.length;
      if (processes === 1 && alone === 0) alone = mean;
      console.log(
        `${label}, ${processes} process(es) side by side: ${Math.round(mean)} units per CPU second each ` +
          `(${(mean / alone).toFixed(3)} of one alone; CPU s each ${rounds.map((r) => r.cpuSeconds.toFixed(2)).join(', ')})`,
      );
      byCount[processes] = [...(byCount[processes] ?? []), Math.round((mean / alone) * 1000) / 1000];
    }
    results[label] = byCount;
    const mean = (n: number) => byCount[n].reduce((a, b) => a + b, 0) / byCount[n].length;
    console.log(`${label}: 3 processes on 2 cores do ${(mean(3) / mean(2)).toFixed(3)} of the work per CPU second that 2 do`);
  }
  console.log(JSON.stringify({ relativeWorkPerCpuSecond: results }));
}

if (process.argv[2] === 'child') child(process.argv[3] === 'heap');
else
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
