import { parseDuration, parseDurationList } from './duration';
import { defaultWebhookPorts, parsePortList, PortRange } from '../common/net/url-policy';
import { parseTrustProxy } from './trust-proxy';

/**
 * What a process runs: `api` the HTTP API, `worker` webhook delivery and upkeep, `indexer` only
 * the chain followers and the token metadata fetcher, `all` everything.
 */
export type ProcessRole = 'api' | 'worker' | 'indexer' | 'all';

/** What a process of each ROLE runs: `all` runs everything; the others split it across processes. */
export const servesApi = (config: Pick<AppConfig, 'role'>): boolean => config.role === 'api' || config.role === 'all';
/** Webhook delivery and the periodic maintenance (purges, pruning, secret clean-up). */
export const runsWorker = (config: Pick<AppConfig, 'role'>): boolean => config.role === 'worker' || config.role === 'all';
/** The chain followers and the token metadata worker. */
export const runsFollowers = (config: Pick<AppConfig, 'role'>): boolean => config.role === 'indexer' || config.role === 'all';
export const PROCESS_ROLES: readonly ProcessRole[] = ['api', 'worker', 'indexer', 'all'];
export type NodeEnv = 'development' | 'test' | 'production';
export const NODE_ENVS: readonly NodeEnv[] = ['development', 'test', 'production'];

/** One encryption key of the keyring, named so that a sealed value can say which key sealed it. */
export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

/** Keys for secrets at rest: the first seals, every one opens (so keys can be rotated). */
export interface SecretKeyring {
  readonly sealing: SecretKey;
  readonly keys: readonly SecretKey[];
}

/**
 * The whole configuration, validated once at start-up. Nothing outside src/config reads
 * process.env: everything else receives this object through DI (token: the class itself).
 */
