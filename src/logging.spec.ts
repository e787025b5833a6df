import { redactUrl } from './logging';

describe('redactUrl', () => {
  it('hides the values of credential-like query parameters, whatever their spelling', () => {
    expect(redactUrl('/v1/wallets?apiKey=nftw_abc&pageSize=10')).toBe('/v1/wallets?apiKey=[redacted]&pageSize=10');
    expect(redactUrl('/v1/wallets?api_key=x&TOKEN=y&access-token=z&key[0]=k')).toBe(
      '/v1/wallets?api_key=[redacted]&TOKEN=[redacted]&access-token=[redacted]&key[0]=[redacted]',
    );
    expect(redactUrl('/v1/wallets?%61piKey=x')).toBe('/v1/wallets?%61piKey=[redacted]');
  });

  it('leaves other URLs as they are', () => {
    expect(redactUrl('/v1/wallets')).toBe('/v1/wallets');
    expect(redactUrl('/v1/wallets?pageKey=abc&pageSize=5')).toBe('/v1/wallets?pageKey=abc&pageSize=5');
    expect(redactUrl('/v1/wallets?%E0%A4%A=1')).toBe('/v1/wallets?%E0%A4%A=1');
  });
});
