// Shared by the OpenAPI document and the event catalogue, whose served schemas must read alike.
/**
 * OpenAPI 3.1 has no `nullable`: a nullable schema becomes a type array including "null" (and
 * null joins its enum), and a nullable reference or composition becomes `anyOf` with
 * `{type: "null"}`. Everything else is left as it is.
 */
export function toOpenApi31Nullability<T>(value: T): T {
  if (Array.isArray(value)) return (value as unknown[]).map((item) => toOpenApi31Nullability(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(source)) {
    // Only the keyword (a boolean): a property that happens to be called "nullable" stays.
    if (key === 'nullable' && typeof child === 'boolean') continue;
    out[key] = toOpenApi31Nullability(child);
  }
  if (source.nullable !== true) return out as T;

  // Nest writes a nullable reference as `type: object` beside `allOf: [$ref]`: a composition still.
  const composed = ['$ref', 'allOf', 'oneOf', 'anyOf'].some((key) => key in out);
  if (!composed && (typeof out.type === 'string' || Array.isArray(out.type))) {
    const types = [out.type].flat() as string[];
    out.type = types.includes('null') ? types : [...types, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
    return out as T;
  }
  // A $ref, allOf, oneOf or anyOf: say "this, or null" without touching what it refers to.
  const { description, example, examples, title, default: fallback, readOnly, writeOnly, deprecated, type, ...rest } = out;
  // `type` beside a composition is Nest's, and would refuse the null; its one-member allOf is that member.
  const nestReference = type !== undefined && Object.keys(rest).length === 1 && Array.isArray(rest.allOf) && rest.allOf.length === 1;
  const schema = nestReference ? (rest.allOf as unknown[])[0] : composed ? rest : { type, ...rest };
  const annotations = Object.fromEntries(
    Object.entries({ title, description, example, examples, default: fallback, readOnly, writeOnly, deprecated }).filter(
      ([, v]) => v !== undefined,
    ),
  );
  return { ...annotations, anyOf: [schema, { type: 'null' }] } as T;
}
