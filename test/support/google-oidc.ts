import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { importPKCS8, SignJWT } from 'jose';
import { tempDir } from './temp-dir.js';

/**
 * A stand-in for Google's OIDC certificate endpoint on 127.0.0.1: a test RSA key whose X.509
 * certificate is served as `{kid: pem}` (the format google-auth-library fetches), and ID tokens
 * signed with it the way a Pub/Sub push subscription signs them.
 */
export interface GoogleOidcStub {
  certsUrl: string;
  token(claims: { aud: string; email: string; expiresInS?: number }): Promise<string>;
  close(): Promise<void>;
}

export async function startGoogleOidcStub(): Promise<GoogleOidcStub> {
  const dir = tempDir('google-oidc');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-subj', '/CN=test-oidc', '-days', '2', '-out', 'cert.pem'], {
    cwd: dir,
    stdio: 'pipe',
  });
  const keyPem = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
  const certPem = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  const kid = 'test-key-1';
  const server: Server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.setHeader('cache-control', 'public, max-age=3600');
    res.end(JSON.stringify({ [kid]: certPem }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const key = await importPKCS8(keyPem, 'RS256');
  return {
    certsUrl: `http://127.0.0.1:${port}/oauth2/v1/certs`,
    async token({ aud, email, expiresInS = 600 }) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ email, email_verified: true, sub: '1234567890' })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer('https://accounts.google.com')
        .setAudience(aud)
        .setIssuedAt(now)
        .setExpirationTime(now + expiresInS)
        .sign(key);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function pubSubPush(messageId: string, notification: Record<string, unknown>) {
  return JSON.stringify({
    message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId, publishTime: new Date().toISOString() },
    subscription: 'projects/test/subscriptions/play-rtdn',
  });
}
