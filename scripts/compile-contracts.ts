/**
 * `npm run contracts:compile`: compiles the test contracts of contracts/*.sol with the npm `solc`
 * package (offline: imports are read from node_modules, nothing is downloaded) and writes each
 * contract's ABI and creation bytecode to test/support/contracts/<Name>.json. The JSON files are
 * committed, so tests and benches never compile; run this after changing a contract.
 * `-- --check` only compares and exits 1 when a committed artifact is out of date.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as prettier from 'prettier';
// solc ships no types for its CommonJS entry point's compile function beyond this shape.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as {
  compile(input: string, callbacks: { import(path: string): { contents: string } | { error: string } }): string;
  version(): string;
};

const ROOT = resolve(__dirname, '..');
const SOURCES = join(ROOT, 'contracts');
const OUT = join(ROOT, 'test/support/contracts');
const NODE_MODULES = join(ROOT, 'node_modules');

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** Resolves `@openzeppelin/...` (and any other package import) inside node_modules. */
function findImport(path: string): { contents: string } | { error: string } {
  const file = join(NODE_MODULES, path);
  if (!file.startsWith(NODE_MODULES) || !existsSync(file)) return { error: `not found: ${path}` };
  return { contents: readFileSync(file, 'utf8') };
}

async function main(): Promise<number> {
  const files = readdirSync(SOURCES).filter((f) => f.endsWith('.sol'));
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(SOURCES, f), 'utf8') }])),
    settings: {
      // Cancun matches anvil's default hardfork; the optimizer keeps mintMany cheap per token.
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  for (const e of output.errors ?? []) process.stderr.write(e.formattedMessage + '\n');
  if (errors.length > 0) return 1;

  const check = process.argv.includes('--check');
  const prettierConfig = (await prettier.resolveConfig(join(OUT, 'x.json'))) ?? {};
  let stale = 0;
  for (const file of files) {
    // Only the contracts declared in our own files; OpenZeppelin's bases are not artifacts.
    for (const [name, contract] of Object.entries(output.contracts?.[file] ?? {})) {
      const artifact = {
        contractName: name,
        compiler: `solc ${solc.version()}`,
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
      };
      const text = await prettier.format(JSON.stringify(artifact), { ...prettierConfig, parser: 'json' });
      const target = join(OUT, `${name}.json`);
      if (check) {
        if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
          process.stderr.write(`${target} is out of date: run npm run contracts:compile\n`);
          stale++;
        }
      } else {
        writeFileSync(target, text);
        process.stdout.write(`wrote ${target}\n`);
      }
    }
  }
  return stale > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
