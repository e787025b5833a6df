import type { Params } from 'nestjs-pino';
import { stdSerializers } from 'pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactUrl } from './common/http/redact-url';
import type { AppConfig } from './config/app-config';

/** Paths whose values must never reach a log line, whatever module logs them. */
const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.sharedSecret',
  '*.key',
  '*.apiKey',
  'sharedSecret',
];

/**
 * Whether log lines are written for people (pino-pretty) rather than as JSON: when asked with
 * LOG_FORMAT=pretty, or by default in development on a terminal. Never when the lines go to a
 * given destination (tests read JSON), and never without pino-pretty installed (a development
 * dependency), so production output stays JSON.
 */
export function prettyLogs(
  config: Pick<AppConfig, 'logFormat' | 'nodeEnv'>,
  env: { isTty: boolean; hasPretty: boolean },
  destination?: NodeJS.WritableStream,
): boolean {
  if (destination || !env.hasPretty || config.logFormat === 'json') return false;
  return config.logFormat === 'pretty' || (config.nodeEnv === 'development' && env.isTty);
}

/** Where pino-pretty is installed (a transport target must be a path pino's worker can load), or null. */
function pinoPrettyPath(): string | null {
  try {
    return require.resolve('pino-pretty');
  } catch {
    return null;
  }
}

export function loggerParams(config: AppConfig, destination?: NodeJS.WritableStream): Params {
  const prettyPath = pinoPrettyPath();
  const pretty = prettyLogs(config, { isTty: process.stdout.isTTY === true, hasPretty: prettyPath !== null }, destination);
  return {
    pinoHttp: [
      {
        level: config.logLevel,
        genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id?: string }).id ?? 'unknown',
        redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
        // Liveness probes and metric scrapes would drown everything else.
        autoLogging: { ignore: (req: IncomingMessage) => /^\/(health\/|metrics)/.test(req.url ?? '') },
        customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
          err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
        // Our serializers read the raw request and response themselves. pino-http would otherwise
        // first copy every header into a plain object on each request, only for us to keep three
        // fields; the logged fields are the same either way.
        wrapSerializers: false,
        serializers: {
          req: (req: { id: string; method: string; originalUrl?: string; url: string }) => ({
            id: req.id,
            method: req.method,
            url: redactUrl(req.originalUrl || req.url, config.operatorApiKey),
          }),
          res: (res: { statusCode: number; headersSent?: boolean }) => ({
            statusCode: res.headersSent === false ? null : res.statusCode,
          }),
          err: stdSerializers.err,
        },
        ...(pretty
          ? { transport: { target: prettyPath as string, options: { colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } } }
          : {}),
      },
      ...(destination ? [destination as never] : []),
    ] as never,
  };
}
