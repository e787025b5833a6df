import type { OpenAPIObject } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { EVM_ADDRESS_PATTERN } from '../common/evm-address';
import {
  CORE_ERROR_CODES,
  codesForStatus,
  ERROR_CATALOGUE,
  isCoreErrorCode,
  type CoreErrorCode,
  type OperationTrait,
} from '../common/errors/error-catalogue';
import { problemType } from '../common/errors/problem-details';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export const PROBLEM_SCHEMA_NAME = 'ProblemDetails';

/** RFC 9457 problem details as every error answer carries them (src/common/errors/problem-details.ts). */
const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
  properties: {
    type: { type: 'string', description: '`/problems/` and the code in kebab case.' },
    title: { type: 'string', description: 'The reason phrase of the status.' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What went wrong, for people.' },
    code: { type: 'string', description: 'Stable and machine-readable; docs/ERRORS.md lists every code.' },
    requestId: { type: ['string', 'null'], description: 'Echo of `x-request-id`.' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { index: { type: 'integer' }, field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** Answers that tell the client when to try again (the rate limit, a busy database). */
const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
};
/** Every 401 carries the challenge (RFC 9110 §11.6.1). */
const CHALLENGE = {
  'WWW-Authenticate': { description: 'Always `Bearer`.', required: true, schema: { type: 'string', const: 'Bearer' } },
};

/** What the rest of the service knows about an operation and the document cannot say. */
export interface OperationFacts {
  /** False for the routes the rate limit skips (the probes). */
  rateLimited: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is walked as plain JSON
type Json = Record<string, any>;

/**
 * The codes an error answer of `status` names in its description: catalogue codes of that status
 * only, or the document would promise a code the service never sends with it.
 */
export function codesNamedIn(status: number, description: string | undefined): CoreErrorCode[] {
  return [...new Set((description ?? '').match(/\b[A-Z][A-Z_]{3,}[A-Z]\b/g) ?? [])].filter(
    (word): word is CoreErrorCode => isCoreErrorCode(word) && ERROR_CATALOGUE[word].status === status,
  );
}

/**
 * The codes an error answer of `status` documents: those its description names, or, where it
 * names none, every catalogue code of that status (kept for answers with no rule behind them).
 */
export function problemCodesFor(status: number, description: string | undefined): CoreErrorCode[] {
  const named = codesNamedIn(status, description);
  return named.length > 0 ? named : codesForStatus(status);
}

/** Follows a local `$ref` (one level at a time) so body schemas can be searched. */
function resolve(document: OpenAPIObject, schema: Json | undefined): Json | undefined {
  if (!schema || typeof schema.$ref !== 'string') return schema;
  const name = String(schema.$ref).split('/').pop() ?? '';
  const found: unknown = document.components?.schemas?.[name];
  return found as Json | undefined;
}

/** Whether any schema reachable from `schema` is an EVM address (its pattern says so). */
function holdsAddress(document: OpenAPIObject, schema: Json | undefined, seen = new Set<Json>()): boolean {
  const target = resolve(document, schema);
  if (!target || typeof target !== 'object' || seen.has(target)) return false;
  seen.add(target);
  if (target.pattern === EVM_ADDRESS_PATTERN) return true;
  const children = [
    target.items,
    target.additionalProperties,
    ...Object.values<Json>((target.properties ?? {}) as Record<string, Json>),
    ...((target.allOf ?? []) as Json[]),
    ...((target.anyOf ?? []) as Json[]),
    ...((target.oneOf ?? []) as Json[]),
  ];
  return children.some((child) => child && typeof child === 'object' && holdsAddress(document, child as Json, seen));
}

/** The traits of one operation, read from the document (and `facts` for what it cannot say). */
export function operationTraits(document: OpenAPIObject, operation: Json, facts: OperationFacts): Set<OperationTrait> {
  const traits = new Set<OperationTrait>(['any']);
  if (facts.rateLimited) traits.add('rateLimited');
  const schemes = ((operation.security ?? []) as Json[]).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes('apiKey')) traits.add('apiKey');
  if (schemes.includes('operatorKey')) traits.add('operatorKey');
  if (schemes.length > 0) traits.add('guarded');
  const parameters = (operation.parameters ?? []) as Json[];
  const body = operation.requestBody as Json | undefined;
  if (parameters.length > 0 || body) traits.add('input');
  if (body) traits.add('jsonBody');
  for (const parameter of parameters) {
    const schema = resolve(document, parameter.schema as Json | undefined);
    if (parameter.in === 'path') {
      traits.add(`path:${parameter.name as string}`);
      if (schema?.format === 'uuid') traits.add('uuidPath');
    }
    if (parameter.in === 'query' && parameter.name === 'pageKey') traits.add('pageKey');
    if (parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key') traits.add('idempotencyKey');
    if (holdsAddress(document, schema)) traits.add('address');
  }
  if (
    body &&
    holdsAddress(document, (body.content as Record<string, Json> | undefined)?.['application/json']?.schema as Json | undefined)
  ) {
    traits.add('address');
  }
  return traits;
}

/** The error answers an operation with these traits can give: status to codes, in catalogue order. */
export function codesByStatus(traits: ReadonlySet<OperationTrait>): Map<number, CoreErrorCode[]> {
  const out = new Map<number, CoreErrorCode[]>();
  for (const code of CORE_ERROR_CODES) {
    const spec = ERROR_CATALOGUE[code] as { status: number; documentedOn?: readonly OperationTrait[] };
    if (!spec.documentedOn?.some((trait) => traits.has(trait))) continue;
    out.set(spec.status, [...(out.get(spec.status) ?? []), code]);
  }
  return out;
}

/**
 * Makes every operation list every error status it can answer with, each with an
 * `application/problem+json` body and one example per code: the codes the catalogue documents on
 * the operation's traits (its inputs, path ids, credential, the rate limit), plus those a route's
 * own response description names. A path parameter with no not-found code in the catalogue stops
 * the build of the document, so a new id cannot leave its 404 undocumented.
 */
export function describeProblemAnswers(
  document: OpenAPIObject,
  factsOf: (method: string, path: string) => OperationFacts = () => ({ rateLimited: true }),
): void {
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas[PROBLEM_SCHEMA_NAME] = PROBLEM_SCHEMA as never;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const traits = operationTraits(document, operation, factsOf(method, path));
      const derived = codesByStatus(traits);
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in === 'path' && !derived.get(404)?.some((code) => hasTrait(code, `path:${parameter.name as string}`))) {
          throw new Error(`${method.toUpperCase()} ${path}: no error code is documented on path:${parameter.name as string}.`);
        }
      }
      // Copies: Nest shares one response object among the operations of a controller-level decorator.
      const responses = Object.fromEntries(
        Object.entries((operation.responses ?? {}) as Record<string, Json>).map(([status, response]) => [status, { ...response }]),
      );
      for (const [status, codes] of derived) {
        responses[String(status)] ??= { description: `${STATUS_CODES[status] ?? 'Error'}: ${codes.join(', ')}.` };
      }
      for (const [key, response] of Object.entries(responses)) {
        const status = Number(key);
        if (!response || !(status >= 400) || '$ref' in response || response.content) continue;
        const named = codesNamedIn(status, response.description as string | undefined);
        const codes = [...new Set([...(derived.get(status) ?? []), ...named])];
        const listed = codes.length > 0 ? CORE_ERROR_CODES.filter((code) => codes.includes(code)) : codesForStatus(status);
        response.content = {
          'application/problem+json': {
            schema: { $ref: `#/components/schemas/${PROBLEM_SCHEMA_NAME}` },
            examples: Object.fromEntries(listed.map((code) => [code, problemExample(code)])),
          },
        };
        if (status === 429 || status === 503) {
          response.headers = { ...RETRY_AFTER, ...(response.headers as Json | undefined) };
        }
        if (status === 401) response.headers = { ...CHALLENGE, ...(response.headers as Json | undefined) };
      }
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
}

function hasTrait(code: CoreErrorCode, trait: OperationTrait): boolean {
  return ((ERROR_CATALOGUE[code] as { documentedOn?: readonly OperationTrait[] }).documentedOn ?? []).includes(trait);
}

function problemExample(code: CoreErrorCode) {
  const { status, title, meaning } = ERROR_CATALOGUE[code];
  return {
    summary: meaning,
    value: { type: problemType(code), title, status, detail: meaning, code, requestId: '5f0c6a7e-0000-4000-8000-000000000000' },
  };
}