export abstract class AppConfig {
  abstract readonly nodeEnv: NodeEnv;
  abstract readonly production: boolean;
  abstract readonly port: number;
  /** How long a stopping process lets requests in flight finish before cutting them. */
  abstract readonly shutdownGraceMs: number;
  abstract readonly role: ProcessRole;
  abstract readonly databaseUrl: string;
  abstract readonly dbPoolMax: number;
  /**
   * How long anything may wait on PostgreSQL: for a pooled connection, and per statement (API
   * requests, and the delivery worker's own bound). Migrations and the CLI are exempt.
   */
  abstract readonly db: {
    readonly acquireTimeoutMs: number;
    readonly statementTimeoutMs: number;
    readonly workerStatementTimeoutMs: number;
  };
  abstract readonly migrateOnStart: boolean;
  abstract readonly redisUrl: string;
  /** Redis Cluster seed nodes (REDIS_CLUSTER_NODES); null runs on the single server of REDIS_URL. */
  abstract readonly redisClusterNodes: { host: string; port: number }[] | null;
  abstract readonly queuePrefix: string;
  abstract readonly operatorApiKey: string | null;
  /**
   * The keyring for secrets at rest (SECRETS_ENCRYPTION_KEYS, or SECRETS_ENCRYPTION_KEY as a
   * one-key ring): pass it to sealSecret/openSecret.
   */
  abstract readonly secretsEncryptionKey: SecretKeyring;
  /**
   * Settings left at a relaxed development default (empty in production, or when every one was
   * set explicitly); the process warns once at start-up listing them.
   */
  abstract readonly relaxedDefaults: readonly string[];
  /** Express `trust proxy` value: which peers may say who the client is (X-Forwarded-For). */
  abstract readonly trustProxy: string | false;
  /** API keys one organization may hold (revoked keys do not count). */
  abstract readonly apiKeysPerOrganization: number;
  abstract readonly logLevel: string;
  /** `json` (one JSON object a line), `pretty` (readable lines), or `auto`: pretty in development on a terminal, JSON otherwise. */
  abstract readonly logFormat: 'auto' | 'json' | 'pretty';
  abstract readonly bodyLimitBytes: number;
  abstract readonly jsonMaxDepth: number;
  /** Requests per window; 0 turns that limit off. */
  abstract readonly rateLimit: {
    readonly perKey: number;
    readonly perIp: number;
    readonly windowMs: number;
    /** Test sends and redeliveries (and replays) per organization per window; 0 turns it off. */
    readonly webhookSendsPerOrganization: number;
    readonly webhookSendsWindowMs: number;
  };
  abstract readonly apiKeyCacheTtlMs: number;
  /** Background clean-up run by worker processes. */
  abstract readonly maintenance: {
    readonly idempotencyPurgeIntervalMs: number;
    /** Rows deleted per transaction by a purge. */
    readonly purgeBatchSize: number;
  };
  abstract readonly whitelistMaxContracts: number;
  abstract readonly webhook: {
    readonly retryScheduleMs: readonly number[];
    readonly timeoutMs: number;
    readonly allowHttp: boolean;
    readonly allowPrivateNetworks: boolean;
    /** Destination ports a webhook URL may use (inclusive ranges). */
    readonly allowedPorts: readonly PortRange[];
    readonly concurrency: number;
    readonly perReceiverConcurrency: number;
    /** Attempts in flight per organization and worker, so one organization never delays another's webhooks. */
    readonly perOrganizationConcurrency: number;
    readonly retentionMs: number;
    readonly relayIntervalMs: number;
    readonly reconcileIntervalMs: number;
    /** How often a worker erases previous (rotated-out) secrets whose window has closed. */
    readonly secretCleanupIntervalMs: number;
    /** An endpoint whose every attempt failed for this long (with enough failed webhooks) is disabled. */
    readonly autoDisableAfterMs: number;
    readonly jobLockMs: number;
  };
  /** Audit entries older than retentionMs are pruned (keeping a chain checkpoint), checked every pruneIntervalMs. */
  abstract readonly audit: {
    readonly retentionMs: number;
    readonly pruneIntervalMs: number;
    /** AUDIT_CHAIN_KEY: keys the audit hash chain (HMAC-SHA256); null writes plain SHA-256 links (development only). */
    readonly chainKey: Buffer | null;
  };
  /** Who may read /metrics: a bearer token (METRICS_TOKEN), or its own listener (METRICS_PORT on METRICS_HOST). */
  abstract readonly metrics: {
    readonly token: string | null;
    readonly port: number | null;
    readonly host: string;
  };
  /** Following EVM chains (README.md "Following a chain"); no rpcUrls = no chain followed. */
  abstract readonly chain: {
    /** CHAIN_RPC_URLS `1=https://..,31337=http://..`: one entry per chain, ids unique. */
    readonly rpcUrls: readonly ChainRpc[];
    /** A block is applied once this many blocks sit on top of it (0 = at once). */
    readonly confirmations: number;
    /** First block followed on a chain's first start; null = the head at that moment. */
    readonly startBlock: number | null;
    readonly pollIntervalMs: number;
    /** Blocks per eth_getLogs; halved automatically while a node refuses a range. */
    readonly maxBlockRange: number;
    readonly ipfsGatewayUrl: string;
    readonly metadataTimeoutMs: number;
    readonly metadataMaxBytes: number;
  };
}

/** One followed EVM chain: the id its node must report and the node's JSON-RPC URL. */
export interface ChainRpc {
  readonly chainId: number;
  readonly url: string;
}

export class ConfigError extends Error {}

