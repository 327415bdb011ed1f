import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/** A certificate file's DER bytes: a PEM file's first certificate, or the file as it is (DER). */
export function derCertificate(path: string): Buffer {
  const bytes = readFileSync(path);
  const text = bytes.toString('latin1');
  const pem = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(text);
  return pem ? Buffer.from(pem[1]!.replace(/\s+/g, ''), 'base64') : bytes;
}

/** Why `path` is not a certificate file the service can use, or null when it is one. */
export function certificateFileProblem(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return 'not a file';
  } catch {
    return 'no such file';
  }
  try {
    new X509Certificate(derCertificate(path));
    return null;
  } catch {
    return 'not a certificate (DER or PEM)';
  }
}
