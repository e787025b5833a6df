import { z } from 'zod';
import { ChainConfig, chainConfig, chainVariables } from './chain-config';
import { parseDuration, parseDurationList } from './duration';
import { EgressConfig, egressConfig, egressVariables } from './egress-config';
import { MediaConfig, mediaConfig, mediaVariables } from './media-config';
import { secretKeyring, SecretKeyring, secretsVariables } from './secrets-config';
import { TracingConfig, tracingConfig, tracingVariables } from './tracing-config';
import { parseTrustProxy } from './trust-proxy';
import { bool, ConfigError, duration, Env, int, oneOf, protocolOf, rule, secret, text, url, variable, key32 } from './variables';

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
const PROCESS_ROLES: readonly ProcessRole[] = ['api', 'worker', 'indexer', 'all'];
export type NodeEnv = 'development' | 'test' | 'production';
const NODE_ENVS: readonly NodeEnv[] = ['development', 'test', 'production'];

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
  /**
   * A connection straight to PostgreSQL (DATABASE_DIRECT_URL, default DATABASE_URL) for what
   * needs a session of its own: LISTEN, session advisory locks, migrations. DATABASE_URL may
   * then go through a transaction-pooling PgBouncer.
   */
  abstract readonly databaseDirectUrl: string;
  abstract readonly dbPoolMax: number;
  /**
   * PostgreSQL read replicas (DATABASE_REPLICA_URLS) that serve GET requests, and the lag past
   * which one is skipped (docs/OPERATIONS.md "Read replicas"); no urls = everything on DATABASE_URL.
   */
  abstract readonly replicas: { readonly urls: readonly string[]; readonly maxLagMs: number };
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
    /** Test sends and redeliveries per organization per window; 0 turns it off. */
    readonly webhookSendsPerOrganization: number;
    readonly webhookSendsWindowMs: number;
    /** Webhooks replays may queue per organization per hour (replays' own budget); 0 turns it off. */
    readonly webhookReplaysPerHour: number;
  };
  abstract readonly apiKeyCacheTtlMs: number;
  /** Background clean-up run by worker processes. */
  abstract readonly maintenance: {
    readonly idempotencyPurgeIntervalMs: number;
    /** Rows deleted per transaction by a purge. */
    readonly purgeBatchSize: number;
  };
  abstract readonly whitelistMaxContracts: number;
  /** Where outbound requests may go, and through what (WEBHOOK_ALLOW_HTTP, ..., WEBHOOK_PROXY_URL): webhooks and token metadata alike. */
  abstract readonly egress: EgressConfig;
  abstract readonly webhook: {
    readonly retryScheduleMs: readonly number[];
    readonly timeoutMs: number;
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
  abstract readonly chain: ChainConfig;
  /** Token images and their thumbnails (docs/IMAGES.md "Images"). */
  abstract readonly media: MediaConfig;
  /** OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT); null when off. */
  abstract readonly tracing: TracingConfig | null;
}

