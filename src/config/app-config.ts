import { parseDuration, parseDurationList } from './duration';

export type ProcessRole = 'api' | 'worker' | 'all';

/**
 * The whole configuration, validated once at start-up. Nothing outside src/config reads
 * process.env: everything else receives this object through DI (token: the class itself).
 */
export abstract class AppConfig {
  abstract readonly nodeEnv: string;
  abstract readonly production: boolean;
  abstract readonly port: number;
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
  abstract readonly queuePrefix: string;
  abstract readonly operatorApiKey: string | null;
  abstract readonly secretsEncryptionKey: Buffer;
  abstract readonly logLevel: string;
  abstract readonly bodyLimitBytes: number;
  abstract readonly jsonMaxDepth: number;
  /** Requests per window; 0 turns that limit off. */
  abstract readonly rateLimit: {
    readonly perKey: number;
    readonly perIp: number;
    readonly windowMs: number;
  };
  abstract readonly apiKeyCacheTtlMs: number;
  abstract readonly whitelistMaxContracts: number;
  abstract readonly webhook: {
    readonly retryScheduleMs: readonly number[];
    readonly timeoutMs: number;
    readonly allowHttp: boolean;
    readonly allowPrivateNetworks: boolean;
    readonly concurrency: number;
    readonly perReceiverConcurrency: number;
    readonly retentionMs: number;
    readonly relayIntervalMs: number;
    readonly reconcileIntervalMs: number;
    readonly jobLockMs: number;
  };
  /** Audit entries older than retentionMs are pruned (keeping a chain checkpoint), checked every pruneIntervalMs. */
  abstract readonly audit: {
    readonly retentionMs: number;
    readonly pruneIntervalMs: number;
  };
}

export class ConfigError extends Error {}

/** Fixed key so a development machine runs without set-up; refused when NODE_ENV=production. */
const DEVELOPMENT_ENCRYPTION_KEY = Buffer.alloc(32, 'nft-wallet-development-key-32byt');

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  const errors: string[] = [];
  const nodeEnv = env.NODE_ENV?.trim() || 'development';
  const production = nodeEnv === 'production';

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
  if (!['api', 'worker', 'all'].includes(role)) errors.push(`ROLE must be api, worker or all (got "${role}")`);

  const operatorApiKey = env.OPERATOR_API_KEY?.trim() || null;
  if (operatorApiKey !== null && operatorApiKey.length < 16) {
    errors.push('OPERATOR_API_KEY must be at least 16 characters');
  }

  let secretsEncryptionKey = DEVELOPMENT_ENCRYPTION_KEY;
  const rawKey = env.SECRETS_ENCRYPTION_KEY?.trim();
  if (rawKey) {
    const decoded = Buffer.from(rawKey, 'base64');
    if (decoded.length !== 32 || decoded.toString('base64').replace(/=+$/, '') !== rawKey.replace(/=+$/, '')) {
      errors.push('SECRETS_ENCRYPTION_KEY must be 32 bytes encoded in base64');
    } else {
      secretsEncryptionKey = decoded;
    }
  } else if (production) {
    errors.push('SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production');
  }

  const DEFAULT_SCHEDULE = '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h';
  const scheduleText = str('WEBHOOK_RETRY_SCHEDULE', DEFAULT_SCHEDULE);
  const retryScheduleMs = parseDurationList(scheduleText);
  if (!retryScheduleMs) {
    errors.push(`WEBHOOK_RETRY_SCHEDULE must be comma-separated durations such as 200ms,1s,5s (got "${scheduleText}")`);
  }

  const logLevel = str('LOG_LEVEL', production ? 'info' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    errors.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${logLevel}")`);
  }

  const config: AppConfig = {
    nodeEnv,
    production,
    port: int('PORT', 3000, 0, 65535),
    role: role as ProcessRole,
    databaseUrl: url('DATABASE_URL', 'postgresql://postgres:postgres@127.0.0.1:5432/nft_wallet', [
      'postgres:',
      'postgresql:',
    ]),
    dbPoolMax: int('DB_POOL_MAX', 10, 1, 500),
    db: {
      acquireTimeoutMs: duration('DB_ACQUIRE_TIMEOUT', 3000),
      statementTimeoutMs: duration('DB_STATEMENT_TIMEOUT', 5000),
      workerStatementTimeoutMs: duration('DB_WORKER_STATEMENT_TIMEOUT', 30_000),
    },
    migrateOnStart: bool('DB_MIGRATE_ON_START', !production),
    redisUrl: url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    queuePrefix: str('QUEUE_PREFIX', 'nftw'),
    operatorApiKey,
    secretsEncryptionKey,
    logLevel,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 256 * 1024, 1024, 50 * 1024 * 1024),
    jsonMaxDepth: int('JSON_MAX_DEPTH', 32, 2, 1000),
    rateLimit: {
      perKey: int('RATE_LIMIT_PER_KEY', 6000, 0, 10_000_000),
      perIp: int('RATE_LIMIT_PER_IP', 600, 0, 10_000_000),
      windowMs: duration('RATE_LIMIT_WINDOW', 60_000),
    },
    apiKeyCacheTtlMs: int('API_KEY_CACHE_TTL_MS', 2000, 0, 5000),
    whitelistMaxContracts: int('WHITELIST_MAX_CONTRACTS', 10_000, 1, 1_000_000),
    webhook: {
      retryScheduleMs: retryScheduleMs ?? [],
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 3000, 100, 60_000),
      allowHttp: bool('WEBHOOK_ALLOW_HTTP', !production),
      allowPrivateNetworks: bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', !production),
      concurrency: int('WEBHOOK_CONCURRENCY', 50, 1, 1000),
      perReceiverConcurrency: int('WEBHOOK_PER_RECEIVER_CONCURRENCY', 10, 1, 1000),
      retentionMs: duration('WEBHOOK_RETENTION', 30 * 86_400_000),
      relayIntervalMs: duration('OUTBOX_POLL_INTERVAL', 1000),
      reconcileIntervalMs: duration('WEBHOOK_RECONCILE_INTERVAL', 30_000),
      jobLockMs: duration('WEBHOOK_JOB_LOCK', 30_000),
    },
    audit: {
      retentionMs: duration('AUDIT_RETENTION', 400 * 86_400_000),
      pruneIntervalMs: duration('AUDIT_PRUNE_INTERVAL', 3_600_000),
    },
  };
  if (!/^[A-Za-z0-9_:-]{1,64}$/.test(config.queuePrefix)) {
    errors.push('QUEUE_PREFIX must be 1-64 characters of letters, digits, _, : or -');
  }
  if (errors.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${errors.join('\n  - ')}`);
  return config;
}
