import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { AscTokenSigner, TOKEN_LIFETIME_S } from '../../../src/adapters/appstore/asc-token.js';
import type { Clock } from '../../../src/ports/clock.js';
import { ascKeyPair, ISSUER_ID, KEY_ID } from './fake-app-store-connect.js';

class SteppedClock implements Clock {
  constructor(private ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

describe('App Store Connect token signer', () => {
  const start = Date.parse('2026-03-10T12:00:00.000Z');

  it('signs ES256 with kid and typ JWT; iss, aud, iat now and exp within 20 minutes', async () => {
    const { privateKey, publicKey } = await ascKeyPair();
    const token = await new AscTokenSigner({ issuerId: ISSUER_ID, keyId: KEY_ID, privateKey }, new SteppedClock(start)).token();
    expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'ES256', kid: KEY_ID, typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).to.deep.equal({ iss: ISSUER_ID, aud: 'appstoreconnect-v1', iat: start / 1000, exp: start / 1000 + TOKEN_LIFETIME_S });
    expect(TOKEN_LIFETIME_S).to.be.at.most(20 * 60);
    // The signature holds under the public key (checked at the token's own time).
    await jwtVerify(token, publicKey, { algorithms: ['ES256'], currentDate: new Date(start) });
  });

  it('reuses a token until a minute before it expires, then signs a new one', async () => {
    const { privateKey } = await ascKeyPair();
    const clock = new SteppedClock(start);
    const signer = new AscTokenSigner({ issuerId: ISSUER_ID, keyId: KEY_ID, privateKey }, clock);
    const first = await signer.token();
    clock.advance(TOKEN_LIFETIME_S - 61);
    expect(await signer.token()).to.equal(first);
    clock.advance(1);
    const second = await signer.token();
    expect(second).to.not.equal(first);
    expect(decodeJwt(second).iat).to.equal(start / 1000 + TOKEN_LIFETIME_S - 60);
  });

  it('signs a new token after the cached one was discarded', async () => {
    const { privateKey } = await ascKeyPair();
    const clock = new SteppedClock(start);
    const signer = new AscTokenSigner({ issuerId: ISSUER_ID, keyId: KEY_ID, privateKey }, clock);
    const first = await signer.token();
    signer.discard();
    clock.advance(1);
    expect(await signer.token()).to.not.equal(first);
  });
});
