import { z } from 'zod';
import { parseDuration } from './duration';

/** A configuration the process cannot start with; its message names every variable at fault. */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;
export type Fail = (message: string) => null;

/** What a section's variables read into (its part of the parsed environment). */
export type Parsed<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape>>;

const BOOLEANS = new Map(Object.entries({ true: true, 1: true, yes: true, on: true, false: false, 0: false, no: false, off: false }));

/**
 * One environment variable: unset or blank takes `fallback`; otherwise `read` returns its value,
 * or calls `fail` (the message is prefixed with the variable's name) and returns null.
 */
export const variable = <T>(fallback: T, read: (text: string, fail: Fail) => T | null) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      const text = raw?.trim() ?? '';
      if (text === '') return fallback;
      const fail: Fail = (message) => (ctx.addIssue({ code: z.ZodIssueCode.custom, message }), null);
      return read(text, fail) ?? z.NEVER;
    });
/** A variable with one rule, said as `must be <rule>`; the value is echoed unless it may be a secret. */
export const rule = <T>(fallback: T, must: string, read: (text: string) => T | null, echo = true) =>
  variable(fallback, (text, fail) => read(text) ?? fail(`must be ${must}${echo ? ` (got "${text}")` : ''}`));

export const text = (fallback: string) => variable(fallback, (t) => t);
export const int = <F extends number | null>(fallback: F, min: number, max: number) =>
  rule<number | F>(fallback, `an integer between ${min} and ${max}`, (t) => {
    const n = Number(t);
    return Number.isInteger(n) && n >= min && n <= max ? n : null;
  });
export const bool = (fallback: boolean) => rule(fallback, 'true or false', (t) => BOOLEANS.get(t.toLowerCase()) ?? null);
export const duration = (fallback: number) =>
  rule(fallback, 'a duration such as 500ms, 5s, 2m, 1h or 30d', (t) => {
    const ms = parseDuration(t) ?? (/^\d+$/.test(t) ? Number(t) : null);
    return ms !== null && ms > 0 ? ms : null;
  });
export const oneOf = <V extends string>(fallback: V, values: readonly V[], must: string) =>
  rule<V>(fallback, must, (t) => ((values as readonly string[]).includes(t) ? (t as V) : null));
export const url = <F extends string | null>(fallback: F, protocols: string[]) =>
  rule<string | F>(fallback, `a ${protocols.join(' or ')} URL`, (t) => (protocols.includes(protocolOf(t)) ? t : null), false);
export const secret = rule<string | null>(null, 'at least 16 characters', (t) => (t.length >= 16 ? t : null), false);

/** The URL's scheme with its colon, or '' when it is not a URL (URL.parse needs Node 20.18). */
export const protocolOf = (text: string): string => (URL.canParse(text) ? new URL(text).protocol : '');

/** 32 bytes in canonical base64 (Buffer.from alone skips characters it does not know). */
export function key32(text: string): Buffer | null {
  const decoded = Buffer.from(text, 'base64');
  return decoded.length === 32 && decoded.toString('base64').replace(/=+$/, '') === text.replace(/=+$/, '') ? decoded : null;
}
