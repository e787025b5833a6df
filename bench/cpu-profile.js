/**
 * Preloaded into the service by `BENCH_CPU_PROF=<dir> npm run bench` (node -r): records a CPU
 * profile and writes it when the process is told to stop. Node's own --cpu-prof writes only on a
 * normal exit, which a process ended by SIGTERM never reaches.
 */
const { Session } = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const path = require('node:path');

const dir = process.env.BENCH_CPU_PROF_DIR;
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 200 });
session.post('Profiler.start');
process.prependListener('SIGTERM', () => {
  session.post('Profiler.stop', (error, result) => {
    if (error || !dir) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${process.env.ROLE ?? 'all'}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
