import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestApp, TestApp, testEnv } from './support/test-app';

/**
 * README.md's shell blocks are what a newcomer pastes first. They cannot be run literally here
 * (they install, build and hold port 3000), so this suite runs what they name: every `npm run`
 * script exists, every CLI command runs against a real database and prints what README says, and
 * every curl names a route the service documents, with the method it is sent with.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SCRIPTS = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

/** Every command line of README's bash and sh blocks, continuation lines joined, comments dropped. */
function readmeCommands(): string[] {
  const blocks = [...README.matchAll(/```(?:bash|sh)\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.flatMap((block) =>
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .filter((line) => line.length > 0),
  );
}

/** The shell words of one line, quotes removed (enough for README's commands: no nesting). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

const COMMANDS = readmeCommands();

/** `npm run [-s] <script> [-- args]` anywhere in a line (also after `&&` or inside `$(…)`). */
const npmRuns = COMMANDS.flatMap((line) =>
  [...line.matchAll(/npm run (?:-s )?([\w:.-]+)([^&|;)]*)/g)].map((m) => ({ line, script: m[1], rest: m[2] })),
);

/** A curl's method and path on the local service. */
const curls = COMMANDS.filter((line) => /\bcurl\b/.test(line)).map((line) => {
  const w = words(line);
  const methodAt = w.findIndex((word) => word === '-X' || word === '--request');
  const url = w.find((word) => /localhost:3000\//.test(word));
  const data = w.some((word) => word === '-d' || word === '--data' || word === '--data-raw');
  return { line, method: methodAt >= 0 ? w[methodAt + 1] : data ? 'POST' : 'GET', url };
});

describe("README.md's shell blocks", () => {
  let t: TestApp;
  let document: { paths: Record<string, Record<string, unknown>> };

  beforeAll(async () => {
    t = await createTestApp();
    document = (await t.http().get('/docs-json').expect(200)).body as typeof document;
  });
  afterAll(async () => {
    await t.close();
  });

  it('has the commands this suite reads', () => {
    expect(npmRuns.length).toBeGreaterThan(0);
    expect(curls.length).toBeGreaterThan(0);
  });

  it('names only npm scripts that exist', () => {
    const missing = npmRuns.filter(({ script }) => !SCRIPTS.includes(script)).map(({ line }) => line);
    expect(missing).toEqual([]);
  });

  it('curls only routes the service has, with the method it accepts', () => {
    /** The service's own paths beside the OpenAPI document's operations. */
    const undocumented = ['/docs', '/docs-json', '/portal'];
    const unknown = curls
      .filter(({ url }) => url !== undefined)
      .filter(({ method, url }) => {
        const path = new URL(url!.replace(/^(?!https?:)/, 'http://')).pathname;
        if (undocumented.includes(path)) return false;
        return !Object.entries(document.paths).some(([template, operations]) => {
          // A placeholder such as <organizationId>, $ORG_ID or ${ORG} stands for a path parameter.
          const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
          const concrete = path.replace(/<[^>]+>|\$\{?\w+\}?|%24%7B\w+%7D|%24\w+/g, 'x');
          return pattern.test(concrete) && method.toLowerCase() in operations;
        });
      })
      .map(({ line }) => line);
    expect(unknown).toEqual([]);
  });

  it('runs every CLI command it shows against a real database, each printing one JSON answer', async () => {
    const cli = npmRuns.filter(({ script }) => script === 'cli');
    expect(cli.length).toBeGreaterThan(0);
    const env = { ...process.env, ...testEnv(), DB_MIGRATE_ON_START: 'false' } as NodeJS.ProcessEnv;
    const created: Record<string, string> = {};
    for (const { rest } of cli) {
      // The arguments after `--`, with a placeholder for an id an earlier command printed.
      const args = words(rest.replace(/^\s*--\s*/, '')).map((word) =>
        word.replace(/<organizationId>|\$\{?ORG(?:ANIZATION)?_ID\}?/g, created.organizationId ?? word),
      );
      const { stdout } = await run(process.execPath, [require.resolve('ts-node/dist/bin'), '--swc', join(ROOT, 'src/cli.ts'), ...args], {
        cwd: ROOT,
        env,
        timeout: 120_000,
      });
      const answer = JSON.parse(stdout.trim().split('\n').pop()!) as { organization?: { id: string } };
      if (answer.organization) created.organizationId = answer.organization.id;
    }
    expect(created.organizationId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
