import { INestApplication, ValidationPipe } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { API_KEY_SCHEME, OPERATOR_SCHEME } from './common/auth/access';
import { bodyParserErrorStatus, bodyParserProblem } from './common/errors/problem-details.filter';
import { buildProblem, sendProblem } from './common/errors/problem-details';
import { validationExceptionFactory } from './common/errors/validation';
import { enforceJsonBodyRules } from './common/http/json-body-rules';
import { requestIdMiddleware } from './common/http/request-id';
import { requestTracingMiddleware } from './common/tracing/tracing';
import { AppConfig, servesApi } from './config/app-config';
import { completeOpenApiDocument } from './openapi/openapi-document';
import { addRequiredRoles, routeAccessTable } from './openapi/required-roles';

const WORKER_PATHS = /^\/(health\/(live|ready)|metrics)$/;

/**
 * Everything about the HTTP pipeline, shared by main.ts and the e2e tests so that tests exercise
 * exactly what runs in production. Nest's own body parser is off (NestFactory.create
 * `bodyParser: false`) so that the request id exists before the body is read and body errors
 * become problem details too.
 */
export function configureApp(app: INestApplication, config: AppConfig): void {
  const expressApp = app as NestExpressApplication;
  expressApp.useLogger(app.get(Logger));
  expressApp.disable('x-powered-by');
  // No ETag: Express would hash every response body (a whole balances page, a batch answer) for
  // a header no client of this API sends back; the data changes under writes anyway.
  expressApp.set('etag', false);
  // Only the peers named by TRUST_PROXY may say who the client is; from anyone else an
  // X-Forwarded-For header changes neither the rate-limit identity nor the audited ip.
  expressApp.set('trust proxy', config.trustProxy);
  expressApp.set('query parser', 'extended');
  // First, so the request's span covers the whole pipeline; mounted only when tracing is on.
  const tracing = requestTracingMiddleware();
  if (tracing) app.use(tracing);
  app.use(requestIdMiddleware);
  app.use(helmet());
  // No answer of this API may be kept by a browser or proxy cache: some carry a new key or secret,
  // all carry one organization's data. (The portal's static files set their own policy.)
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('cache-control', 'no-store');
    next();
  });
  if (!servesApi(config)) {
    // A worker or an indexer serves only its probes and metrics; the API belongs to ROLE=api|all processes.
    app.use((req: Request, res: Response, next: NextFunction) =>
      WORKER_PATHS.test(req.path)
        ? next()
        : sendProblem(
            res,
            buildProblem(404, 'ROUTE_NOT_FOUND', `This process runs with ROLE=${config.role} and serves no API.`, reqId(req)),
          ),
    );
  }
  app.use(requireJsonBody);
  app.use(express.json({ limit: config.bodyLimitBytes, strict: true, verify: enforceJsonBodyRules(config.jsonMaxDepth) }));
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const status = bodyParserErrorStatus(error);
    if (status === null) return next(error);
    sendProblem(res, bodyParserProblem(error, status, reqId(req)));
  });
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      exceptionFactory: validationExceptionFactory,
    }),
  );
  // Signals are handled by main.ts (drainOnSignal): stop accepting, let in-flight requests end,
  // and only then close the modules, whose hooks would otherwise close the database under them.
  if (servesApi(config)) setupSwagger(app);
}

function reqId(req: Request): string | null {
  return (req as Request & { id?: string }).id ?? null;
}

/** Bodies are JSON only: anything else is a 415, not a silently empty body. */
function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json') && !req.is('application/*+json')) {
    sendProblem(res, buildProblem(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send request bodies as application/json.', reqId(req)));
    return;
  }
  next();
}

export function buildOpenApiDocument(app: INestApplication) {
  const document = new DocumentBuilder()
    .setTitle('NFT Wallet Service')
    .setDescription(
      'NFT balances and tokens of wallets, a per-organization NFT contract whitelist, and signed ' +
        'webhook notifications. Errors are RFC 9457 problem details (application/problem+json) with a stable `code`. ' +
        'Every call takes an organization API key as `Authorization: Bearer <key>`; the roles each operation needs are ' +
        'in its `x-required-roles`. How webhooks are signed, verified and retried is under the Webhooks tag and in the ' +
        '`webhooks` section.',
    )
    .setVersion('1.0')
    .setOpenAPIVersion('3.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Organization API key' }, API_KEY_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Platform operator key (OPERATOR_API_KEY)' }, OPERATOR_SCHEME)
    .build();
  return completeOpenApiDocument(
    addRequiredRoles(app, SwaggerModule.createDocument(app, document)),
    app.get(AppConfig),
    routeAccessTable(app),
  );
}

function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json' });
}
