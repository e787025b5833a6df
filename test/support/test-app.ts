import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { AppModule } from '../../src/app.module';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { configureApp } from '../../src/configure-app';

/** Enough of a test app to drive it over HTTP: an in-process app, or a service process. */
export type HttpTarget = Pick<TestApp, 'http'>;

export const OPERATOR_KEY = 'test-operator-key-0123456789abcdef';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  http: () => TestAgent;
  /** Every log line the app wrote, for assertions that secrets never appear. */
  logs: string[];
  close: () => Promise<void>;
}

/**
 * A short tag of the running test file. Suites share one database per run but each gets queues of
 * its own: jobs an earlier suite's apps left in Redis (its receivers long gone) must not be worked
 * through ahead of the next suite's. Every app and process one suite starts shares the tag.
 */
function suiteTag(): string {
  const path = typeof expect === 'undefined' ? undefined : expect.getState().testPath;
  return path ? createHash('sha1').update(path).digest('hex').slice(0, 8) : `w${process.env.JEST_WORKER_ID ?? 0}`;
}

/** Environment every test app starts from; suites override single variables. */
export function testEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl) throw new Error('TEST_DATABASE_URL is not set: run the e2e suites through jest (global setup).');
  return {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `t${process.env.TEST_RUN_ID}${suiteTag()}`,
    OPERATOR_API_KEY: OPERATOR_KEY,
    DB_MIGRATE_ON_START: 'false',
    DB_POOL_MAX: '5',
    // Suites about other things must not see a 503 because a loaded machine made a burst wait
    // for a connection; test/database-bounds sets the short bounds it proves.
    DB_ACQUIRE_TIMEOUT: '20s',
    DB_STATEMENT_TIMEOUT: '20s',
    LOG_LEVEL: 'info',
    WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms',
    WEBHOOK_TIMEOUT_MS: '1000',
    OUTBOX_POLL_INTERVAL: '200ms',
    // Token images are fetched in the background: an ipfs:// image of a suite about something else
    // goes to a closed port on loopback, never to the public gateway. Media suites name their own.
    IPFS_GATEWAY_URL: 'http://127.0.0.1:9/ipfs/',
    WEBHOOK_RECONCILE_INTERVAL: '500ms',
    ...overrides,
  };
}

export async function createTestApp(
  overrides: Record<string, string | undefined> = {},
  options: { extensions?: (Type | DynamicModule)[] } = {},
): Promise<TestApp> {
  const config = loadConfig(testEnv(overrides));
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line.length > 0),
      );
      callback();
    },
  });
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot(config, { logDestination, extensions: options.extensions })],
  }).compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, bufferLogs: true });
  configureApp(app, config);
  await app.init();
  return {
    app,
    config,
    logs,
    http: () => request(app.getHttpServer()),
    close: () => app.close(),
  };
}
