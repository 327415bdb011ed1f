import { expect } from 'chai';
import { ConfigError, configuredRevenueProviders, loadConfig } from '../../../src/config.js';
import os from 'node:os';
import { makeAppleTestChain } from '../../support/apple-signing.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('Configuration of revenue notifications (SPEC §11)', () => {
  it('every provider is off by default, CONVERSIONS_FROM is client', () => {
    const config = loadConfig({});
    expect(configuredRevenueProviders(config)).to.deep.equal([]);
    expect(config.CONVERSIONS_FROM).to.equal('client');
  });

  it("a provider's settings come all together, or start-up stops naming what is missing", () => {
    expect(problemsOf({ APPLE_BUNDLE_ID: 'com.example' }).join('\n')).to.contain(
      'APPLE_ROOT_CERTS, APPLE_BUNDLE_ID and APPLE_ENVIRONMENT must be set together',
    );
    const apple = { APPLE_BUNDLE_ID: 'com.example', APPLE_ENVIRONMENT: 'Sandbox' };
    // A root certificate that is missing, a folder, or not a certificate: one line naming the variable, the path and why.
    expect(problemsOf({ ...apple, APPLE_ROOT_CERTS: '/nonexistent/root.cer' })).to.deep.equal([
      'APPLE_ROOT_CERTS=/nonexistent/root.cer: expected certificate files, DER or PEM (/nonexistent/root.cer: no such file)',
    ]);
    expect(problemsOf({ ...apple, APPLE_ROOT_CERTS: os.tmpdir() })).to.deep.equal([
      `APPLE_ROOT_CERTS=${os.tmpdir()}: expected certificate files, DER or PEM (${os.tmpdir()}: not a file)`,
    ]);
    expect(problemsOf({ ...apple, APPLE_ROOT_CERTS: import.meta.filename })).to.deep.equal([
      `APPLE_ROOT_CERTS=${import.meta.filename}: expected certificate files, DER or PEM (${import.meta.filename}: not a certificate (DER or PEM))`,
    ]);
    const root = makeAppleTestChain();
    expect(loadConfig({ ...apple, APPLE_ROOT_CERTS: root.rootPath }).APPLE_ROOT_CERTS).to.deep.equal([root.rootPath]);
    expect(problemsOf({ APPLE_ROOT_CERTS: root.rootPath, APPLE_BUNDLE_ID: 'com.example', APPLE_ENVIRONMENT: 'Production' }).join('\n')).to.contain(
      'APPLE_APP_APPLE_ID is required',
    );
    expect(problemsOf({ GOOGLE_PLAY_PACKAGE_NAME: 'com.example' }).join('\n')).to.contain('GOOGLE_PLAY_PACKAGE_NAME needs');
    expect(problemsOf({ GOOGLE_PLAY_PUSH_AUDIENCE: 'https://x' }).join('\n')).to.contain('must be set together');
    const both = {
      GOOGLE_PLAY_PACKAGE_NAME: 'com.example',
      GOOGLE_PLAY_PUSH_AUDIENCE: 'https://x',
      GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT: 'push@x.iam.gserviceaccount.com',
    };
    expect(loadConfig(both).GOOGLE_PLAY_PUSH_TOKEN).to.equal(null);
    expect(problemsOf({ ...both, GOOGLE_PLAY_PUSH_TOKEN: 't' }).join('\n')).to.contain('not both');
    expect(problemsOf({ STRIPE_WEBHOOK_SECRET: 'sk_live_oops' })).to.deep.equal([
      'STRIPE_WEBHOOK_SECRET (its value not shown): expected a Stripe endpoint secret, whsec_…',
    ]);
    expect(problemsOf({ CONVERSIONS_FROM: 'server' })).to.deep.equal(['CONVERSIONS_FROM=server: expected one of client, verified, both (default client)']);
    expect(problemsOf({ ACCOUNT_TOKEN_NAMESPACE: 'nope' })[0]).to.match(/^ACCOUNT_TOKEN_NAMESPACE=nope: expected a UUID/);
  });

  it('names the providers that are configured', () => {
    const config = loadConfig({
      REVENUECAT_WEBHOOK_AUTH: 'Bearer x',
      STRIPE_WEBHOOK_SECRET: 'whsec_1',
      GOOGLE_PLAY_PACKAGE_NAME: 'com.example',
      GOOGLE_PLAY_PUSH_TOKEN: 't',
    });
    expect(configuredRevenueProviders(config)).to.deep.equal(['google-play', 'revenuecat', 'stripe']);
  });
});
