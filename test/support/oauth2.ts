import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export const CLIENT_ID = 'nft-wallet-client';
export const CLIENT_SECRET = 'oauth2-client-secret-Zq9-unique';

/**
 * A local OAuth2 token endpoint: records requests, checks client_secret_basic and issues
 * `<prefix><n>` (tok-1, tok-2, …), or answers what `answer` says instead.
 */
export class TokenServer {
  readonly requests: { headers: IncomingHttpHeaders; body: string }[] = [];
  expiresIn = 3600;
  /** Answer a refusal instead of a token. */
  refuse = false;
  /** A body to answer instead of the usual token (with status 200), given the token it would have issued. */
  answer: ((token: string) => string | Buffer) | null = null;
  private server: Server | null = null;

  constructor(private readonly prefix = 'tok-') {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/oauth2/token`;
  }

  get issued(): string[] {
    return this.requests.map((_, i) => `${this.prefix}${i + 1}`);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.requests.push({ headers: req.headers, body });
        const expected = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
        if (this.refuse || req.headers.authorization !== expected) {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
          return;
        }
        const token = `${this.prefix}${this.requests.length}`;
        const answer = this.answer
          ? this.answer(token)
          : JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: this.expiresIn });
        // A client that stops reading a long answer closes the connection: that is no fault here.
        res.on('error', () => undefined);
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** The `auth` of an endpoint getting its tokens from `tokens`. */
export function oauth2Auth(tokens: TokenServer, scope?: string) {
  return {
    type: 'oauth2ClientCredentials',
    tokenUrl: tokens.url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    ...(scope === undefined ? {} : { scope }),
  };
}
