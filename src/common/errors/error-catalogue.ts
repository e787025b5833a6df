import { STATUS_CODES } from 'node:http';

/** One error the API can answer with: its HTTP status, the problem's `title`, and what it means. */
export interface ErrorSpec {
  readonly status: number;
  /** The problem's `title`: the status's reason phrase, as every answer carries it. */
  readonly title: string;
  /** One line for the table of docs/ERRORS.md and the OpenAPI examples. */
  readonly meaning: string;
  /**
   * The operations of the OpenAPI document that list this code, by what they have in common (see
   * `OperationTrait`). Codes without it are listed where a route's own response description names
   * them (the rules of one endpoint), or nowhere when `NOT_PER_OPERATION` says why.
   */
  readonly documentedOn?: readonly OperationTrait[];
}

/**
 * What makes an operation able to answer with a code, read from the OpenAPI document itself so a
 * new route inherits every code its inputs and guards can produce:
 * - `any`: every operation (an unexpected error);
 * - `rateLimited`: every operation the rate limit applies to (all but the probes);
 * - `apiKey`, `operatorKey`: operations behind that credential; `guarded`: behind either;
 * - `input`: operations with a parameter or a body; `jsonBody`: with a body;
 * - `uuidPath`: a path parameter of format uuid; `address`: a parameter or body field holding an
 *   EVM address; `pageKey`, `idempotencyKey`: that parameter;
 * - `path:<name>`: the path parameter `<name>`, whose unknown value is a 404 with this code.
 */
export type OperationTrait =
  | 'any'
  | 'rateLimited'
  | 'apiKey'
  | 'operatorKey'
  | 'guarded'
  | 'input'
  | 'jsonBody'
  | 'uuidPath'
  | 'address'
  | 'pageKey'
  | 'idempotencyKey'
  | `path:${string}`;

/** The reason phrase a problem's `title` carries for a status (what buildProblem writes). */
export const statusTitle = (status: number): string => STATUS_CODES[status] ?? 'Error';

/** What a catalogue entry says beyond its status: see `ErrorSpec`. */
interface CatalogueEntry {
  readonly meaning: string;
  readonly documentedOn?: readonly OperationTrait[];
}

/** The entries of one status, each titled with the status's reason phrase as every answer is. */
function answering<S extends number, C extends string>(
  status: S,
  entries: Record<C, CatalogueEntry>,
): Record<C, ErrorSpec & { status: S }> {
  const out = {} as Record<C, ErrorSpec & { status: S }>;
  for (const [code, { meaning, documentedOn }] of Object.entries(entries) as [C, CatalogueEntry][]) {
    out[code] = { status, title: statusTitle(status), meaning, ...(documentedOn && { documentedOn }) };
  }
  return out;
}

/**
 * Every problem `code` this service answers with. A `DomainError` and its helpers take a key of
 * this object (or of an extension's declared codes, see `ExtensionErrorCodes`), so a code that is
 * not listed here does not compile. docs/ERRORS.md's error table (`npm run docs:errors`) and the
 * OpenAPI document's problem examples are generated from it; codes and statuses are part of the
 * API: change neither.
 */
