import type { Params } from 'nestjs-pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppConfig } from './config/app-config';

/** Paths whose values must never reach a log line, whatever module logs them. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.sharedSecret',
  '*.key',
  '*.apiKey',
  'sharedSecret',
];

export function loggerParams(config: AppConfig, destination?: NodeJS.WritableStream): Params {
  return {
    pinoHttp: [
      {
        level: config.logLevel,
        genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id?: string }).id ?? 'unknown',
        redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
        // Liveness probes and metric scrapes would drown everything else.
        autoLogging: { ignore: (req: IncomingMessage) => /^\/(health\/|metrics)/.test(req.url ?? '') },
        customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
        serializers: {
          req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      },
      ...(destination ? [destination as never] : []),
    ] as never,
  };
}
