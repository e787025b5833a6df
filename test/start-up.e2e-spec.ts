import { execFile } from 'node:child_process';
import { createServer, Server } from 'node:net';
import { promisify } from 'node:util';
import { freePort } from './support/service-process';

const run = promisify(execFile);

describe('npm start', () => {
  // What `npm start` runs first: builds dist/ when a source is newer than the last build (the
  // first time here, or after an edit), and otherwise says it is up to date within a second.
  beforeAll(async () => {
    const { stdout } = await run(process.execPath, ['scripts/build-if-stale.js'], { timeout: 240_000 });
    expect(stdout).toMatch(
      /^(building dist\/ \(about 40 s\): .+ changed since the last build|building dist\/ \(about 40 s\): no complete build in dist\/ yet|dist\/ is up to date)/,
    );
  }, 250_000);

  it('does not build again when no source changed since the last build', async () => {
    const { stdout } = await run(process.execPath, ['scripts/build-if-stale.js'], { timeout: 30_000 });
    expect(stdout).toMatch(/^dist\/ is up to date \(built \d{4}-\d\d-\d\dT[^)]+\); not rebuilding\n$/);
  });

  describe('on a port another process holds', () => {
    let holder: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(port, resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => holder.close(resolve));
    });

    it('stops with exit code 1 and one line naming PORT, without a stack trace', async () => {
      const failure = await run(process.execPath, ['dist/src/main.js'], {
        env: { ...process.env, NODE_ENV: 'development', PORT: String(port) },
        timeout: 60_000,
      }).then(
        () => null,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failure).toMatchObject({ code: 1 });
      expect(failure!.stderr).toBe(
        `port ${port} is already in use by another process (an earlier start still running?): stop that process or set PORT to a free port\n`,
      );
      expect(failure!.stdout).toBe('');
    });
  });
});