/** Fixed key so a development machine runs without set-up; refused when NODE_ENV=production. */
const DEVELOPMENT_ENCRYPTION_KEY = Buffer.alloc(32, 'nft-wallet-development-key-32byt');
const DEVELOPMENT_KEY_ID = 'dev';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  const errors: string[] = [];
  const relaxedDefaults: string[] = [];
  // Strictness must not hinge on spelling or on a variable left out: "prod", "staging" or nothing
  // at all would otherwise run relaxed. Without a valid NODE_ENV nothing else can be judged, so
  // this is the one line reported.
  const rawNodeEnv = env.NODE_ENV?.trim() ?? '';
  if (!(NODE_ENVS as readonly string[]).includes(rawNodeEnv)) {
    const got = rawNodeEnv === '' ? 'it is unset' : `got "${rawNodeEnv}"`;
    throw new ConfigError(`Invalid configuration: NODE_ENV must be development, test or production (${got})`);
  }
  const nodeEnv = rawNodeEnv as NodeEnv;
  const production = nodeEnv === 'production';
  const isSet = (name: string) => env[name] !== undefined && env[name].trim() !== '';

  const str = (name: string, fallback: string): string => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? fallback : value.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      errors.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    errors.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const duration = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const ms = parseDuration(raw) ?? (/^\d+$/.test(raw.trim()) ? Number(raw) : null);
    if (ms === null || ms <= 0) {
      errors.push(`${name} must be a duration such as 500ms, 5s, 2m, 1h or 30d (got "${raw}")`);
      return fallback;
    }
    return ms;
  };
  const url = (name: string, fallback: string, protocols: string[]): string => {
    const value = str(name, fallback);
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error();
    } catch {
      errors.push(`${name} must be a ${protocols.join(' or ')} URL`);
    }
    return value;
  };

  const role = str('ROLE', 'all');
  if (!(PROCESS_ROLES as readonly string[]).includes(role)) errors.push(`ROLE must be api, worker, indexer or all (got "${role}")`);

  const rpcUrls = parseChainRpcUrls(env.CHAIN_RPC_URLS, errors);
  let startBlock: number | null = null;
  if (isSet('CHAIN_START_BLOCK')) {
    const raw = env.CHAIN_START_BLOCK!.trim();
    if (/^\d{1,15}$/.test(raw)) startBlock = Number(raw);
    else errors.push(`CHAIN_START_BLOCK must be a block number (an integer of 0 or more) (got "${env.CHAIN_START_BLOCK}")`);
  }

  const operatorApiKey = env.OPERATOR_API_KEY?.trim() || null;
  if (operatorApiKey !== null && operatorApiKey.length < 16) {
    errors.push('OPERATOR_API_KEY must be at least 16 characters');
  }

  const secretsEncryptionKey = readKeyring(env, production, errors, relaxedDefaults);

  const DEFAULT_SCHEDULE = '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h';
  const scheduleText = str('WEBHOOK_RETRY_SCHEDULE', DEFAULT_SCHEDULE);
  const retryScheduleMs = parseDurationList(scheduleText);
  if (!retryScheduleMs) {
    errors.push(`WEBHOOK_RETRY_SCHEDULE must be comma-separated durations such as 200ms,1s,5s (got "${scheduleText}")`);
  }

  const allowHttp = bool('WEBHOOK_ALLOW_HTTP', !production);
  const allowPrivateNetworks = bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', !production);
  if (!production && !isSet('WEBHOOK_ALLOW_HTTP') && allowHttp) relaxedDefaults.push('WEBHOOK_ALLOW_HTTP=true (plain http webhook URLs)');
  if (!production && !isSet('WEBHOOK_ALLOW_PRIVATE_NETWORKS') && allowPrivateNetworks) {
    relaxedDefaults.push('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (webhooks to private and loopback addresses)');
  }
  let allowedPorts = defaultWebhookPorts(allowHttp);
  if (isSet('WEBHOOK_ALLOWED_PORTS')) {
    const parsed = parsePortList(env.WEBHOOK_ALLOWED_PORTS!);
    if (parsed === null) {
      errors.push(
        `WEBHOOK_ALLOWED_PORTS must be comma-separated ports or ranges such as 443,8443,9000-9100 (got "${env.WEBHOOK_ALLOWED_PORTS}")`,
      );
    } else {
      allowedPorts = parsed;
    }
  }
  let trustProxy: string | false = 'loopback';
  if (isSet('TRUST_PROXY')) {
    const parsed = parseTrustProxy(env.TRUST_PROXY!);
    if (parsed === null) {
      errors.push(
        `TRUST_PROXY must be none, or comma-separated addresses, CIDR ranges, loopback, linklocal or uniquelocal (got "${env.TRUST_PROXY}")`,
      );
    } else {
      trustProxy = parsed;
    }
  }
  const clusterText = env.REDIS_CLUSTER_NODES?.trim() ?? '';
  let redisClusterNodes: { host: string; port: number }[] | null = null;
  if (clusterText !== '') {
    redisClusterNodes = clusterText.split(',').map((entry) => {
      const match = /^\s*([^\s:]+):(\d{1,5})\s*$/.exec(entry);
      const port = match ? Number(match[2]) : NaN;
      if (!match || port < 1 || port > 65535) {
        errors.push(`REDIS_CLUSTER_NODES must be a comma-separated list of host:port (got "${entry.trim()}")`);
        return { host: '', port: 0 };
      }
      return { host: match[1], port };
    });
  }

  // Security round 3: the audit chain key and the /metrics guard, required in production.
  let auditChainKey: Buffer | null = null;
  if (isSet('AUDIT_CHAIN_KEY')) {
    const text = env.AUDIT_CHAIN_KEY!.trim();
    const decoded = Buffer.from(text, 'base64');
    if (decoded.length !== 32 || decoded.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) {
      errors.push('AUDIT_CHAIN_KEY must be 32 bytes encoded in base64');
    } else {
      auditChainKey = decoded;
    }
  } else if (production) {
    errors.push('AUDIT_CHAIN_KEY is required when NODE_ENV=production (32 bytes, base64)');
  } else {
    relaxedDefaults.push('AUDIT_CHAIN_KEY unset (audit chain hashed without a key: anyone who can write the database can recompute it)');
  }
  const metricsToken = env.METRICS_TOKEN?.trim() || null;
  if (metricsToken !== null && metricsToken.length < 16) errors.push('METRICS_TOKEN must be at least 16 characters');
  const metricsPort = isSet('METRICS_PORT') ? int('METRICS_PORT', 0, 1, 65535) : null;
  const metricsHost = str('METRICS_HOST', '127.0.0.1');
  if (production && metricsToken === null && metricsPort === null) {
    errors.push('METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production (/metrics is not served openly)');
  } else if (!production && metricsToken === null && metricsPort === null) {
    relaxedDefaults.push('METRICS_TOKEN and METRICS_PORT unset (/metrics open on the API port)');
  }

  const logLevel = str('LOG_LEVEL', production ? 'info' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    errors.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${logLevel}")`);
  }
  const logFormat = str('LOG_FORMAT', 'auto') as AppConfig['logFormat'];
  if (!['auto', 'json', 'pretty'].includes(logFormat)) errors.push(`LOG_FORMAT must be auto, json or pretty (got "${logFormat}")`);

  const webhookConcurrency = int('WEBHOOK_CONCURRENCY', 50, 1, 1000);
  const config: AppConfig = {
    nodeEnv,
    production,
    port: int('PORT', 3000, 0, 65535),
    shutdownGraceMs: duration('SHUTDOWN_GRACE', 25_000),
    role: role as ProcessRole,
    databaseUrl: url('DATABASE_URL', 'postgresql://postgres:postgres@127.0.0.1:5432/nft_wallet', ['postgres:', 'postgresql:']),
    dbPoolMax: int('DB_POOL_MAX', 10, 1, 500),
    db: {
      acquireTimeoutMs: duration('DB_ACQUIRE_TIMEOUT', 3000),
      statementTimeoutMs: duration('DB_STATEMENT_TIMEOUT', 5000),
      workerStatementTimeoutMs: duration('DB_WORKER_STATEMENT_TIMEOUT', 30_000),
    },
    migrateOnStart: bool('DB_MIGRATE_ON_START', !production),
    redisUrl: url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    redisClusterNodes,
    queuePrefix: str('QUEUE_PREFIX', 'nftw'),
    operatorApiKey,
    secretsEncryptionKey,
    relaxedDefaults,
    trustProxy,
    apiKeysPerOrganization: int('API_KEYS_PER_ORGANIZATION', 100, 1, 100_000),
    logLevel,
    logFormat,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 256 * 1024, 1024, 50 * 1024 * 1024),
    jsonMaxDepth: int('JSON_MAX_DEPTH', 32, 2, 1000),
    rateLimit: {
      perKey: int('RATE_LIMIT_PER_KEY', 6000, 0, 10_000_000),
      perIp: int('RATE_LIMIT_PER_IP', 600, 0, 10_000_000),
      windowMs: duration('RATE_LIMIT_WINDOW', 60_000),
      webhookSendsPerOrganization: int('WEBHOOK_SENDS_PER_ORGANIZATION', 10, 0, 1_000_000),
      webhookSendsWindowMs: duration('WEBHOOK_SENDS_WINDOW', 60_000),
    },
    apiKeyCacheTtlMs: int('API_KEY_CACHE_TTL_MS', 2000, 0, 5000),
    maintenance: {
      idempotencyPurgeIntervalMs: duration('IDEMPOTENCY_PURGE_INTERVAL', 3_600_000),
      purgeBatchSize: int('PURGE_BATCH_SIZE', 1000, 1, 100_000),
    },
    whitelistMaxContracts: int('WHITELIST_MAX_CONTRACTS', 10_000, 1, 1_000_000),
    webhook: {
      retryScheduleMs: retryScheduleMs ?? [],
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 3000, 100, 60_000),
      allowHttp,
      allowPrivateNetworks,
      allowedPorts,
      concurrency: webhookConcurrency,
      perReceiverConcurrency: int('WEBHOOK_PER_RECEIVER_CONCURRENCY', 10, 1, 1000),
      // Half a worker's slots by default: an organization whose endpoints are all slow leaves the
      // other half to everyone else, and one busy organization alone still keeps half the worker busy.
      perOrganizationConcurrency: int('WEBHOOK_PER_ORGANIZATION_CONCURRENCY', Math.max(1, Math.floor(webhookConcurrency / 2)), 1, 1000),
      retentionMs: duration('WEBHOOK_RETENTION', 30 * 86_400_000),
      relayIntervalMs: duration('OUTBOX_POLL_INTERVAL', 1000),
      reconcileIntervalMs: duration('WEBHOOK_RECONCILE_INTERVAL', 30_000),
      autoDisableAfterMs: duration('WEBHOOK_AUTO_DISABLE_AFTER', 5 * 86_400_000),
      secretCleanupIntervalMs: duration('WEBHOOK_SECRET_CLEANUP_INTERVAL', 60_000),
      jobLockMs: duration('WEBHOOK_JOB_LOCK', 30_000),
    },
    audit: {
      retentionMs: duration('AUDIT_RETENTION', 400 * 86_400_000),
      pruneIntervalMs: duration('AUDIT_PRUNE_INTERVAL', 3_600_000),
      chainKey: auditChainKey,
    },
    metrics: { token: metricsToken, port: metricsPort, host: metricsHost },
    chain: {
      rpcUrls,
      confirmations: int('CHAIN_CONFIRMATIONS', 12, 0, 10_000),
      startBlock,
      pollIntervalMs: int('CHAIN_POLL_INTERVAL_MS', 2000, 10, 3_600_000),
      maxBlockRange: int('CHAIN_MAX_BLOCK_RANGE', 1000, 1, 1_000_000),
      ipfsGatewayUrl: url('IPFS_GATEWAY_URL', 'https://ipfs.io/ipfs/', ['http:', 'https:']),
      metadataTimeoutMs: int('METADATA_TIMEOUT_MS', 5000, 100, 60_000),
      metadataMaxBytes: int('METADATA_MAX_BYTES', 256 * 1024, 1024, 10 * 1024 * 1024),
    },
  };
  if (!/^[A-Za-z0-9_:-]{1,64}$/.test(config.queuePrefix)) {
    errors.push('QUEUE_PREFIX must be 1-64 characters of letters, digits, _, : or -');
  }
  if (errors.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${errors.join('\n  - ')}`);
  return config;
}

const CHAIN_RPC_PROTOCOLS = ['http:', 'https:', 'ws:', 'wss:'];

/**
 * CHAIN_RPC_URLS: comma-separated `<chainId>=<http(s) or ws(s) URL>`. Each bad entry is named
 * (without its URL's credentials: node URLs often carry an API key in the path or userinfo).
 */
function parseChainRpcUrls(raw: string | undefined, errors: string[]): ChainRpc[] {
  const text = raw?.trim() ?? '';
  if (text === '') return [];
  const chains: ChainRpc[] = [];
  const entries = text.split(',').map((e) => e.trim());
  entries.forEach((entry, index) => {
    const where = `CHAIN_RPC_URLS entry ${index + 1}`;
    const eq = entry.indexOf('=');
    const idText = eq > 0 ? entry.slice(0, eq).trim() : '';
    const urlText = eq > 0 ? entry.slice(eq + 1).trim() : '';
    if (eq <= 0 || !/^\d{1,15}$/.test(idText) || Number(idText) < 1) {
      // The entry itself is not echoed: without its "=" it may be a URL holding an API key.
      const got = idText !== '' && !idText.includes('/') ? ` (got "${idText}" as chain id)` : '';
      errors.push(`${where} must be <chainId>=<url> with a positive integer chain id, e.g. 1=https://node.example/rpc${got}`);
      return;
    }
    const chainId = Number(idText);
    let parsed: URL | null = null;
    try {
      parsed = new URL(urlText);
    } catch {
      parsed = null;
    }
    if (!parsed || !CHAIN_RPC_PROTOCOLS.includes(parsed.protocol)) {
      errors.push(`${where} (chain ${chainId}) must have an http, https, ws or wss JSON-RPC URL after "="`);
      return;
    }
    if (chains.some((c) => c.chainId === chainId)) {
      errors.push(`CHAIN_RPC_URLS names chain ${chainId} twice`);
      return;
    }
    chains.push({ chainId, url: urlText });
  });
  return chains;
}

