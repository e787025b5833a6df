/**
 * `npm run client:generate`: regenerates the typed TypeScript client's types,
 * clients/typescript/src/schema.ts, from the OpenAPI document of the built service (it builds
 * first; PostgreSQL must be reachable at DATABASE_URL). test/openapi-conformance.e2e-spec.ts fails
 * when the committed file differs from what this writes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { portableDocumentEnv, writeBuiltOpenApiDocument } from './openapi-document';

export const CLIENT_SCHEMA = resolve(__dirname, '..', 'clients', 'typescript', 'src', 'schema.ts');

const run = promisify(execFile);
// The package's export map would turn bin/cli.js into a file it does not ship: go by its folder.
const CLI = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');

/** The client's types for the document at `documentPath`, as openapi-typescript writes them. */
export async function clientSchemaFor(documentPath: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'client-schema-'));
  try {
    const out = join(dir, 'schema.ts');
    await run(process.execPath, [CLI, documentPath, '--output', out], { timeout: 60_000 });
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'client-document-'));
  try {
    const documentPath = join(dir, 'openapi.json');
    await writeBuiltOpenApiDocument(documentPath, portableDocumentEnv(process.env));
    writeFileSync(CLIENT_SCHEMA, await clientSchemaFor(documentPath));
    process.stdout.write(`wrote ${CLIENT_SCHEMA}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