export const ERROR_CATALOGUE = {
  ...answering(400, {
    VALIDATION_FAILED: { meaning: 'A field is missing or malformed; `errors` names each one.', documentedOn: ['input'] },
    INVALID_ADDRESS: { meaning: 'An EVM address is malformed or its EIP-55 checksum is wrong.', documentedOn: ['address'] },
    INVALID_PAGE_KEY: { meaning: '`pageKey` is not a key returned by the same endpoint.', documentedOn: ['pageKey'] },
    INVALID_IDEMPOTENCY_KEY: { meaning: '`Idempotency-Key` is not 1 to 255 printable ASCII characters.', documentedOn: ['idempotencyKey'] },
    INVALID_PATH_PARAMETER: { meaning: 'An id in the path is not a UUID.', documentedOn: ['uuidPath'] },
    MALFORMED_JSON: { meaning: 'The request body is not valid JSON.', documentedOn: ['jsonBody'] },
    JSON_TOO_DEEP: { meaning: 'The request body nests deeper than allowed.', documentedOn: ['jsonBody'] },
    INVALID_CHARACTER: { meaning: 'The request body contains a character that is not allowed.', documentedOn: ['jsonBody'] },
    BAD_REQUEST: { meaning: 'The request could not be read (any other 400).', documentedOn: ['jsonBody'] },
  }),
  ...answering(401, {
    UNAUTHENTICATED: { meaning: 'No credential was sent (`Authorization: Bearer <key>`).', documentedOn: ['guarded'] },
    INVALID_API_KEY: { meaning: 'The API key (or operator key) is unknown or revoked.', documentedOn: ['guarded'] },
    INVALID_METRICS_TOKEN: { meaning: 'The `/metrics` bearer token is not valid.' },
  }),
  ...answering(403, {
    FORBIDDEN: { meaning: 'The API key lacks a role the route requires.', documentedOn: ['apiKey'] },
    MEDIA_LINK_INVALID: {
      meaning: 'A thumbnail link’s `sig` is missing or wrong, or its `exp` has passed: read the token again for a fresh link.',
    },
  }),
  ...answering(404, {
    NOT_FOUND: { meaning: 'Not found (a 404 raised by the framework).' },
    ROUTE_NOT_FOUND: { meaning: 'No route for this method and path (or this process serves no API).' },
    OPERATOR_API_DISABLED: { meaning: 'The operator API is disabled on this deployment.', documentedOn: ['operatorKey'] },
    ORGANIZATION_NOT_FOUND: { meaning: 'The organization does not exist.', documentedOn: ['path:organizationId'] },
    API_KEY_NOT_FOUND: { meaning: 'The API key does not exist in this organization.', documentedOn: ['path:apiKeyId'] },
    WALLET_NOT_FOUND: { meaning: 'The wallet is unknown, or another organization’s.', documentedOn: ['path:walletId'] },
    MEDIA_NOT_FOUND: {
      meaning: 'A rightly signed thumbnail link names no stored image or width.',
      documentedOn: ['path:sha256', 'path:file'],
    },
    TOKEN_NOT_FOUND: {
      meaning: 'The token is unknown, another organization’s, or hidden by the whitelist.',
      documentedOn: ['path:tokenId'],
    },
    TRANSACTION_NOT_FOUND: { meaning: 'The transaction is unknown, or another organization’s.', documentedOn: ['path:transactionId'] },
    CONTRACT_NOT_WHITELISTED: { meaning: 'The contract is not on the whitelist.', documentedOn: ['path:contractAddress'] },
    SPAM_OVERRIDE_NOT_FOUND: {
      meaning: 'The organization has no spam override for this chain and contract.',
      documentedOn: ['path:chainId'],
    },
    CONTRACT_NOT_FOUND: {
      meaning: 'The indexed contract is unknown, or another organization’s.',
      documentedOn: ['path:contractId', 'path:blockchainTokenId'],
    },
    WEBHOOK_NOT_FOUND: { meaning: 'The webhook is unknown, or another organization’s.', documentedOn: ['path:webhookId'] },
    WEBHOOK_ENDPOINT_NOT_FOUND: {
      meaning: 'The webhook endpoint is unknown, or another organization’s.',
      documentedOn: ['path:endpointId'],
    },
  }),
  ...answering(405, {
    METHOD_NOT_ALLOWED: { meaning: 'The method is not allowed on this path.' },
  }),
  ...answering(406, {
    NOT_ACCEPTABLE: { meaning: 'No representation matches the `Accept` header.' },
  }),
  ...answering(409, {
    CONFLICT: { meaning: 'The request conflicts with the current state (a 409 raised by the framework).' },
    TOKEN_ALREADY_EXISTS: { meaning: 'A token with this id already exists.' },
    SYNC_IN_PROGRESS: { meaning: 'The wallet has an open sync on the chain from another block; ask again once it has ended.' },
    CONTRACT_ALREADY_INDEXED: { meaning: 'The organization already indexes this contract on this chain.' },
  }),
  ...answering(413, {
    PAYLOAD_TOO_LARGE: { meaning: 'The request body is larger than `BODY_LIMIT_BYTES`.', documentedOn: ['jsonBody'] },
  }),
  ...answering(415, {
    UNSUPPORTED_MEDIA_TYPE: {
      meaning: 'The body is not `application/json`, or its encoding is not supported.',
      documentedOn: ['jsonBody'],
    },
  }),
  ...answering(422, {
    UNPROCESSABLE: { meaning: 'The request cannot be carried out (a 422 raised by the framework).' },
    CHAIN_MANAGED: { meaning: 'The token is followed on chain; only the chain moves it.' },
    INSUFFICIENT_BALANCE: { meaning: 'A wallet would hold less than zero of the token.' },
    BALANCE_OVERFLOW: { meaning: 'A wallet would hold more than 2^256-1 of the token.' },
    IDEMPOTENCY_KEY_REUSED: { meaning: 'The `Idempotency-Key` was used with a different request in the last 24 hours.' },
    WHITELIST_FULL: { meaning: 'The whitelist would exceed `WHITELIST_MAX_CONTRACTS`; nothing is added.' },
    API_KEY_LIMIT_REACHED: { meaning: 'The organization has the most active API keys allowed; revoke one first.' },
    ENDPOINT_LIMIT_REACHED: { meaning: 'The organization has the most webhook endpoints allowed; delete one first.' },
    DEFAULT_ENDPOINT: { meaning: 'The default endpoint cannot be deleted and has no description or filters.' },
    WEBHOOK_CONFIG_INCOMPLETE: { meaning: 'An enabled endpoint needs a url and a shared secret (or there is no secret to rotate).' },
    WEBHOOK_ENDPOINT_DELETED: { meaning: 'The webhook’s endpoint was deleted; it cannot be sent again.' },
    REPLAY_TOO_LARGE: { meaning: 'Too many webhooks match a replay; narrow the window or filters.' },
    OUTSIDE_RETENTION: { meaning: 'A replay reaches back past WEBHOOK_RETENTION; those webhooks are no longer kept.' },
    UNKNOWN_CHAIN: { meaning: 'The chain is not followed by this service.' },
    WALLET_HAS_NO_ADDRESS: { meaning: 'The wallet has no address (or the zero address), so it has no history on a chain.' },
    SYNC_RANGE_TOO_LARGE: { meaning: 'The requested chain sync range is larger than allowed.' },
    SYNC_LIMIT_REACHED: {
      meaning: 'The organization has the most open (pending or running) wallet syncs allowed; ask again once one has ended.',
    },
    CONTRACT_LIMIT_REACHED: { meaning: 'The organization indexes the most contracts allowed (20); delete one first.' },
    NOT_YET_INDEXED: { meaning: 'The block asked for is past the contract’s `indexedBlock`; ask again once it is indexed.' },
    BEFORE_INDEXED_RANGE: { meaning: 'The block (or time) asked for is before the contract’s `fromBlock`.' },
  }),
  ...answering(429, {
    RATE_LIMITED: { meaning: 'Too many requests (or webhook sends); retry after `Retry-After` seconds.', documentedOn: ['rateLimited'] },
  }),
  ...answering(500, {
    INTERNAL_ERROR: { meaning: 'An unexpected error; the log line with the same `requestId` tells more.', documentedOn: ['any'] },
  }),
  ...answering(503, {
    SERVICE_UNAVAILABLE: { meaning: 'PostgreSQL is unreachable or busy; retry shortly.', documentedOn: ['guarded'] },
    NOT_READY: { meaning: 'Readiness probe: PostgreSQL or Redis is unreachable.' },
  }),
} as const satisfies Record<string, ErrorSpec>;