const DEFAULT_RETRY_SCHEDULE = '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Every variable read, with its default, range and message; production tightens the defaults. */
const envSchema = (production: boolean) =>
  z.object({
    PORT: int(3000, 0, 65535),
    SHUTDOWN_GRACE: duration(25_000),
    ROLE: oneOf<ProcessRole>('all', PROCESS_ROLES, 'api, worker, indexer or all'),
    DATABASE_URL: url('postgresql://postgres:postgres@127.0.0.1:5432/nft_wallet', ['postgres:', 'postgresql:']),
    // Unset: DATABASE_URL.
    DATABASE_DIRECT_URL: url(null, ['postgres:', 'postgresql:']),
    DB_POOL_MAX: int(10, 1, 500),
    DATABASE_REPLICA_URLS: variable<string[]>([], (t, fail) => {
      const urls = t.split(',').map((u) => u.trim());
      // The URLs carry passwords: an entry is named by its position, never echoed.
      const bad = urls.findIndex((u) => !['postgres:', 'postgresql:'].includes(protocolOf(u)));
      if (bad >= 0) return fail(`entry ${bad + 1} must be a postgres or postgresql URL (a comma-separated list)`);
      return new Set(urls).size === urls.length ? urls : fail('names one replica twice');
    }),
    DB_REPLICA_MAX_LAG_MS: int(2000, 1, 3_600_000),
    DB_ACQUIRE_TIMEOUT: duration(3000),
    DB_STATEMENT_TIMEOUT: duration(5000),
    DB_WORKER_STATEMENT_TIMEOUT: duration(30_000),
    DB_MIGRATE_ON_START: bool(!production),
    REDIS_URL: url('redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    REDIS_CLUSTER_NODES: variable<{ host: string; port: number }[] | null>(null, (t, fail) => {
      const nodes = t.split(',').map((entry) => {
        const match = /^\s*([^\s:]+):(\d{1,5})\s*$/.exec(entry);
        const port = Number(match?.[2]);
        return match && port >= 1 && port <= 65535
          ? { host: match[1], port }
          : fail(`must be a comma-separated list of host:port (got "${entry.trim()}")`);
      });
      return nodes.every((n) => n !== null) ? nodes : null;
    }),
    QUEUE_PREFIX: rule(
      'nftw',
      '1-64 characters of letters, digits, _, : or -',
      (t) => (/^[A-Za-z0-9_:-]{1,64}$/.test(t) ? t : null),
      false,
    ),
    OPERATOR_API_KEY: secret,
    ...secretsVariables(production),
    TRUST_PROXY: rule<string | false>(
      'loopback',
      'none, or comma-separated addresses, CIDR ranges, loopback, linklocal or uniquelocal',
      parseTrustProxy,
    ),
    API_KEYS_PER_ORGANIZATION: int(100, 1, 100_000),
    LOG_LEVEL: oneOf('info', LOG_LEVELS, `one of ${LOG_LEVELS.join(', ')}`),
    LOG_FORMAT: oneOf<AppConfig['logFormat']>('auto', ['auto', 'json', 'pretty'], 'auto, json or pretty'),
    BODY_LIMIT_BYTES: int(256 * 1024, 1024, 50 * 1024 * 1024),
    JSON_MAX_DEPTH: int(32, 2, 1000),
    RATE_LIMIT_PER_KEY: int(6000, 0, 10_000_000),
    RATE_LIMIT_PER_IP: int(600, 0, 10_000_000),
    RATE_LIMIT_WINDOW: duration(60_000),
    WEBHOOK_SENDS_PER_ORGANIZATION: int(10, 0, 1_000_000),
    WEBHOOK_SENDS_WINDOW: duration(60_000),
    WEBHOOK_REPLAYS_PER_HOUR: int(100_000, 0, 100_000_000),
    API_KEY_CACHE_TTL_MS: int(2000, 0, 5000),
    IDEMPOTENCY_PURGE_INTERVAL: duration(3_600_000),
    PURGE_BATCH_SIZE: int(1000, 1, 100_000),
    WHITELIST_MAX_CONTRACTS: int(10_000, 1, 1_000_000),
    WEBHOOK_RETRY_SCHEDULE: rule(
      parseDurationList(DEFAULT_RETRY_SCHEDULE)!,
      'comma-separated durations such as 200ms,1s,5s',
      parseDurationList,
    ),
    WEBHOOK_TIMEOUT_MS: int(3000, 100, 60_000),
    ...egressVariables(production),
    WEBHOOK_CONCURRENCY: int(50, 1, 1000),
    WEBHOOK_PER_RECEIVER_CONCURRENCY: int(10, 1, 1000),
    // Unset: half of WEBHOOK_CONCURRENCY.
    WEBHOOK_PER_ORGANIZATION_CONCURRENCY: int(null, 1, 1000),
    // Whole days: the history is kept and dropped a day partition at a time; longer than any retry schedule.
    WEBHOOK_RETENTION: rule(30 * 86_400_000, 'whole days, at least 3d (such as 30d)', (t) => {
      const ms = parseDuration(t);
      return ms !== null && ms % 86_400_000 === 0 && ms >= 3 * 86_400_000 ? ms : null;
    }),
    OUTBOX_POLL_INTERVAL: duration(1000),
    WEBHOOK_RECONCILE_INTERVAL: duration(30_000),
    WEBHOOK_AUTO_DISABLE_AFTER: duration(5 * 86_400_000),
    WEBHOOK_SECRET_CLEANUP_INTERVAL: duration(60_000),
    WEBHOOK_JOB_LOCK: duration(30_000),
    AUDIT_RETENTION: duration(400 * 86_400_000),
    AUDIT_PRUNE_INTERVAL: duration(3_600_000),
    AUDIT_CHAIN_KEY: rule<Buffer | null>(null, '32 bytes encoded in base64', key32, false),
    METRICS_TOKEN: secret,
    METRICS_PORT: int(null, 1, 65535),
    METRICS_HOST: text('127.0.0.1'),
    ...chainVariables,
    ...mediaVariables(production),
    ...tracingVariables,
  });

