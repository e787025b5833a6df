import { FieldError, validationFailed } from '../../common/errors/domain-error';
import { MAX_WEBHOOK_URL_LENGTH } from '../../common/net/url-policy';

/**
 * Where a broker endpoint publishes (docs/WEBHOOKS.md "Destinations beyond HTTP"): its type, the
 * broker's url and the names a message is published under. Pure rules: parsing a request's
 * `destination`, masking its url, and the routing templates.
 */
export const DESTINATION_TYPES = ['rabbitmq', 'nats', 'mqtt'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** What stands for the password in every url the service shows; sent back in a PATCH it keeps the stored one. */
export const MASKED_PASSWORD = '***';

/** The placeholders a routing key, subject or topic may hold; all other text is literal. */
export const TEMPLATE_PLACEHOLDERS = ['webhookType', 'action', 'resourceType', 'resourceId', 'organizationId'] as const;
export type TemplateFields = Record<(typeof TEMPLATE_PLACEHOLDERS)[number], string>;
export const MAX_TEMPLATE_LENGTH = 255;
export const MAX_NAME_LENGTH = 255;

/** The schemes each type takes (NATS upgrades to TLS when its server asks for it). */
const SCHEMES: Record<DestinationType, readonly string[]> = { rabbitmq: ['amqp:', 'amqps:'], nats: ['nats:'], mqtt: ['mqtt:', 'mqtts:'] };
/** The port a url without one connects to. */
const DEFAULT_PORTS: Record<string, number> = { 'amqp:': 5672, 'amqps:': 5671, 'nats:': 4222, 'mqtt:': 1883, 'mqtts:': 8883 };

/** The fields of each type beside `type` and `url`, in the order the API shows them. */
const NAME_FIELDS: Record<DestinationType, readonly string[]> = {
  rabbitmq: ['exchange', 'routingKey'],
  nats: ['subject', 'stream'],
  mqtt: ['topic', 'qos'],
};

/** A destination as stored and shown: the url never carries credentials here (they are sealed apart). */
export type DestinationSettings =
  | { type: 'rabbitmq'; url: string; exchange: string; routingKey: string }
  | { type: 'nats'; url: string; subject: string; stream: string }
  | { type: 'mqtt'; url: string; topic: string; qos: 1 };

/** The user and password a destination url carried (percent-decoded); sealed at rest. */
export interface DestinationCredentials {
  username: string;
  password: string | null;
}

export interface ParsedDestination {
  settings: DestinationSettings;
  credentials: DestinationCredentials | null;
  /** The url's password was `***`: keep the stored one (PATCH). */
  keepsPassword: boolean;
}

/**
 * Checks a request's `destination` field by field and names every problem at once (400,
 * `destination.<field>`). The broker is not contacted: a missing exchange or stream shows as
 * failed attempts.
 */
export function parseDestinationInput(input: unknown): ParsedDestination {
  const field = (name: string) => `destination.${name}`;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw validationFailed([{ field: 'destination', message: 'destination must be an object' }]);
  }
  const raw = input as Record<string, unknown>;
  const type = raw.type;
  if (typeof type !== 'string' || !(DESTINATION_TYPES as readonly string[]).includes(type)) {
    throw validationFailed([{ field: field('type'), message: `destination.type must be one of: ${DESTINATION_TYPES.join(', ')}` }]);
  }
  const kind = type as DestinationType;
  const errors: FieldError[] = [];
  const known = ['type', 'url', ...NAME_FIELDS[kind]];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) errors.push({ field: field(key), message: `${field(key)} is not a field of a ${kind} destination` });
  }
  const url = parseBrokerUrl(kind, raw.url, errors);
  const text = (name: string, check: (value: string) => string | null): string => {
    const value = raw[name];
    if (typeof value !== 'string') {
      errors.push({ field: field(name), message: `${field(name)} is required (a string)` });
      return '';
    }
    const problem = check(value);
    if (problem !== null) errors.push({ field: field(name), message: `${field(name)} ${problem}` });
    return value;
  };
  let settings: DestinationSettings;
  if (kind === 'rabbitmq') {
    const exchange = text('exchange', exchangeProblem);
    const routingKey = text('routingKey', (value) => templateProblem('rabbitmq', value));
    settings = { type: kind, url: url?.bare ?? '', exchange, routingKey };
  } else if (kind === 'nats') {
    const subject = text('subject', (value) => templateProblem('nats', value));
    // Core NATS has no acknowledgement: only a stream's PubAck makes delivery at-least-once.
    const stream = text('stream', streamProblem);
    settings = { type: kind, url: url?.bare ?? '', subject, stream };
  } else {
    const topic = text('topic', (value) => templateProblem('mqtt', value));
    if (raw.qos !== 1) errors.push({ field: field('qos'), message: 'destination.qos must be 1 (at least once, acknowledged by PUBACK)' });
    settings = { type: kind, url: url?.bare ?? '', topic, qos: 1 };
  }
  if (errors.length > 0 || url === null) throw validationFailed(errors);
  return { settings, credentials: url.credentials, keepsPassword: url.keepsPassword };
}

