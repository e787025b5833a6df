import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CLIENT_SCHEMA, clientSchemaFor } from '../scripts/generate-client';
import { portableDocumentEnv } from '../scripts/openapi-document';
import { EVM_ADDRESS_PATTERN } from '../src/common/evm-address';
import { FIXTURE_CHAIN_ENV, OrgFixture, createOrgFixture, sampleBody } from './support/org-fixture';
import { UNKNOWN_ID } from './support/nft';
import { TestReceiver } from './support/receiver';
import { createTestApp, OPERATOR_KEY, TestApp, testEnv } from './support/test-app';

/**
 * Every operation of the OpenAPI document, called through Stoplight Prism's validating proxy in
 * front of the running service, the way an integrator's proxy would check it: once with valid
 * input (Prism checks the request and the answer against the document) and with each kind of bad
 * input users send (Prism checks the answer only: the request is wrong on purpose). Any
 * violation fails, and so does an operation of the document that the walk never calls.
 *
 * The document is the built service's (dist/, with the Swagger compiler plugin), as served in
 * production; the test builds it first.
 */

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..');

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface Operation {
  method: string;
  path: string;
  operation: Json;
}

interface Case {
  /** What is wrong with the input; `valid` for the well-formed call. */
  kind: string;
  op: Operation;
  params?: Record<string, string>;
  query?: Record<string, string | string[]>;
  body?: unknown;
  /** The status the service must answer a bad input with. */
  expectStatus?: number;
}

interface Answer {
  status: number;
  violations: Json[];
  body: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Prism from node_modules (nothing is downloaded), listening on a free port, ready to proxy. */
async function startPrism(document: string, upstream: string, extra: string[]): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const cli = require.resolve('@stoplight/prism-cli/dist/index.js');
  const child = spawn(process.execPath, [cli, 'proxy', document, upstream, '--errors', '-p', String(port), '-h', '127.0.0.1', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited: ${output}`);
    const up = await fetch(`${url}/health/live`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (up) return { url, process: child };
    if (Date.now() > deadline) throw new Error(`prism did not start: ${output}`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

describe('OpenAPI conformance through a validating proxy', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let fixture: OrgFixture;
  let doc: Json;
  let dir: string;
  let strict: { url: string; process: ChildProcess };
  let answersOnly: { url: string; process: ChildProcess };
  let documentPath: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-conformance-'));
    documentPath = join(dir, 'openapi.json');
    // The document as production serves it: built with the compiler plugin, then read from dist/.
    await run(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], { cwd: ROOT, timeout: 240_000 });
    // Portable: the same document on every machine, which the typed client is generated from.
    const env = portableDocumentEnv({ ...process.env, ...testEnv(), NODE_ENV: 'test' });
    await run(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'scripts/openapi-document.ts', documentPath], {
      cwd: ROOT,
      timeout: 60_000,
      env,
    });
    doc = JSON.parse(readFileSync(documentPath, 'utf8')) as Json;

    // The walk sends many test webhooks and redeliveries: more than one organization's default cap.
    t = await createTestApp({ WEBHOOK_SENDS_PER_ORGANIZATION: '1000', ...FIXTURE_CHAIN_ENV });
    await t.app.listen(0, '127.0.0.1');
    const upstream = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    receiver = await new TestReceiver().start();
    fixture = await createOrgFixture(t, receiver);
    [strict, answersOnly] = await Promise.all([
      startPrism(documentPath, upstream, []),
      startPrism(documentPath, upstream, ['--validate-request', 'false']),
    ]);
  }, 120_000);

  afterAll(async () => {
    for (const prism of [strict, answersOnly]) prism?.process.kill();
    await receiver?.stop();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const operations = (): Operation[] =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      METHODS.filter((method) => (item as Json)[method]).map((method) => ({ method, path, operation: (item as Json)[method] as Json })),
    );

  const resolveSchema = (schema: Json | undefined): Json | undefined =>
    schema?.$ref ? (doc.components.schemas[String(schema.$ref).split('/').pop() as string] as Json) : schema;

  const credential = (op: Operation): Record<string, string> => {
    const schemes = (op.operation.security as Json[]).flatMap((s) => Object.keys(s));
    if (schemes.includes('operatorKey')) return { authorization: `Bearer ${OPERATOR_KEY}` };
    if (schemes.includes('apiKey')) return { authorization: `Bearer ${fixture.keys.admin}` };
    return {};
  };

  /** Express form of a document path, the key sampleBody knows bodies by. */
  const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

  async function send(base: string, c: Case): Promise<Answer> {
    const params = { ...fixture.params, ...c.params };
    const path = c.op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]));
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(c.query ?? {})) for (const v of [value].flat()) search.append(name, v);
    const query = search.size > 0 ? `?${search.toString()}` : '';
    const headers: Record<string, string> = { ...credential(c.op), accept: '*/*' };
    if (c.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}${query}`, {
      method: c.op.method.toUpperCase(),
      headers,
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
    });
    const body = await res.text();
    const header = res.headers.get('sl-violations');
    const violations = header ? (JSON.parse(header) as Json[]) : [];
    // With --errors Prism answers a violation itself, as a problem of its own type.
    if (/stoplight\.io\/prism\/errors/.test(body)) violations.push({ prism: JSON.parse(body) as Json });
    return { status: res.status, violations, body };
  }

