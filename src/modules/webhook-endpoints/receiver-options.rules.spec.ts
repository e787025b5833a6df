import { DomainError } from '../../common/errors/domain-error';
import { isReservedHeader, parseCustomHeaders } from './receiver-options.rules';

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseCustomHeaders', () => {
  it('keeps valid headers as given, and reads null as none', () => {
    expect(parseCustomHeaders({ 'X-Tenant': 'acme', 'X-Gateway-Token': 'gw abc.def', 'x-empty': '' })).toEqual({
      'X-Tenant': 'acme',
      'X-Gateway-Token': 'gw abc.def',
      'x-empty': '',
    });
    expect(parseCustomHeaders(null)).toEqual({});
    expect(parseCustomHeaders({})).toEqual({});
  });

  it('takes ten headers and refuses eleven', () => {
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x-h${i}`, 'v']));
    expect(Object.keys(parseCustomHeaders(ten))).toHaveLength(10);
    const error = refusal(() => parseCustomHeaders({ ...ten, 'x-h10': 'v' }));
    expect(error.status).toBe(400);
    expect(error.errors).toEqual([{ field: 'headers', message: expect.stringContaining('at most 10') }]);
  });

  it('refuses what is not an object of strings', () => {
    for (const input of ['x', 1, [], [['a', 'b']], true]) expect(refusal(() => parseCustomHeaders(input)).errors![0].field).toBe('headers');
    expect(refusal(() => parseCustomHeaders({ 'x-a': 1 })).errors).toEqual([{ field: 'headers.x-a', message: expect.any(String) }]);
  });

  it('refuses names that are not HTTP tokens', () => {
    for (const name of ['', 'x a', 'x:a', 'x\na', 'é', 'x(a)', 'x"a']) {
      expect(refusal(() => parseCustomHeaders({ [name]: 'v' })).errors![0].field).toBe(`headers.${name}`);
    }
  });

  it('refuses values with CR, LF or other control characters, non-ASCII, or past 1,024 characters', () => {
    for (const value of ['a\r\nx-injected: 1', 'a\nb', 'a\tb', 'a\u0000', 'café', 'x'.repeat(1025)]) {
      expect(refusal(() => parseCustomHeaders({ 'x-a': value })).errors![0].field).toBe('headers.x-a');
    }
    expect(parseCustomHeaders({ 'x-a': 'x'.repeat(1024) })['x-a']).toHaveLength(1024);
    expect(parseCustomHeaders({ 'x-a': ' spaces and ~!@#$%^&*() are fine ' })['x-a']).toBe(' spaces and ~!@#$%^&*() are fine ');
  });

  it('refuses the headers the service sets, in any case, naming each', () => {
    const reserved = [
      'x-service-webhook-hmac',
      'X-Service-Webhook-Hmac-Previous',
      'x-service-webhook-id',
      'x-service-webhook-event-id',
      'x-service-webhook-attempt',
      'webhook-id',
      'Webhook-Timestamp',
      'webhook-signature',
      'Content-Type',
      'host',
      'User-Agent',
      'content-length',
      'transfer-encoding',
      'connection',
    ];
    for (const names of [reserved.slice(0, 7), reserved.slice(7)]) {
      const error = refusal(() => parseCustomHeaders(Object.fromEntries(names.map((name) => [name, 'v']))));
      expect(error.errors!.map((e) => e.field)).toEqual(names.map((name) => `headers.${name}`));
      expect(error.detail).toContain(`headers.${names[0]}`);
    }
    for (const name of reserved) expect(isReservedHeader(name)).toBe(true);
    for (const name of ['x-authorization', 'x-webhook-tenant', 'x-service-tenant', 'content-language'])
      expect(isReservedHeader(name)).toBe(false);
  });

  it('refuses Authorization and Proxy-Authorization in any case: authentication goes through auth', () => {
    for (const name of ['Authorization', 'authorization', 'AUTHORIZATION', 'Proxy-Authorization', 'proxy-AUTHORIZATION']) {
      expect(isReservedHeader(name)).toBe(true);
      expect(refusal(() => parseCustomHeaders({ 'x-fine': 'v', [name]: 'Bearer x' })).errors).toEqual([
        { field: `headers.${name}`, message: `${name} cannot be a custom header: authentication to an endpoint goes through auth` },
      ]);
    }
  });

  it('refuses a name given twice in different cases', () => {
    expect(refusal(() => parseCustomHeaders({ 'X-Tenant': 'a', 'x-tenant': 'b' })).errors).toEqual([
      { field: 'headers.x-tenant', message: expect.stringContaining('twice') },
    ]);
  });
});