interface ParsedUrl {
  /** Scheme, host, port as written and path; no credentials. */
  bare: string;
  credentials: DestinationCredentials | null;
  keepsPassword: boolean;
}

function parseBrokerUrl(type: DestinationType, value: unknown, errors: FieldError[]): ParsedUrl | null {
  const fail = (message: string) => (errors.push({ field: 'destination.url', message: `destination.url ${message}` }), null);
  const schemes = SCHEMES[type];
  const shape = `${schemes.map((s) => `${s}//`).join(' or ')}[user:password@]host[:port]${type === 'rabbitmq' ? '[/vhost]' : ''}`;
  if (typeof value !== 'string') return fail(`is required: ${shape}`);
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return fail(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return fail('must not contain spaces or control characters');
  if (!URL.canParse(value) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return fail(`must be a url of the form ${shape}`);
  const parsed = new URL(value);
  if (!schemes.includes(parsed.protocol))
    return fail(`must use ${schemes.map((s) => s.slice(0, -1)).join(' or ')} for a ${type} destination`);
  if (parsed.hostname === '') return fail('must name a host');
  if (parsed.search !== '' || parsed.hash !== '') return fail('must not have a query or a fragment');
  const path = parsed.pathname;
  if (type !== 'rabbitmq' && path !== '' && path !== '/') return fail(`must not have a path for a ${type} destination`);
  if (type === 'rabbitmq' && path.slice(1).includes('/')) return fail('must name at most one vhost (percent-encode a / in its name)');
  let credentials: DestinationCredentials | null = null;
  try {
    if (parsed.username !== '' || parsed.password !== '') {
      credentials = {
        username: decodeURIComponent(parsed.username),
        password: parsed.password === '' ? null : decodeURIComponent(parsed.password),
      };
    }
  } catch {
    return fail('has a user or password that is not valid percent-encoding');
  }
  const keepsPassword = credentials?.password === MASKED_PASSWORD;
  return { bare: `${parsed.protocol}//${parsed.host}${type === 'rabbitmq' ? path : ''}`, credentials, keepsPassword };
}

/** An AMQP exchange name: `""` is the default exchange. */
function exchangeProblem(value: string): string | null {
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  return /^[A-Za-z0-9_.:-]*$/.test(value) ? null : 'may hold only letters, digits, hyphen, underscore, period and colon';
}

/** A JetStream stream name. */
function streamProblem(value: string): string | null {
  if (value === '') return 'is required: the JetStream stream whose PubAck confirms each message';
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  return /[\s.*>/\\\u0000-\u001f\u007f]/.test(value) ? 'must not contain whitespace, ., *, >, / or \\' : null;
}

/**
 * Why a routing key, subject or topic template cannot be used, or null: longer than 255
 * characters, an unknown `{placeholder}`, or text that cannot give a valid name for the type
 * (NATS: an empty token, a space, `*` or `>`; MQTT: empty, `+`, `#` or NUL).
 */
export function templateProblem(type: DestinationType, template: string): string | null {
  if (template.length > MAX_TEMPLATE_LENGTH) return `must be at most ${MAX_TEMPLATE_LENGTH} characters`;
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    if (!(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(match[1])) {
      return `has an unknown placeholder {${match[1]}} (known: ${TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`;
    }
  }
  // Placeholders always expand to a non-empty value without separators (see expandTemplate).
  const literal = template.replace(/\{([^{}]*)\}/g, 'x');
  if (type === 'nats') {
    if (/\s/.test(literal)) return 'must not contain spaces';
    if (/[*>]/.test(literal)) return 'must not contain the wildcards * or >';
    if (literal.split('.').some((token) => token === '')) return 'must not have an empty token (a leading, trailing or doubled .)';
  }
  if (type === 'mqtt') {
    if (literal === '') return 'must not be empty';
    if (/[+#\0]/.test(literal)) return 'must not contain the wildcards + or #, nor NUL';
  }
  return null;
}

/** Characters a placeholder's value must not bring into a name: they would change its levels or make it a wildcard. */
const UNSAFE_IN_VALUE: Record<DestinationType, RegExp> = {
  rabbitmq: /(?!)/g,
  nats: /[\s.*>]/g,
  mqtt: /[/+#\0]/g,
};

/**
 * A template with its placeholders replaced by the webhook's values (when the attempt is made). A
 * value that holds a character that would split or widen a NATS subject or MQTT topic has it
 * replaced by `_`, and an empty value becomes `_`, so every expansion keeps the shape checked at
 * creation.
 */
export function expandTemplate(type: DestinationType, template: string, fields: TemplateFields): string {
  return template.replace(/\{([^{}]*)\}/g, (whole, name: string) => {
    if (!(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(name)) return whole;
    const value = fields[name as keyof TemplateFields] ?? '';
    return value === '' ? '_' : value.replace(UNSAFE_IN_VALUE[type], '_');
  });
}

/** `host:port` of a destination url as written, the scheme's default port when none is (lowercase host). */
export function destinationHostPort(url: string): { hostname: string; hostPort: string } {
  const parsed = new URL(url);
  const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
  const hostname = parsed.hostname.toLowerCase();
  return { hostname: hostname.replace(/^\[|\]$/g, ''), hostPort: `${hostname}:${port}` };
}

/** The url the API shows: the stored one with the user and `***` for a password put back. */
export function maskedDestinationUrl(bareUrl: string, credentials: DestinationCredentials | null): string {
  if (credentials === null) return bareUrl;
  return withUserInfo(bareUrl, encodeURIComponent(credentials.username), credentials.password === null ? null : MASKED_PASSWORD);
}

/** The url the service connects to: the stored one with the opened credentials. */
export function connectableDestinationUrl(bareUrl: string, credentials: DestinationCredentials | null): string {
  if (credentials === null) return bareUrl;
  return withUserInfo(
    bareUrl,
    encodeURIComponent(credentials.username),
    credentials.password === null ? null : encodeURIComponent(credentials.password),
  );
}

function withUserInfo(bareUrl: string, user: string, password: string | null): string {
  const at = bareUrl.indexOf('//') + 2;
  return `${bareUrl.slice(0, at)}${user}${password === null ? '' : `:${password}`}@${bareUrl.slice(at)}`;
}

/** The destination as the API and the audit log show it: the stored fields, the url masked. */
export function destinationView(settings: DestinationSettings, credentials: DestinationCredentials | null): DestinationSettings {
  return { ...settings, url: maskedDestinationUrl(settings.url, credentials) };
}

/**
 * The credentials a change leaves: a url whose password is `***` keeps the stored password (for
 * the user the url names now); any other url brings its own, or none.
 */
export function credentialsAfter(parsed: ParsedDestination, stored: DestinationCredentials | null): DestinationCredentials | null {
  if (!parsed.keepsPassword || parsed.credentials === null) return parsed.credentials;
  return { username: parsed.credentials.username, password: stored?.password ?? null };
}

/** The stored JSON of a destination, read back (jsonb arrives parsed, or as text without a parser). */
export function storedDestination(value: DestinationSettings | string | null): DestinationSettings | null {
  return typeof value === 'string' ? (JSON.parse(value) as DestinationSettings) : value;
}
