import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DomainError, notFound, unprocessable } from './domain-error';
import {
  CORE_ERROR_CODES,
  ERROR_CATALOGUE,
  codesForStatus,
  isCoreErrorCode,
  renderErrorTable,
  statusTitle,
  withErrorTable,
} from './error-catalogue';
import { STATUS_CODE_NAMES } from './problem-details';

const SRC = resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every `code` literal handed to the ways src builds a problem, with the status when it is written beside it. */
function thrownCodes(): { file: string; code: string; status: number | null }[] {
  const found: { file: string; code: string; status: number | null }[] = [];
  const patterns: [RegExp, number | null][] = [
    [/\bbadRequest\(\s*'([A-Z_]+)'/g, 400],
    [/\bnotFound\(\s*'([A-Z_]+)'/g, 404],
    [/\bconflict\(\s*'([A-Z_]+)'/g, 409],
    [/\bunprocessable\(\s*'([A-Z_]+)'/g, 422],
  ];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const rel = file.slice(SRC.length + 1);
    for (const [pattern, status] of patterns) {
      for (const m of text.matchAll(pattern)) found.push({ file: rel, code: m[1], status });
    }
    // new DomainError(status, 'CODE', …) and buildProblem(status, 'CODE', …)
    for (const m of text.matchAll(/\b(?:new DomainError|buildProblem)\(\s*(\d{3}),\s*'([A-Z_]+)'/g)) {
      found.push({ file: rel, code: m[2], status: Number(m[1]) });
    }
    // Refusals that carry a code as data (the rest are typed ErrorCode, e.g. transaction-batch.rules.ts): { status: 404, code: 'TOKEN_NOT_FOUND', … }
    for (const m of text.matchAll(/status: (\d{3}), code: '([A-Z_]+)'/g)) found.push({ file: rel, code: m[2], status: Number(m[1]) });
  }
  return found;
}

describe('error catalogue', () => {
  it('docs/ERRORS.md carries the table the catalogue generates (run `npm run docs:errors` after changing it)', () => {
    const readme = readFileSync(resolve(SRC, '../docs/ERRORS.md'), 'utf8');
    expect(readme).toContain(renderErrorTable());
    expect(withErrorTable(readme)).toBe(readme);
  });

  it('gives each code the title problem answers carry for its status', () => {
    for (const code of CORE_ERROR_CODES)
      expect([code, ERROR_CATALOGUE[code].title]).toEqual([code, statusTitle(ERROR_CATALOGUE[code].status)]);
  });

  it('lists every code src throws or builds, with the status it is thrown with', () => {
    const found = thrownCodes();
    // The scan must see the throws, or this test could not fail.
    expect(found.length).toBeGreaterThan(60);
    const unknown = found.filter((f) => !isCoreErrorCode(f.code));
    expect(unknown).toEqual([]);
    const wrongStatus = found.filter((f) => f.status !== null && isCoreErrorCode(f.code) && ERROR_CATALOGUE[f.code].status !== f.status);
    expect(wrongStatus).toEqual([]);
  });

  it('lists the generic code of every status the framework raises, with that status', () => {
    for (const [status, code] of Object.entries(STATUS_CODE_NAMES)) {
      expect(isCoreErrorCode(code)).toBe(true);
      expect(codesForStatus(Number(status))).toContain(code);
    }
  });

  it('refuses, at compile time, a code not in the catalogue or a status not its own', () => {
    // @ts-expect-error a free string is not a code
    expect(() => notFound('NO_SUCH_CODE', 'x')).not.toThrow();
    // @ts-expect-error WALLET_NOT_FOUND is a 404, not a 422
    expect(unprocessable('WALLET_NOT_FOUND', 'x').status).toBe(422);
    // @ts-expect-error CHAIN_MANAGED is a 422
    expect(new DomainError(404, 'CHAIN_MANAGED', 'x').code).toBe('CHAIN_MANAGED');
    expect(new DomainError(503, 'NOT_READY', 'x').status).toBe(503);
  });
});