/**
 * Codes no operation of the OpenAPI document lists, and why; every other code is listed by at
 * least one operation (test/openapi.e2e-spec.ts), so a new code cannot go undocumented.
 */
export const NOT_PER_OPERATION: Partial<Record<CoreErrorCode, string>> = {
  NOT_FOUND: 'raised by the framework only; routes answer with a specific code',
  ROUTE_NOT_FOUND: 'the answer when no operation matches',
  METHOD_NOT_ALLOWED: 'the answer when no operation matches',
  NOT_ACCEPTABLE: 'raised by the framework only',
  CONFLICT: 'raised by the framework only; routes answer with a specific code',
  UNPROCESSABLE: 'raised by the framework only; routes answer with a specific code',
  INVALID_METRICS_TOKEN: '`/metrics` is a scrape target, not an operation of the document',
};

/**
 * Codes an extension module declares for its own errors, by declaration merging from the
 * extension's code (docs/EXTENDING.md):
 *
 *     declare module '…/src/common/errors/error-catalogue' {
 *       interface ExtensionErrorCodes { PAYMENT_NOT_FOUND: { status: 404 } }
 *     }
 *
 * plus `errors` in its `ExtensionDefinition`, so that the code is known at run time too.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ExtensionErrorCodes {}

type Catalogue = typeof ERROR_CATALOGUE & ExtensionErrorCodes;

/** A problem code: a key of the catalogue or of an extension's declared codes. */
export type ErrorCode = Extract<keyof Catalogue, string>;

/** The HTTP status the catalogue gives a code. */
export type StatusOf<C extends ErrorCode> = Catalogue[C] extends { status: infer S extends number } ? S : never;

/** The codes that answer with the given HTTP status. */
export type ErrorCodeFor<S extends number> = { [C in ErrorCode]: StatusOf<C> extends S ? C : never }[ErrorCode];

export type CoreErrorCode = keyof typeof ERROR_CATALOGUE;

export const CORE_ERROR_CODES = Object.keys(ERROR_CATALOGUE) as CoreErrorCode[];

export function isCoreErrorCode(code: string): code is CoreErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, code);
}

/** The core codes that answer with `status`, in catalogue order. */
export function codesForStatus(status: number): CoreErrorCode[] {
  return CORE_ERROR_CODES.filter((code) => ERROR_CATALOGUE[code].status === status);
}

const ERRORS_TABLE_START = '<!-- errors:start (generated by `npm run docs:errors` from src/common/errors/error-catalogue.ts) -->';
const ERRORS_TABLE_END = '<!-- errors:end -->';

/** The table of codes in docs/ERRORS.md, one row per catalogue entry, in catalogue order. */
export function renderErrorTable(): string {
  const rows = CORE_ERROR_CODES.map((code) => {
    const { status, title, meaning } = ERROR_CATALOGUE[code];
    return `| \`${code}\` | ${status} | ${title} | ${meaning.replace(/\|/g, '\\|')} |`;
  });
  return ['| `code` | Status | `title` | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** `readme` with the text between the generated markers replaced by the current table. */
export function withErrorTable(readme: string): string {
  const start = readme.indexOf(ERRORS_TABLE_START);
  const end = readme.indexOf(ERRORS_TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/ERRORS.md has no generated errors table markers.');
  return `${readme.slice(0, start + ERRORS_TABLE_START.length)}\n${renderErrorTable()}\n${readme.slice(end)}`;
}
