/**
 * Lints the OpenAPI document the service serves at /docs-json with Redocly (recommended rules;
 * any error fails the run, warnings are shown):
 *
 *   npm run lint:openapi            (builds first; PostgreSQL must be reachable at DATABASE_URL)
 *
 * The document is the built application's (scripts/openapi-document.ts), in a temporary file.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBuiltOpenApiDocument } from './openapi-document';

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const path = join(dir, 'openapi.json');
  try {
    await writeBuiltOpenApiDocument(path);
    execFileSync(process.execPath, [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--format=codeframe', path], { stdio: 'inherit' });
  } catch (error) {
    // Redocly has printed its report; anything else is printed here.
    if (!(error instanceof Error && 'status' in error)) throw error;
    process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
