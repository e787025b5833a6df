import { ArgumentsHost, ForbiddenException, Logger } from '@nestjs/common';
import { DomainError } from './domain-error';
import { createHash } from 'node:crypto';
import { presentedKeyPrefix, ProblemDetailsFilter } from './problem-details.filter';

function fakeHost() {
  const sent: { status?: number; type?: string; body?: string; headers: Record<string, string> } = { headers: {} };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => (sent.headers[name] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    type(value: string) {
      sent.type = value;
      return this;
    },
    send(body: string) {
      sent.body = body;
      return this;
    },
  };
  const req = { id: 'req-1', method: 'GET', path: '/x' };
  const host = {
    getType: () => 'http',
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  return { host, sent };
}

describe('ProblemDetailsFilter', () => {
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  it('maps a domain error to its status and code', () => {
    const { host, sent } = fakeHost();
    new ProblemDetailsFilter().catch(new DomainError(404, 'WALLET_NOT_FOUND', 'Wallet x does not exist.'), host);
    expect(sent.status).toBe(404);
    expect(sent.type).toBe('application/problem+json');
    expect(JSON.parse(sent.body!)).toEqual({
      type: '/problems/wallet-not-found',
      title: 'Not Found',
      status: 404,
      detail: 'Wallet x does not exist.',
      code: 'WALLET_NOT_FOUND',
      requestId: 'req-1',
    });
  });

  it('answers an unexpected fault with a bare 500 that reveals nothing', () => {
    const { host, sent } = fakeHost();
    const fault = new Error('insert into "secret_table" values (\'hunter2\') at /srv/app.js:1:1');
    new ProblemDetailsFilter().catch(fault, host);
    expect(sent.status).toBe(500);
    expect(sent.body).not.toContain('secret_table');
    expect(sent.body).not.toContain('hunter2');
    expect(JSON.parse(sent.body!).code).toBe('INTERNAL_ERROR');
  });

  it('answers 503 with Retry-After when the database connection is gone', () => {
    const { host, sent } = fakeHost();
    new ProblemDetailsFilter().catch(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), host);
    expect(sent.status).toBe(503);
    expect(sent.headers['retry-after']).toBe('1');
  });

  it.each([
    ['08P01', 'server login has been failing, try again later (server_login_retry)'],
    ['53300', 'no more connections allowed (max_client_conn)'],
  ])('answers 503 when PgBouncer refuses with %s (%s)', (code, message) => {
    const { host, sent } = fakeHost();
    new ProblemDetailsFilter().catch(Object.assign(new Error(message), { code }), host);
    expect(sent.status).toBe(503);
    expect(JSON.parse(sent.body!).code).toBe('SERVICE_UNAVAILABLE');
  });

  it.each([
    'Connection ended unexpectedly',
    'insert into "wallet" … - Client has encountered a connection error and is not queryable',
    'Transaction query already complete, run with DEBUG=knex:tx for more info',
  ])('answers 503 when a connection dies inside a transaction (%s)', (message) => {
    const { host, sent } = fakeHost();
    new ProblemDetailsFilter().catch(Object.assign(new Error(message), { name: 'DriverException' }), host);
    expect(sent.status).toBe(503);
    expect(JSON.parse(sent.body!).code).toBe('SERVICE_UNAVAILABLE');
  });

  it('gives framework HTTP errors a generic code', () => {
    const { host, sent } = fakeHost();
    new ProblemDetailsFilter().catch(new ForbiddenException(), host);
    expect(JSON.parse(sent.body!)).toEqual(expect.objectContaining({ status: 403, code: 'FORBIDDEN' }));
  });
});

describe('presentedKeyPrefix', () => {
  const operator = 'operator-key-for-the-prefix-spec';
  const digest = createHash('sha256').update(operator).digest();

  it('is the first 13 characters of an API key, "operator" for the operator key, and nothing for anything else', () => {
    const key = `nftw_${'a'.repeat(43)}`;
    expect(presentedKeyPrefix(`Bearer ${key}`, digest)).toBe('nftw_aaaaaaaa');
    expect(presentedKeyPrefix(`bearer nftw_short`, digest)).toBe('nftw_short');
    expect(presentedKeyPrefix(`Bearer ${operator}`, digest)).toBe('operator');
    expect(presentedKeyPrefix(`Bearer ${operator}x`, digest)).toBeNull();
    expect(presentedKeyPrefix('Basic abc', digest)).toBeNull();
    expect(presentedKeyPrefix(undefined, null)).toBeNull();
  });
});
