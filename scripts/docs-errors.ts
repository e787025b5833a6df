/**
 * `npm run docs:errors`: writes the error table of docs/ERRORS.md (between its generated markers) from
 * the error catalogue, src/common/errors/error-catalogue.ts. `-- --check` only compares and exits
 * 1 when the table is out of date. Needs nothing running.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { withErrorTable } from '../src/common/errors/error-catalogue';

const ERRORS_PAGE = resolve(__dirname, '../docs/ERRORS.md');

const current = readFileSync(ERRORS_PAGE, 'utf8');
const next = withErrorTable(current);
if (process.argv.includes('--check')) {
  if (current !== next) {
    process.stderr.write('The error table of docs/ERRORS.md is out of date: run npm run docs:errors\n');
    process.exit(1);
  }
} else {
  writeFileSync(ERRORS_PAGE, next);
  process.stdout.write(`wrote the error table of ${ERRORS_PAGE}\n`);
}
