import { redactUrl } from './redact-url';

describe('redactUrl', () => {
  it('hides the values of credential-like query parameters, whatever their spelling', () => {
    expect(redactUrl('/v1/wallets?apiKey=nftw_abc&pageSize=10')).toBe('/v1/wallets?apiKey=[redacted]&pageSize=10');
    expect(redactUrl('/v1/wallets?api_key=x&TOKEN=y&access-token=z&key[0]=k')).toBe(
      '/v1/wallets?api_key=[redacted]&TOKEN=[redacted]&access-token=[redacted]&key[0]=[redacted]',
    );
    expect(redactUrl('/v1/wallets?%61piKey=x')).toBe('/v1/wallets?%61piKey=[redacted]');
  });

  const key = `nftw_${'A1b2-C3d4_'.repeat(4)}xyz`;
  const operatorKey = 'operator-key-for-the-redaction-spec';

  it('hides a key-shaped value under any query parameter name, and the operator key anywhere', () => {
    expect(key).toHaveLength(48);
    expect(redactUrl(`/v1/wallets?X-Api-Key=${key}&pageSize=10`)).toBe('/v1/wallets?X-Api-Key=[redacted]&pageSize=10');
    expect(redactUrl(`/v1/wallets?k=${key}`)).toBe('/v1/wallets?k=[redacted]');
    expect(redactUrl(`/v1/wallets?q=Bearer%20${key}`)).toBe('/v1/wallets?q=[redacted]');
    expect(redactUrl(`/v1/wallets?${key}`)).toBe('/v1/wallets?[redacted]');
    expect(redactUrl(`/v1/wallets?k=%6Eftw_${key.slice(5)}`)).toBe('/v1/wallets?k=[redacted]');
    expect(redactUrl(`/v1/wallets?anything=${operatorKey}`, operatorKey)).toBe('/v1/wallets?anything=[redacted]');
  });

  it('hides a key-shaped value or the operator key in a path segment', () => {
    expect(redactUrl(`/v1/wallets/${key}`)).toBe('/v1/wallets/[redacted]');
    expect(redactUrl(`/v1/${key}/wallets?pageSize=5`)).toBe('/v1/[redacted]/wallets?pageSize=5');
    expect(redactUrl(`/admin/${encodeURIComponent(operatorKey)}/x`, operatorKey)).toBe('/admin/[redacted]/x');
  });

  it('leaves other URLs as they are', () => {
    expect(redactUrl('/v1/wallets/01930000-0000-7000-8000-000000000000?pageKey=nftw_short')).toBe(
      '/v1/wallets/01930000-0000-7000-8000-000000000000?pageKey=nftw_short',
    );
    expect(redactUrl('/v1/wallets')).toBe('/v1/wallets');
    expect(redactUrl('/v1/wallets?pageKey=abc&pageSize=5')).toBe('/v1/wallets?pageKey=abc&pageSize=5');
    expect(redactUrl('/v1/wallets?%E0%A4%A=1')).toBe('/v1/wallets?%E0%A4%A=1');
  });
});
