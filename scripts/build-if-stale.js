// Run by `npm start` before the service starts: builds dist/ only when a source is newer than
// the last successful build, and says so, instead of a silent 40-second build on every start.
// Plain CommonJS run by node itself, so that checking costs milliseconds.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
// Written after a successful build; `nest build` empties dist/ first, so a failed build leaves none.
const stamp = path.join(root, 'dist', '.build-stamp');
const sourceDirs = ['src', 'migrations'];
const sourceFiles = () =>
  readdirSync(root).filter((name) => /^tsconfig.*\.json$/.test(name) || name === 'nest-cli.json' || name === 'package.json');

/**
 * Every file under `dir`, with its modification time.
 * @param {string} dir
 * @returns {{ file: string, mtimeMs: number }[]}
 */
function filesIn(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? filesIn(file) : [{ file, mtimeMs: statSync(file).mtimeMs }];
  });
}

/** Why dist/ must be rebuilt, or null when it is up to date. */
function staleness() {
  if (!existsSync(stamp)) return 'no complete build in dist/ yet';
  const builtAt = statSync(stamp).mtimeMs;
  const sources = [
    ...sourceDirs.flatMap((dir) => filesIn(path.join(root, dir))),
    ...sourceFiles().map((name) => ({ file: path.join(root, name), mtimeMs: statSync(path.join(root, name)).mtimeMs })),
  ];
  const newer = sources.filter((s) => s.mtimeMs > builtAt).sort((a, b) => b.mtimeMs - a.mtimeMs);
  if (newer.length === 0) return null;
  const more = newer.length > 1 ? ` and ${newer.length - 1} more file(s)` : '';
  return `${path.relative(root, newer[0].file)}${more} changed since the last build`;
}

const reason = staleness();
if (reason === null) {
  process.stdout.write(`dist/ is up to date (built ${new Date(statSync(stamp).mtimeMs).toISOString()}); not rebuilding\n`);
  process.exit(0);
}
process.stdout.write(`building dist/ (about 40 s): ${reason}\n`);
const startedAt = new Date();
const build = spawnSync(process.platform === 'win32' ? 'npx.cmd' : 'npx', ['nest', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  process.stderr.write(`the build failed (exit code ${build.status ?? build.signal}); see the errors above\n`);
  process.exit(build.status ?? 1);
}
// Dated from the build's start: a source saved while it ran is newer, and builds the next time.
writeFileSync(stamp, `${startedAt.toISOString()}\n`);
utimesSync(stamp, startedAt, startedAt);
process.stdout.write('build done\n');
