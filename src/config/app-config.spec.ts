import { loadConfig as load } from './app-config';
import { ConfigError } from './variables';
import { parseDurationList } from './duration';

/** Development unless a case names NODE_ENV: the variable itself is required (tested below). */
const loadConfig = (env: Record<string, string | undefined>) => load({ NODE_ENV: 'development', ...env });

/** What production requires besides the encryption key: the audit chain key and a /metrics guard. */
const PRODUCTION = {
  NODE_ENV: 'production',
  AUDIT_CHAIN_KEY: Buffer.alloc(32, 5).toString('base64'),
  METRICS_TOKEN: 'metrics-token-0123456789',
  MEDIA_SIGNING_KEY: Buffer.alloc(32, 6).toString('base64'),
};

describe('loadConfig', () => {
  it('has defaults that serve a local machine', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.role).toBe('all');
    expect(config.databaseUrl).toBe('postgresql://postgres:postgres@127.0.0.1:5432/nft_wallet');
    expect(config.databaseDirectUrl).toBe(config.databaseUrl);
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.queuePrefix).toBe('nftw');
    expect(config.migrateOnStart).toBe(true);
    expect(config.operatorApiKey).toBeNull();
    expect(config.secretsEncryptionKey.sealing.key).toHaveLength(32);
    expect(config.nodeEnv).toBe('development');
    expect(config.trustProxy).toBe('loopback');
    expect(config.apiKeysPerOrganization).toBe(100);
    expect(config.webhook.retryScheduleMs).toEqual([5000, 30000, 120000, 600000, 1800000, 3600000, 10800000, 21600000, 43200000, 86400000]);
    expect(config.webhook.timeoutMs).toBe(3000);
    expect(config.egress.allowHttp).toBe(true);
    expect(config.egress.allowPrivateNetworks).toBe(true);
    expect(config.jsonMaxDepth).toBe(32);
    expect(config.rateLimit).toEqual({
      perKey: 6000,
      perIp: 600,
      windowMs: 60_000,
      webhookSendsPerOrganization: 10,
      webhookSendsWindowMs: 60_000,
      webhookReplaysPerHour: 100_000,
    });
  });

  it('takes DATABASE_DIRECT_URL for session work, and DATABASE_URL when it is unset', () => {
    const pooled = 'postgresql://app@pgbouncer:6432/nft_wallet';
    expect(loadConfig({ DATABASE_URL: pooled }).databaseDirectUrl).toBe(pooled);
    const config = loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: 'postgresql://app@db:5432/nft_wallet' });
    expect(config.databaseUrl).toBe(pooled);
    expect(config.databaseDirectUrl).toBe('postgresql://app@db:5432/nft_wallet');
  });

  it('turns on strict defaults in production and requires the encryption key', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRETS_ENCRYPTION_KEY/);
    const key = Buffer.alloc(32, 7).toString('base64');
    const config = loadConfig({ ...PRODUCTION, SECRETS_ENCRYPTION_KEY: key });
    expect(config.migrateOnStart).toBe(false);
    expect(config.egress.allowHttp).toBe(false);
    expect(config.egress.allowPrivateNetworks).toBe(false);
    expect(config.secretsEncryptionKey.sealing.key.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(config.relaxedDefaults).toEqual([]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ROLE', 'scheduler'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_DIRECT_URL', 'redis://127.0.0.1:6379'],
    ['REDIS_URL', 'not a url'],
    ['DB_MIGRATE_ON_START', 'maybe'],
    ['SECRETS_ENCRYPTION_KEY', 'c2hvcnQ='],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,soon'],
    ['WEBHOOK_TIMEOUT_MS', '-1'],
    ['OPERATOR_API_KEY', 'short'],
    ['QUEUE_PREFIX', 'has space'],
    ['RATE_LIMIT_PER_KEY', '-5'],
    ['RATE_LIMIT_PER_IP', 'lots'],
    ['RATE_LIMIT_WINDOW', 'soon'],
    ['JSON_MAX_DEPTH', '1'],
    ['DB_ACQUIRE_TIMEOUT', 'forever'],
    ['DB_STATEMENT_TIMEOUT', '0s'],
    ['DB_WORKER_STATEMENT_TIMEOUT', '-3s'],
    ['NODE_ENV', 'prod'],
    ['NODE_ENV', 'staging'],
    ['NODE_ENV', 'Production'],
    ['SECRETS_ENCRYPTION_KEYS', 'no-id-here'],
    ['SECRETS_ENCRYPTION_KEYS', `a:${Buffer.alloc(16).toString('base64')}`],
    ['SECRETS_ENCRYPTION_KEYS', `a:${Buffer.alloc(32, 1).toString('base64')},a:${Buffer.alloc(32, 2).toString('base64')}`],
    ['WEBHOOK_ALLOWED_PORTS', '443,70000'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '2'],
    ['TRUST_PROXY', '127.1'],
    ['API_KEYS_PER_ORGANIZATION', '0'],
    ['WEBHOOK_SENDS_PER_ORGANIZATION', 'many'],
    ['WEBHOOK_REPLAYS_PER_HOUR', '-1'],
    ['WEBHOOK_REPLAYS_PER_HOUR', '1.5'],
    ['REDIS_CLUSTER_NODES', '127.0.0.1'],
    ['REDIS_CLUSTER_NODES', '127.0.0.1:7000,127.0.0.1:99999'],
    ['WEBHOOK_PROXY_URL', 'proxy.internal:3128'],
    ['WEBHOOK_PROXY_URL', 'ftp://proxy.internal:3128'],
    ['WEBHOOK_PROXY_URL', 'http://proxy.internal:3128/path'],
  ])('stops with a message naming %s when it is %p', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('runs on one Redis server unless REDIS_CLUSTER_NODES lists the nodes of a cluster', () => {
    expect(loadConfig({}).redisClusterNodes).toBeNull();
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-a.internal:6379, 10.0.0.2:7001' }).redisClusterNodes).toEqual([
      { host: 'redis-a.internal', port: 6379 },
      { host: '10.0.0.2', port: 7001 },
    ]);
  });

  it('reads rate limits, with 0 turning a limit off', () => {
    expect(
      loadConfig({ RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW: '10s', WEBHOOK_REPLAYS_PER_HOUR: '0' }).rateLimit,
    ).toEqual({
      perKey: 0,
      perIp: 3,
      windowMs: 10_000,
      webhookSendsPerOrganization: 10,
      webhookSendsWindowMs: 60_000,
      webhookReplaysPerHour: 0,
    });
  });

  it('bounds every wait on the database by default, and reads the bounds as durations', () => {
    expect(loadConfig({}).db).toEqual({ acquireTimeoutMs: 3000, statementTimeoutMs: 5000, workerStatementTimeoutMs: 30_000 });
    expect(loadConfig({ DB_ACQUIRE_TIMEOUT: '1500ms', DB_STATEMENT_TIMEOUT: '2s', DB_WORKER_STATEMENT_TIMEOUT: '1m' }).db).toEqual({
      acquireTimeoutMs: 1500,
      statementTimeoutMs: 2000,
      workerStatementTimeoutMs: 60_000,
    });
  });

  it('keeps audit entries 400 days by default, and refuses a retention that is not a duration', () => {
    expect(loadConfig({}).audit).toEqual({ retentionMs: 400 * 86_400_000, pruneIntervalMs: 3_600_000, chainKey: null });
    expect(loadConfig({ AUDIT_RETENTION: '90d', AUDIT_PRUNE_INTERVAL: '10m' }).audit).toEqual({
      retentionMs: 90 * 86_400_000,
      pruneIntervalMs: 600_000,
      chainKey: null,
    });
    expect(() => loadConfig({ AUDIT_RETENTION: 'forever' })).toThrow(/AUDIT_RETENTION must be a duration/);
  });

  it('keeps the webhook history 30 days by default, in whole days of at least 3', () => {
    expect(loadConfig({}).webhook.retentionMs).toBe(30 * 86_400_000);
    expect(loadConfig({ WEBHOOK_RETENTION: '3d' }).webhook.retentionMs).toBe(3 * 86_400_000);
    for (const value of ['2d', '36h', '1w', 'forever']) {
      expect(() => loadConfig({ WEBHOOK_RETENTION: value })).toThrow(/WEBHOOK_RETENTION must be whole days, at least 3d/);
    }
  });

  it('guards /metrics: METRICS_TOKEN or METRICS_PORT (on METRICS_HOST, 127.0.0.1 by default), one required in production', () => {
    expect(loadConfig({}).metrics).toEqual({ token: null, port: null, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_TOKEN: 'a-long-enough-token', METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({
      token: 'a-long-enough-token',
      port: 9464,
      host: '0.0.0.0',
    });
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ METRICS_PORT: '0' })).toThrow(/METRICS_PORT must be an integer between 1 and 65535/);
    const { METRICS_TOKEN: _omitted, ...withoutMetrics } = PRODUCTION;
    const key = Buffer.alloc(32, 9).toString('base64');
    expect(() => loadConfig({ ...withoutMetrics, SECRETS_ENCRYPTION_KEY: key })).toThrow(
      /METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production/,
    );
    expect(loadConfig({ ...withoutMetrics, SECRETS_ENCRYPTION_KEY: key, METRICS_PORT: '9464' }).metrics.port).toBe(9464);
  });

  it('reads AUDIT_CHAIN_KEY (32 bytes, base64), required in production', () => {
    const key = Buffer.alloc(32, 4);
    expect(loadConfig({ AUDIT_CHAIN_KEY: key.toString('base64') }).audit.chainKey?.equals(key)).toBe(true);
    expect(() => loadConfig({ AUDIT_CHAIN_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/AUDIT_CHAIN_KEY must be 32 bytes/);
    expect(() => loadConfig({ AUDIT_CHAIN_KEY: 'not base64 at all!' })).toThrow(/AUDIT_CHAIN_KEY must be 32 bytes/);
    const { AUDIT_CHAIN_KEY: _omitted, ...withoutKey } = PRODUCTION;
    expect(() => loadConfig({ ...withoutKey, SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64') })).toThrow(
      /AUDIT_CHAIN_KEY is required when NODE_ENV=production/,
    );
  });

  it('reads MEDIA_SIGNING_KEY (32 bytes, base64), a development key outside production, required in production', () => {
    const key = Buffer.alloc(32, 4);
    expect(loadConfig({ MEDIA_SIGNING_KEY: key.toString('base64') }).media.signingKey.equals(key)).toBe(true);
    expect(loadConfig({}).media.signingKey).toHaveLength(32);
    expect(() => loadConfig({ MEDIA_SIGNING_KEY: Buffer.alloc(31).toString('base64') })).toThrow(
      new ConfigError('Invalid configuration:\n  - MEDIA_SIGNING_KEY must be 32 bytes encoded in base64'),
    );
    const { MEDIA_SIGNING_KEY: _omitted, ...withoutKey } = PRODUCTION;
    const productionKey = Buffer.alloc(32, 9).toString('base64');
    expect(() => loadConfig({ ...withoutKey, SECRETS_ENCRYPTION_KEY: productionKey })).toThrow(
      new ConfigError('Invalid configuration:\n  - MEDIA_SIGNING_KEY is required when NODE_ENV=production (32 bytes, base64)'),
    );
    const developmentKey = loadConfig({}).media.signingKey.toString('base64');
    expect(() => loadConfig({ ...PRODUCTION, SECRETS_ENCRYPTION_KEY: productionKey, MEDIA_SIGNING_KEY: developmentKey })).toThrow(
      /MEDIA_SIGNING_KEY must not use the development key when NODE_ENV=production/,
    );
  });

  it('reads MEDIA_STORAGE: postgres by default, or an absolute directory', () => {
    expect(loadConfig({}).media.storage).toEqual({ kind: 'postgres' });
    expect(loadConfig({ MEDIA_STORAGE: 'postgres' }).media.storage).toEqual({ kind: 'postgres' });
    expect(loadConfig({ MEDIA_STORAGE: '/var/lib/nftw/media/' }).media.storage).toEqual({ kind: 'directory', path: '/var/lib/nftw/media' });
    for (const bad of ['media', './media', 'Postgres', 's3://bucket']) {
      expect(() => loadConfig({ MEDIA_STORAGE: bad })).toThrow(
        new ConfigError(`Invalid configuration:\n  - MEDIA_STORAGE must be postgres or an absolute directory path (got "${bad}")`),
      );
    }
  });

  describe('strict mode does not hinge on spelling', () => {
    const productionKey = Buffer.alloc(32, 9).toString('base64');

    it('accepts exactly development, test and production, and stops with one line naming NODE_ENV when unset', () => {
      expect(loadConfig({}).nodeEnv).toBe('development');
      for (const unset of [{}, { NODE_ENV: '' }, { NODE_ENV: '  ' }]) {
        expect(() => load(unset)).toThrow(
          new ConfigError('Invalid configuration: NODE_ENV must be development, test or production (it is unset)'),
        );
      }
      // Only that line: nothing else can be judged without knowing how strict to be.
      expect(() => load({ NODE_ENV: 'prod', PORT: 'abc' })).toThrow(
        new ConfigError('Invalid configuration: NODE_ENV must be development, test or production (got "prod")'),
      );
      expect(loadConfig({ NODE_ENV: 'test' }).nodeEnv).toBe('test');
      expect(loadConfig({ ...PRODUCTION, SECRETS_ENCRYPTION_KEY: productionKey }).production).toBe(true);
      expect(() => loadConfig({ NODE_ENV: 'prod' })).toThrow(/NODE_ENV must be development, test or production \(got "prod"\)/);
    });

    it('lists each relaxed development default, and nothing once each is set explicitly', () => {
      expect(loadConfig({}).relaxedDefaults).toEqual([
        expect.stringMatching(/^SECRETS_ENCRYPTION_KEYS unset/),
        expect.stringMatching(/^WEBHOOK_ALLOW_HTTP=true/),
        expect.stringMatching(/^WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/),
        expect.stringMatching(/^AUDIT_CHAIN_KEY unset/),
        expect.stringMatching(/^METRICS_TOKEN and METRICS_PORT unset/),
        expect.stringMatching(/^MEDIA_SIGNING_KEY unset/),
      ]);
      expect(
        loadConfig({
          SECRETS_ENCRYPTION_KEY: productionKey,
          WEBHOOK_ALLOW_HTTP: 'false',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          AUDIT_CHAIN_KEY: productionKey,
          METRICS_PORT: '9464',
          MEDIA_SIGNING_KEY: productionKey,
        }).relaxedDefaults,
      ).toEqual([]);
    });

    it('refuses the development key in production, alone or in a keyring', () => {
      const developmentKey = loadConfig({}).secretsEncryptionKey.sealing.key.toString('base64');
      expect(() => loadConfig({ ...PRODUCTION, SECRETS_ENCRYPTION_KEY: developmentKey })).toThrow(
        /SECRETS_ENCRYPTION_KEY must not use the development key/,
      );
      expect(() => loadConfig({ ...PRODUCTION, SECRETS_ENCRYPTION_KEYS: `new:${productionKey},old:${developmentKey}` })).toThrow(
        /SECRETS_ENCRYPTION_KEYS must not use the development key/,
      );
    });
  });

  it('reads TRUST_PROXY: none, or addresses, ranges and the named ranges', () => {
    expect(loadConfig({ TRUST_PROXY: 'none' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '127.0.0.2, 10.0.0.0/8,loopback' }).trustProxy).toBe('127.0.0.2, 10.0.0.0/8, loopback');
  });

  it('gives an organization half the webhook slots of a worker by default, at least one', () => {
    expect(loadConfig({}).webhook.perOrganizationConcurrency).toBe(25);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '8' }).webhook.perOrganizationConcurrency).toBe(4);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '1' }).webhook.perOrganizationConcurrency).toBe(1);
    expect(loadConfig({ WEBHOOK_PER_ORGANIZATION_CONCURRENCY: '40' }).webhook.perOrganizationConcurrency).toBe(40);
    expect(() => loadConfig({ WEBHOOK_PER_ORGANIZATION_CONCURRENCY: '0' })).toThrow(/WEBHOOK_PER_ORGANIZATION_CONCURRENCY/);
  });

  it('honours a custom retry schedule', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '200ms, 1s,5s' }).webhook.retryScheduleMs).toEqual([200, 1000, 5000]);
  });
});

describe('parseDurationList', () => {
  it('parses every unit', () => {
    expect(parseDurationList('1ms,1s,1m,1h,1d')).toEqual([1, 1000, 60000, 3600000, 86400000]);
  });
  it('refuses empty and zero durations', () => {
    expect(parseDurationList('')).toBeNull();
    expect(parseDurationList('0s')).toBeNull();
  });
});
