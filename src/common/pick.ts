/**
 * The named fields of an object, copied: how an answer takes over the fields it shows as they
 * are, so a mapper spells out only what it turns into another form.
 */
export function pick<T extends object, K extends keyof T>(source: T, ...keys: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = source[key];
  return out;
}