/**
 * Settings production refuses to run without (`required`), and the relaxed default a development
 * process runs on instead and warns about at start-up; each applies when all of `unset` are unset.
 */
const GUARDED: readonly { unset: string[]; required?: string; relaxed: string }[] = [
  {
    unset: ['SECRETS_ENCRYPTION_KEYS', 'SECRETS_ENCRYPTION_KEY'],
    required: 'SECRETS_ENCRYPTION_KEYS (or SECRETS_ENCRYPTION_KEY) is required when NODE_ENV=production',
    relaxed: 'SECRETS_ENCRYPTION_KEYS unset (secrets sealed with the published development key)',
  },
  { unset: ['WEBHOOK_ALLOW_HTTP'], relaxed: 'WEBHOOK_ALLOW_HTTP=true (plain http webhook URLs)' },
  {
    unset: ['WEBHOOK_ALLOW_PRIVATE_NETWORKS'],
    relaxed: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (webhooks to private and loopback addresses)',
  },
  {
    unset: ['AUDIT_CHAIN_KEY'],
    required: 'AUDIT_CHAIN_KEY is required when NODE_ENV=production (32 bytes, base64)',
    relaxed: 'AUDIT_CHAIN_KEY unset (audit chain hashed without a key: anyone who can write the database can recompute it)',
  },
  {
    unset: ['METRICS_TOKEN', 'METRICS_PORT'],
    required: 'METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production (/metrics is not served openly)',
    relaxed: 'METRICS_TOKEN and METRICS_PORT unset (/metrics open on the API port)',
  },
  {
    unset: ['MEDIA_SIGNING_KEY'],
    required: 'MEDIA_SIGNING_KEY is required when NODE_ENV=production (32 bytes, base64)',
    relaxed: 'MEDIA_SIGNING_KEY unset (thumbnail links signed with the published development key)',
  },
];

