import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../../common/errors/domain-error';
import { endpointTlsView, parseTlsInput } from './endpoint-tls.rules';

describe('mutual TLS settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-rules-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'k.pem',
      '-out',
      'c.pem',
      '-subj',
      '/O=Example/CN=client',
      '-days',
      '30',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const cert = readFileSync(join(dir, 'c.pem'), 'utf8');
  const key = readFileSync(join(dir, 'k.pem'), 'utf8');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const fieldsOf = (input: Parameters<typeof parseTlsInput>[0]): string[] => {
    try {
      parseTlsInput(input);
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      return ((error as DomainError).errors ?? []).map((e) => e.field);
    }
  };

  it('reads subject and expiry from the certificate and keeps the key apart', () => {
    const { settings, clientKey } = parseTlsInput({ clientCertificate: cert, clientKey: key, caCertificate: cert });
    expect(settings).toEqual({
      clientCertificate: cert,
      caCertificate: cert,
      subject: 'O=Example, CN=client',
      notAfter: expect.any(String),
    });
    expect(new Date(settings.notAfter).getTime()).toBeGreaterThan(Date.now());
    expect(clientKey).toBe(key);
    expect(JSON.stringify(settings)).not.toContain(key.split('\n')[1]);
    expect(endpointTlsView(settings, 'sealed')).toEqual({
      hasClientKey: true,
      subject: 'O=Example, CN=client',
      notAfter: new Date(settings.notAfter),
    });
    expect(endpointTlsView(null, null)).toBeNull();
  });

  it('names every field that is wrong, and never the key itself', () => {
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect(fieldsOf({ clientCertificate: 'nope', clientKey: key })).toEqual(['tls.clientCertificate']);
    expect(fieldsOf({ clientCertificate: cert, clientKey: otherKey })).toEqual(['tls.clientKey']);
    expect(fieldsOf({ clientCertificate: cert, clientKey: 'not a key' })).toEqual(['tls.clientKey']);
    expect(
      fieldsOf({ clientCertificate: cert, clientKey: key, caCertificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }),
    ).toEqual(['tls.caCertificate']);
    expect(fieldsOf({ clientCertificate: 'x', clientKey: 'y', caCertificate: 'z' })).toEqual([
      'tls.clientCertificate',
      'tls.clientKey',
      'tls.caCertificate',
    ]);
  });
});
