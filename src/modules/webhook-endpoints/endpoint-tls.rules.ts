import { createPrivateKey, KeyObject, X509Certificate } from 'node:crypto';
import { FieldError, validationFailed } from '../../common/errors/domain-error';

/** The longest PEM text a tls field takes (a certificate chain fits easily). */
export const MAX_PEM_LENGTH = 65_536;

/**
 * Mutual TLS towards a receiver, as stored: the client certificate and an optional private CA in
 * PEM (not secret), the subject and expiry read from the certificate once, when it is set. The
 * private key is sealed apart.
 */
export interface EndpointTlsSettings {
  clientCertificate: string;
  caCertificate: string | null;
  /** The certificate's subject, e.g. `CN=webhooks.example.com, O=Example`. */
  subject: string;
  /** ISO 8601: when the certificate stops being valid. */
  notAfter: string;
}

/** What the API shows: never the key, only that it is set. */
export interface EndpointTlsView {
  hasClientKey: boolean;
  subject: string;
  notAfter: Date;
}

export function endpointTlsView(settings: EndpointTlsSettings | null, clientKeySealed: string | null): EndpointTlsView | null {
  if (settings === null) return null;
  return { hasClientKey: clientKeySealed !== null, subject: settings.subject, notAfter: new Date(settings.notAfter) };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Checks a tls request field by field: each certificate must parse, the key must parse (unencrypted
 * PEM) and belong to the client certificate. Every problem is named at once (400, `tls.<field>`);
 * the message never repeats the key.
 */
export function parseTlsInput(input: { clientCertificate: string; clientKey: string; caCertificate?: string | null }): {
  settings: EndpointTlsSettings;
  clientKey: string;
} {
  const errors: FieldError[] = [];
  const certificate = parseCertificates(input.clientCertificate)[0] ?? null;
  if (certificate === null)
    errors.push({ field: 'tls.clientCertificate', message: 'must be a PEM certificate (-----BEGIN CERTIFICATE-----)' });
  let key: KeyObject | null = null;
  try {
    key = createPrivateKey({ key: input.clientKey, format: 'pem' });
  } catch {
    errors.push({ field: 'tls.clientKey', message: 'must be an unencrypted PEM private key' });
  }
  if (certificate !== null && key !== null && !certificate.checkPrivateKey(key)) {
    errors.push({ field: 'tls.clientKey', message: 'does not belong to tls.clientCertificate' });
  }
  const ca = input.caCertificate ?? null;
  if (ca !== null && parseCertificates(ca).length === 0) {
    errors.push({ field: 'tls.caCertificate', message: 'must be one or more PEM certificates' });
  }
  if (errors.length > 0) throw validationFailed(errors);
  const cert = certificate;
  return {
    settings: {
      clientCertificate: input.clientCertificate,
      caCertificate: ca,
      subject: cert.subject.split('\n').filter(Boolean).join(', '),
      notAfter: new Date(cert.validTo).toISOString(),
    },
    clientKey: input.clientKey,
  };
}

/** Every certificate of a PEM text; an empty list when none parses or any block is broken. */
function parseCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return [];
  }
}
