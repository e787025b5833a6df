import { AddressInfo, createServer as createNetServer } from 'node:net';
import { join, resolve } from 'node:path';

/** Small helpers every benchmark uses. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (nearest rank) of the values; NaN for none. */
export const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The median of some numbers (the middle one, or the mean of the middle two); NaN for none. */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createNetServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => res(port));
    });
  });
}

/** The node flags `npm start` gives the service (package.json's start script). */
const SERVICE_NODE_FLAGS = '--max-semi-space-size=64';

/**
 * The node arguments a bench starts a service process with, before its script: `npm start`'s flags
 * unless BENCH_NODE_FLAGS says otherwise, and the CPU profiler preloaded when BENCH_CPU_PROF names
 * a directory (the process then needs `cpuProfileEnv()` too).
 */
export function serviceNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const flags = (env.BENCH_NODE_FLAGS ?? SERVICE_NODE_FLAGS).split(' ').filter((f) => f !== '');
  return [...flags, ...(env.BENCH_CPU_PROF ? ['-r', join(__dirname, 'cpu-profile.js')] : [])];
}

/** Where a profiled service process writes its profile (none when BENCH_CPU_PROF is unset). */
export function cpuProfileEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env.BENCH_CPU_PROF ? { BENCH_CPU_PROF_DIR: resolve(env.BENCH_CPU_PROF) } : {};
}
