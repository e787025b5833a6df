const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

export type JsonBodyViolation = 'tooDeep' | 'invalidCharacter';

/** The UTF-16 code unit of a `\uXXXX` escape whose backslash is at `at`, or -1. */
function escapedCodeUnit(body: Uint8Array, at: number): number {
  if (body[at] !== BACKSLASH || body[at + 1] !== LOWER_U) return -1;
  const hex = String.fromCharCode(body[at + 2], body[at + 3], body[at + 4], body[at + 5]);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? parseInt(hex, 16) : -1;
}

/**
 * Judges JSON text on its raw bytes, before it is parsed:
 * - nesting deeper than `maxDepth`: validation and serialization walk bodies recursively, so a
 *   deep enough body would cost a stack overflow or seconds of CPU;
 * - a `\u0000` escape or an unpaired surrogate escape (`\ud800` alone) in a string: PostgreSQL
 *   text cannot hold U+0000 and jsonb refuses unpaired surrogates, so such a value would fail
 *   deep inside a write (an audit entry, an event's changes) instead of being refused as bad
 *   input. Raw UTF-8 cannot carry either, so the escapes are the only way in.
 * Brackets inside strings do not count; UTF-8 never puts these ASCII bytes inside a multi-byte
 * character, and raw control bytes inside strings are already invalid JSON.
 */
export function findJsonBodyViolation(body: Uint8Array, maxDepth: number): JsonBodyViolation | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) {
        const unit = escapedCodeUnit(body, i);
        if (unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return 'invalidCharacter';
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = escapedCodeUnit(body, i + 6);
          if (low < 0xdc00 || low > 0xdfff) return 'invalidCharacter';
          i += 6;
        }
        i += unit >= 0 ? 5 : 1;
      } else if (byte === QUOTE) {
        inString = false;
      }
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > maxDepth) return 'tooDeep';
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
    }
  }
  return null;
}

/**
 * What body-parser's `verify` hook throws; `type` and `status` let the body-parser error
 * handler turn it into problem details.
 */
export class JsonBodyRuleError extends Error {
  readonly status = 400;
  readonly type: 'entity.too.deep' | 'entity.invalid.character';

  constructor(violation: JsonBodyViolation, maxDepth: number) {
    super(
      violation === 'tooDeep'
        ? `The request body is nested deeper than ${maxDepth} levels.`
        : 'Strings in the request body must not contain the NUL character (\\u0000) or unpaired surrogates.',
    );
    this.type = violation === 'tooDeep' ? 'entity.too.deep' : 'entity.invalid.character';
  }
}

export function enforceJsonBodyRules(maxDepth: number) {
  return (_req: unknown, _res: unknown, body: Buffer): void => {
    const violation = findJsonBodyViolation(body, maxDepth);
    if (violation) throw new JsonBodyRuleError(violation, maxDepth);
  };
}
