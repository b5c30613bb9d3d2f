import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import selfsigned from 'selfsigned';

// Contract §1: on first start the service creates a local certificate for 127.0.0.1, ::1 and
// localhost under <data-dir>/tls/ (private key mode 0600). `--tls-cert/--tls-key` use the team's own.

export interface TlsMaterial {
  cert: string;
  key: string;
  fingerprint256: string;
}

function atomicWrite(file: string, data: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

export async function loadOrCreateTls(
  dataDir: string,
  own?: { certFile: string; keyFile: string },
): Promise<TlsMaterial> {
  if (own) {
    const cert = readFileSync(own.certFile, 'utf8');
    const key = readFileSync(own.keyFile, 'utf8');
    return { cert, key, fingerprint256: new X509Certificate(cert).fingerprint256 };
  }
  const dir = join(dataDir, 'tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    const cert = readFileSync(certFile, 'utf8');
    const x509 = new X509Certificate(cert);
    // Renew a month before expiry so a long-lived desktop install never serves an expired cert.
    if (Date.parse(x509.validTo) - Date.now() > 30 * 24 * 3600 * 1000) {
      return { cert, key: readFileSync(keyFile, 'utf8'), fingerprint256: x509.fingerprint256 };
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const notAfter = new Date(Date.now() + 825 * 24 * 3600 * 1000);
  const pems = await selfsigned.generate(
    [{ name: 'commonName', value: 'Blueline local service' }],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    },
  );
  atomicWrite(keyFile, pems.private, 0o600);
  atomicWrite(certFile, pems.cert, 0o644);
  return {
    cert: pems.cert,
    key: pems.private,
    fingerprint256: new X509Certificate(pems.cert).fingerprint256,
  };
}
