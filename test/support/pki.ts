import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { join } from 'node:path';

/** A private CA, a server certificate for 127.0.0.1, a client certificate it signed, and a stranger's. */
export interface Pki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  strangerCert: string;
  strangerKey: string;
}

/** Made with the openssl CLI in `dir` (a temporary directory the caller removes). */
export function makePki(dir: string): Pki {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=Transport Test CA', '-days', '2');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject] of [
    ['server', '/CN=127.0.0.1'],
    ['client', '/O=Example Wallets/CN=nft-wallet-client'],
  ]) {
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  }
  // Self-signed: no CA the server trusts vouches for it.
  openssl('req', '-x509', ...ec, '-keyout', 'stranger.key', '-out', 'stranger.crt', '-subj', '/CN=stranger', '-days', '2');
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  return {
    ca: read('ca.crt'),
    serverCert: read('server.crt'),
    serverKey: read('server.key'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    strangerCert: read('stranger.crt'),
    strangerKey: read('stranger.key'),
  };
}

/** An HTTPS receiver on a free local port that requires a client certificate from the PKI's CA and answers 200. */
export async function listenMutualTls(pki: Pki): Promise<HttpsServer> {
  const server = createHttpsServer(
    { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