export function loadConfig(env: Env = process.env): AppConfig {
  // Strictness must not hinge on spelling or on a variable left out: "prod", "staging" or nothing
  // at all would otherwise run relaxed. Without a valid NODE_ENV nothing else can be judged, so
  // this is the one line reported.
  const nodeEnv = env.NODE_ENV?.trim() ?? '';
  if (!(NODE_ENVS as readonly string[]).includes(nodeEnv)) {
    const got = nodeEnv === '' ? 'it is unset' : `got "${nodeEnv}"`;
    throw new ConfigError(`Invalid configuration: NODE_ENV must be development, test or production (${got})`);
  }
  const production = nodeEnv === 'production';
  const parsed = envSchema(production).safeParse(env);
  const errors = parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
  const isSet = (name: string) => (env[name]?.trim() ?? '') !== '';
  if (isSet('SECRETS_ENCRYPTION_KEYS') && isSet('SECRETS_ENCRYPTION_KEY')) {
    errors.push('SECRETS_ENCRYPTION_KEY and SECRETS_ENCRYPTION_KEYS are both set; keep only SECRETS_ENCRYPTION_KEYS');
  }
  const relaxed = GUARDED.filter((guard) => !guard.unset.some(isSet));
  if (production) errors.push(...relaxed.flatMap((guard) => guard.required ?? []));
  if (errors.length > 0 || !parsed.success) throw new ConfigError(`Invalid configuration:\n  - ${errors.join('\n  - ')}`);

  const e = parsed.data;
  return {
    nodeEnv: nodeEnv as NodeEnv,
    production,
    port: e.PORT,
    shutdownGraceMs: e.SHUTDOWN_GRACE,
    role: e.ROLE,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL ?? e.DATABASE_URL,
    dbPoolMax: e.DB_POOL_MAX,
    replicas: { urls: e.DATABASE_REPLICA_URLS, maxLagMs: e.DB_REPLICA_MAX_LAG_MS },
    db: {
      acquireTimeoutMs: e.DB_ACQUIRE_TIMEOUT,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT,
      workerStatementTimeoutMs: e.DB_WORKER_STATEMENT_TIMEOUT,
    },
    migrateOnStart: e.DB_MIGRATE_ON_START,
    redisUrl: e.REDIS_URL,
    redisClusterNodes: e.REDIS_CLUSTER_NODES,
    queuePrefix: e.QUEUE_PREFIX,
    operatorApiKey: e.OPERATOR_API_KEY,
    secretsEncryptionKey: secretKeyring(e),
    relaxedDefaults: production ? [] : relaxed.map((guard) => guard.relaxed),
    trustProxy: e.TRUST_PROXY,
    apiKeysPerOrganization: e.API_KEYS_PER_ORGANIZATION,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    jsonMaxDepth: e.JSON_MAX_DEPTH,
    rateLimit: {
      perKey: e.RATE_LIMIT_PER_KEY,
      perIp: e.RATE_LIMIT_PER_IP,
      windowMs: e.RATE_LIMIT_WINDOW,
      webhookSendsPerOrganization: e.WEBHOOK_SENDS_PER_ORGANIZATION,
      webhookSendsWindowMs: e.WEBHOOK_SENDS_WINDOW,
      webhookReplaysPerHour: e.WEBHOOK_REPLAYS_PER_HOUR,
    },
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    maintenance: { idempotencyPurgeIntervalMs: e.IDEMPOTENCY_PURGE_INTERVAL, purgeBatchSize: e.PURGE_BATCH_SIZE },
    whitelistMaxContracts: e.WHITELIST_MAX_CONTRACTS,
    egress: egressConfig(e),
    webhook: {
      retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      perReceiverConcurrency: e.WEBHOOK_PER_RECEIVER_CONCURRENCY,
      // Half a worker's slots by default: an organization whose endpoints are all slow leaves the
      // other half to everyone else, and one busy organization alone still keeps half the worker busy.
      perOrganizationConcurrency: e.WEBHOOK_PER_ORGANIZATION_CONCURRENCY ?? Math.max(1, Math.floor(e.WEBHOOK_CONCURRENCY / 2)),
      retentionMs: e.WEBHOOK_RETENTION,
      relayIntervalMs: e.OUTBOX_POLL_INTERVAL,
      reconcileIntervalMs: e.WEBHOOK_RECONCILE_INTERVAL,
      autoDisableAfterMs: e.WEBHOOK_AUTO_DISABLE_AFTER,
      secretCleanupIntervalMs: e.WEBHOOK_SECRET_CLEANUP_INTERVAL,
      jobLockMs: e.WEBHOOK_JOB_LOCK,
    },
    audit: { retentionMs: e.AUDIT_RETENTION, pruneIntervalMs: e.AUDIT_PRUNE_INTERVAL, chainKey: e.AUDIT_CHAIN_KEY },
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
    chain: chainConfig(e),
    media: mediaConfig(e),
    tracing: tracingConfig(e),
  };
}
