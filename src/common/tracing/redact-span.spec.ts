import { redactUrlAttributes } from './redact-span';

describe('redactUrlAttributes', () => {
  const key = `nftw_${'Kq7w2Zx9'.repeat(5)}a_-`;
  const operatorKey = 'operator-key-for-the-span-spec';

  it('redacts key-shaped values and the operator key in every URL attribute, as the logs do', () => {
    const attributes = {
      'http.request.method': 'GET',
      'url.path': `/v1/wallets/${key}`,
      'http.target': `/v1/tokens/x?anything=${operatorKey}&pageSize=5`,
      'url.full': `https://api.example.com/v1/${encodeURIComponent(operatorKey)}/wallets?k=${key}`,
      'url.query': `apiKey=abc&q=${key}&pageSize=5`,
      'http.url': `http://127.0.0.1:3000/v1/wallets?token=t`,
    };
    expect(redactUrlAttributes(attributes, operatorKey)).toEqual({
      'http.request.method': 'GET',
      'url.path': '/v1/wallets/[redacted]',
      'http.target': '/v1/tokens/x?anything=[redacted]&pageSize=5',
      'url.full': 'https://api.example.com/v1/[redacted]/wallets?k=[redacted]',
      'url.query': 'apiKey=[redacted]&q=[redacted]&pageSize=5',
      'http.url': 'http://127.0.0.1:3000/v1/wallets?token=[redacted]',
    });
    // The span's own attributes are left as they were.
    expect(attributes['url.path']).toBe(`/v1/wallets/${key}`);
  });

  it('answers null when there is nothing to hide', () => {
    expect(
      redactUrlAttributes({ 'url.path': '/v1/wallets/01930000-0000-7000-8000-000000000000', 'http.route': '/v1/wallets/:id' }, null),
    ).toBeNull();
    expect(redactUrlAttributes({ 'webhook.id': key }, operatorKey)).toBeNull();
  });
});