  /** The bad inputs of one operation, each with the status the service answers it with. */
  function badInputs(op: Operation): Case[] {
    // A bad id or query goes with a valid body, so that only the one bad input is refused.
    const validBody = op.operation.requestBody ? sampleBody(op.method.toUpperCase(), expressPath(op.path), fixture.params) : undefined;
    return badInputCases(op).map((c) => ({ body: validBody, ...c }));
  }

  function badInputCases(op: Operation): Case[] {
    const cases: Case[] = [];
    const parameters = (op.operation.parameters ?? []) as Json[];
    for (const parameter of parameters) {
      const schema = resolveSchema(parameter.schema as Json) ?? {};
      const items = resolveSchema(schema.items as Json | undefined) ?? {};
      const name = parameter.name as string;
      if (parameter.in === 'path') {
        if (schema.format === 'uuid') {
          cases.push({ kind: 'malformed id', op, params: { [name]: 'not-a-uuid' }, expectStatus: 400 });
          cases.push({ kind: 'unknown id', op, params: { [name]: UNKNOWN_ID }, expectStatus: 404 });
        }
        if (schema.pattern === EVM_ADDRESS_PATTERN) {
          cases.push({ kind: 'bad address', op, params: { [name]: '0x1234' }, expectStatus: 400 });
          // A PUT sets what its path names: an address nobody used is not unknown to it.
          if (op.method !== 'put') cases.push({ kind: 'unknown id', op, params: { [name]: `0x${'0'.repeat(39)}1` }, expectStatus: 404 });
        }
        continue;
      }
      if (parameter.in !== 'query') continue;
      if (name === 'pageKey') cases.push({ kind: 'bad page key', op, query: { pageKey: 'not-a-page-key' }, expectStatus: 400 });
      if (name === 'pageSize') cases.push({ kind: 'page size past the cap', op, query: { pageSize: '100000' }, expectStatus: 400 });
      if (schema.enum || items.enum) cases.push({ kind: 'unknown enum value', op, query: { [name]: 'no-such-value' }, expectStatus: 400 });
      if (schema.format === 'date-time') cases.push({ kind: 'bad timestamp', op, query: { [name]: 'yesterday' }, expectStatus: 400 });
      if (schema.format === 'uuid') cases.push({ kind: 'malformed id', op, query: { [name]: 'not-a-uuid' }, expectStatus: 400 });
      if (schema.pattern === EVM_ADDRESS_PATTERN || items.pattern === EVM_ADDRESS_PATTERN) {
        cases.push({ kind: 'bad address', op, query: { [name]: '0x1234' }, expectStatus: 400 });
      }
    }
    if (op.operation.requestBody) {
      const valid = sampleBody(op.method.toUpperCase(), expressPath(op.path), fixture.params) ?? {};
      const schema = resolveSchema(op.operation.requestBody.content?.['application/json']?.schema as Json) ?? {};
      const [first] = Object.entries(valid);
      // A number where a string is expected and the other way round; an unknown field for an empty body.
      cases.push({
        kind: 'wrong type in a body',
        op,
        body: first ? { ...valid, [first[0]]: typeof first[1] === 'string' ? 12345 : 'not-the-right-type' } : { notAField: true },
        expectStatus: 400,
      });
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) {
        const field = resolveSchema(property as Json) ?? {};
        const items = resolveSchema(field.items as Json | undefined) ?? {};
        const many = field.type === 'array';
        const bad = (value: string) => ({ ...valid, [name]: many ? [value] : value });
        if (field.pattern === EVM_ADDRESS_PATTERN || items.pattern === EVM_ADDRESS_PATTERN) {
          cases.push({ kind: 'bad address', op, body: bad('0x1234'), expectStatus: 400 });
        }
        if (field.enum || items.enum) cases.push({ kind: 'unknown enum value', op, body: bad('no-such-value'), expectStatus: 400 });
        if (field.format === 'date-time' || items.format === 'date-time') {
          cases.push({ kind: 'bad timestamp', op, body: bad('yesterday'), expectStatus: 400 });
        }
      }
    }
    return cases;
  }

  it('has the typed client of clients/typescript generated from this document (npm run client:generate)', async () => {
    expect(await clientSchemaFor(documentPath)).toBe(readFileSync(CLIENT_SCHEMA, 'utf8'));
  });

  it('answers every operation as the document says, for valid and for bad input', async () => {
    const all = operations();
    const called = new Set<string>();
    const failures: string[] = [];
    const walked: Record<string, number> = {};
    const describeCase = (c: Case) =>
      `${c.kind}: ${c.op.method.toUpperCase()} ${c.op.path} ${JSON.stringify({ params: c.params, query: c.query, body: c.body })}`;

    // Valid calls first, deletions last so that every id stays valid for the others.
    const ordered = [...all].sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    for (const op of ordered) {
      const c: Case = {
        kind: 'valid',
        op,
        body: op.operation.requestBody ? sampleBody(op.method.toUpperCase(), expressPath(op.path), fixture.params) : undefined,
      };
      const answer = await send(strict.url, c);
      called.add(`${op.method} ${op.path}`);
      walked.valid = (walked.valid ?? 0) + 1;
      if (answer.violations.length > 0) failures.push(`${describeCase(c)} -> ${answer.status} ${JSON.stringify(answer.violations)}`);
    }
    for (const op of all) {
      for (const c of badInputs(op)) {
        const answer = await send(answersOnly.url, c);
        walked[c.kind] = (walked[c.kind] ?? 0) + 1;
        if (answer.violations.length > 0) failures.push(`${describeCase(c)} -> ${answer.status} ${JSON.stringify(answer.violations)}`);
        else if (c.expectStatus !== undefined && answer.status !== c.expectStatus) {
          failures.push(`${describeCase(c)} -> ${answer.status}, expected ${c.expectStatus}: ${answer.body.slice(0, 300)}`);
        }
      }
    }
    process.stdout.write(`walked: ${JSON.stringify(walked)}\n`);

    expect(failures).toEqual([]);
    expect(all.map((op) => `${op.method} ${op.path}`).filter((key) => !called.has(key))).toEqual([]);
    // Every kind of bad input was met somewhere, so a document that stops describing (say) its
    // enums cannot quietly shrink the walk.
    expect(Object.keys(walked).sort()).toEqual(
      [
        'bad address',
        'bad page key',
        'bad timestamp',
        'malformed id',
        'page size past the cap',
        'unknown enum value',
        'unknown id',
        'valid',
        'wrong type in a body',
      ].sort(),
    );
  }, 120_000);
});
