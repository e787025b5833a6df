import {
  basicClientAuthorization,
  GrantedToken,
  OAuth2Client,
  OAuth2TokenCache,
  parseTokenResponse,
  readTokenAnswer,
  TOKEN_RESPONSE_MAX_BYTES,
  tokenRequestBody,
  TokenRequestError,
  tokenUsableUntil,
} from './oauth2-tokens';

const client: OAuth2Client = {
  endpointId: 'e1',
  tokenUrl: 'https://auth.example.com/token',
  clientId: 'id',
  clientSecret: 's',
  scope: null,
};

describe('OAuth2 client credentials', () => {
  it('uses a token until 30 s before it expires; a token without expires_in for 5 minutes', () => {
    expect(tokenUsableUntil(3600, 1_000)).toBe(1_000 + 3_570_000);
    expect(tokenUsableUntil(10, 1_000)).toBe(1_000);
    expect(tokenUsableUntil(null, 0)).toBe(270_000);
  });

  it('authenticates with client_secret_basic, form-encoding id and secret', () => {
    expect(basicClientAuthorization('client id', 'p:ss/wörd')).toBe(
      `Basic ${Buffer.from('client+id:p%3Ass%2Fw%C3%B6rd').toString('base64')}`,
    );
    expect(tokenRequestBody(null)).toBe('grant_type=client_credentials');
    expect(tokenRequestBody('a b')).toBe('grant_type=client_credentials&scope=a+b');
  });

  it('reads a grant, and names a refusal by its error code only', () => {
    expect(parseTokenResponse(200, '{"access_token":"t","token_type":"Bearer","expires_in":60}')).toEqual({
      accessToken: 't',
      expiresInSeconds: 60,
    });
    expect(parseTokenResponse(200, '{"access_token":"t"}')).toEqual({ accessToken: 't', expiresInSeconds: null });
    expect(() => parseTokenResponse(401, '{"error":"invalid_client","error_description":"secret s3cr3t is wrong"}')).toThrow(
      /^the token endpoint answered 401 \(invalid_client\)$/,
    );
    expect(() => parseTokenResponse(200, '<html>')).toThrow(TokenRequestError);
    expect(() => parseTokenResponse(200, '{"access_token":"t","token_type":"mac"}')).toThrow(/not a bearer token/);
  });

  describe('OAuth2TokenCache', () => {
    let now = 0;
    let requests = 0;
    let release: (token: GrantedToken) => void = () => undefined;
    const cache = () =>
      new OAuth2TokenCache(
        () =>
          new Promise<GrantedToken>((resolve) => {
            requests += 1;
            release = resolve;
          }),
        () => now,
      );
    beforeEach(() => {
      now = 0;
      requests = 0;
    });

    it('asks once for concurrent callers, reuses the token, and asks again only once it is due', async () => {
      const tokens = cache();
      const waiting = [tokens.token(client), tokens.token(client), tokens.token(client)];
      expect(requests).toBe(1);
      release({ accessToken: 'a', expiresInSeconds: 60 });
      expect(await Promise.all(waiting)).toEqual(['a', 'a', 'a']);
      now = 29_999;
      expect(await tokens.token(client)).toBe('a');
      expect(requests).toBe(1);
      now = 30_000;
      const next = tokens.token(client);
      release({ accessToken: 'b', expiresInSeconds: 60 });
      expect(await next).toBe('b');
      expect(requests).toBe(2);
    });

    it('forgets a refused token, and asks afresh when the client settings change', async () => {
      const tokens = cache();
      const first = tokens.token(client);
      release({ accessToken: 'a', expiresInSeconds: 3600 });
      await first;
      tokens.invalidate(client, 'other');
      expect(await tokens.token(client)).toBe('a');
      tokens.invalidate(client, 'a');
      const second = tokens.token(client);
      release({ accessToken: 'b', expiresInSeconds: 3600 });
      expect(await second).toBe('b');
      const changed = tokens.token({ ...client, clientSecret: 'new' });
      release({ accessToken: 'c', expiresInSeconds: 3600 });
      expect(await changed).toBe('c');
      expect(requests).toBe(3);
    });

    it('lets a failed request fail its waiters, and the next call try again', async () => {
      const tokens = new OAuth2TokenCache(() => {
        requests += 1;
        if (requests === 1) return Promise.reject(new TokenRequestError('the token endpoint answered 503'));
        return Promise.resolve({ accessToken: 'ok', expiresInSeconds: 60 });
      });
      await expect(tokens.token(client)).rejects.toThrow('503');
      expect(await tokens.token(client)).toBe('ok');
    });
  });
});

describe('readTokenAnswer', () => {
  /** A body whose chunks are made only as they are read; `next` answers null at its end. */
  const body = (next: () => Uint8Array | null): AsyncIterable<Uint8Array> => ({
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const value = next();
        return Promise.resolve(value === null ? { done: true, value: undefined } : { done: false, value });
      },
    }),
  });
  const chunks = (...parts: string[]) => body(() => (parts.length > 0 ? Buffer.from(parts.shift()!) : null));

  it('reads an answer of up to 16 KiB whole', async () => {
    const grant = JSON.stringify({ access_token: 'a'.repeat(16 * 1024 - 60), token_type: 'Bearer' });
    expect(Buffer.byteLength(grant)).toBeLessThanOrEqual(TOKEN_RESPONSE_MAX_BYTES);
    await expect(readTokenAnswer(chunks(grant.slice(0, 100), grant.slice(100)), null)).resolves.toBe(grant);
  });

  it('fails a longer answer, naming the token endpoint, without reading past the limit', async () => {
    let read = 0;
    const endless = body(() => {
      read += 1;
      return Buffer.alloc(4096, 'x');
    });
    const error = await readTokenAnswer(endless, null).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenRequestError);
    expect((error as Error).message).toBe('the token endpoint answered more than 16 KiB');
    expect(read).toBe(5);
  });

  it('fails an answer whose Content-Length is over the limit before reading it', async () => {
    let read = false;
    const small = body(() => {
      read = true;
      return null;
    });
    await expect(readTokenAnswer(small, TOKEN_RESPONSE_MAX_BYTES + 1)).rejects.toThrow('answered more than 16 KiB');
    expect(read).toBe(false);
  });
});