/**
 * SECRETS_ENCRYPTION_KEYS (`id:base64key,...`, first seals) or SECRETS_ENCRYPTION_KEY (one key,
 * id `default`). Production refuses to start without an explicit key, and refuses the development
 * key, which is published in this repository.
 */
function readKeyring(env: Env, production: boolean, errors: string[], relaxed: string[]): SecretKeyring {
  const decode = (name: string, text: string): Buffer | null => {
    const decoded = Buffer.from(text, 'base64');
    if (decoded.length !== 32 || decoded.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) {
      errors.push(`${name} must hold keys of 32 bytes encoded in base64`);
      return null;
    }
    if (production && decoded.equals(DEVELOPMENT_ENCRYPTION_KEY)) {
      errors.push(`${name} must not use the development key when NODE_ENV=production`);
      return null;
    }
    return decoded;
  };
  const list = env.SECRETS_ENCRYPTION_KEYS?.trim();
  const single = env.SECRETS_ENCRYPTION_KEY?.trim();
  const keys: SecretKey[] = [];
  if (list) {
    if (single) errors.push('SECRETS_ENCRYPTION_KEY and SECRETS_ENCRYPTION_KEYS are both set; keep only SECRETS_ENCRYPTION_KEYS');
    for (const entry of list.split(',').map((e) => e.trim())) {
      const colon = entry.indexOf(':');
      const id = colon > 0 ? entry.slice(0, colon) : '';
      if (!KEY_ID.test(id)) {
        errors.push('SECRETS_ENCRYPTION_KEYS must be a comma-separated list of id:base64key (ids of 1-32 letters, digits, _ or -)');
        continue;
      }
      if (keys.some((k) => k.id === id)) {
        errors.push(`SECRETS_ENCRYPTION_KEYS names the key id "${id}" twice`);
        continue;
      }
      const key = decode('SECRETS_ENCRYPTION_KEYS', entry.slice(colon + 1));
      if (key) keys.push({ id, key });
    }
  } else if (single) {
    const key = decode('SECRETS_ENCRYPTION_KEY', single);
    if (key) keys.push({ id: 'default', key });
  } else if (production) {
    errors.push('SECRETS_ENCRYPTION_KEYS (or SECRETS_ENCRYPTION_KEY) is required when NODE_ENV=production');
  } else {
    relaxed.push('SECRETS_ENCRYPTION_KEYS unset (secrets sealed with the published development key)');
    keys.push({ id: DEVELOPMENT_KEY_ID, key: DEVELOPMENT_ENCRYPTION_KEY });
  }
  const fallback = { id: DEVELOPMENT_KEY_ID, key: DEVELOPMENT_ENCRYPTION_KEY };
  return { sealing: keys[0] ?? fallback, keys: keys.length > 0 ? keys : [fallback] };
}
