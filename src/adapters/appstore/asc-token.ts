import { type CryptoKey, importPKCS8, SignJWT } from 'jose';
import type { Clock } from '../../ports/clock.js';

const ASC_AUDIENCE = 'appstoreconnect-v1';
/** App Store Connect rejects tokens that live longer than 20 minutes; stay well below. */
export const TOKEN_LIFETIME_S = 15 * 60;
/** A cached token is replaced this long before it expires, so none expires in flight. */
const RENEW_BEFORE_S = 60;

export interface AscCredentials {
  issuerId: string;
  keyId: string;
  /** The API key's private key (a `.p8` file: PKCS #8 PEM, P-256). */
  privateKey: CryptoKey;
}

/** Reads the `.p8` PEM of an App Store Connect API key as an ES256 signing key. */
export function importAscPrivateKey(pem: string): Promise<CryptoKey> {
  return importPKCS8(pem, 'ES256');
}

/**
 * Signs the bearer tokens App Store Connect expects (ES256; header `kid`, `typ: JWT`; claims
 * `iss`, `aud`, `iat`, `exp`) and reuses one until shortly before it expires. The clock is
 * the real one in production: tokens must be valid at Apple's time, not a test's.
 */
export class AscTokenSigner {
  private cached: { token: string; expiresAt: number } | null = null;

  constructor(
    private readonly credentials: AscCredentials,
    private readonly clock: Clock,
  ) {}

  async token(): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    if (this.cached && this.cached.expiresAt - RENEW_BEFORE_S > now) return this.cached.token;
    const expiresAt = now + TOKEN_LIFETIME_S;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.credentials.keyId, typ: 'JWT' })
      .setIssuer(this.credentials.issuerId)
      .setAudience(ASC_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(expiresAt)
      .sign(this.credentials.privateKey);
    this.cached = { token, expiresAt };
    return token;
  }

  /** Forget the cached token (after the store rejected it). */
  discard(): void {
    this.cached = null;
  }
}
