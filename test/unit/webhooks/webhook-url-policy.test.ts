import { expect } from 'chai';
import { checkWebhookUrl, isPublicAddress } from '../../../src/application/webhooks/webhook-url-policy.js';
import { DomainError } from '../../../src/domain/domain-error.js';

const STRICT = { WEBHOOKS_ALLOW_HTTP: false, WEBHOOKS_ALLOW_PRIVATE: false };

async function refusal(url: string, settings = STRICT, resolve = async (_host: string) => ['93.184.215.14']): Promise<string | null> {
  try {
    await checkWebhookUrl(url, settings, resolve);
    return null;
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    expect((error as DomainError).code).to.equal('WEBHOOK.URL_NOT_ALLOWED');
    return (error as DomainError).message;
  }
}

describe('webhook URL policy', () => {
  it('tells public unicast addresses from every other range', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111']) expect(isPublicAddress(address), address).to.equal(true);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
      'nonsense',
    ]) {
      expect(isPublicAddress(address), address).to.equal(false);
    }
  });

  it('accepts https to a public host; http only with WEBHOOKS_ALLOW_HTTP', async () => {
    expect(await refusal('https://hooks.example.com/x')).to.equal(null);
    expect(await refusal('http://hooks.example.com/x')).to.match(/must use https/);
    expect(await refusal('http://hooks.example.com/x', { ...STRICT, WEBHOOKS_ALLOW_HTTP: true })).to.equal(null);
    expect(await refusal('https://user:pass@hooks.example.com/x')).to.match(/credentials/);
  });

  it('refuses a name resolving to a private address (any of its addresses), unless WEBHOOKS_ALLOW_PRIVATE', async () => {
    const resolvesPrivate = async () => ['93.184.215.14', '10.0.0.7'];
    expect(await refusal('https://internal.example.com/x', STRICT, resolvesPrivate)).to.match(/non-public address \(10\.0\.0\.7\)/);
    expect(await refusal('https://internal.example.com/x', { ...STRICT, WEBHOOKS_ALLOW_PRIVATE: true }, resolvesPrivate)).to.equal(null);
    expect(await refusal('https://nowhere.invalid/x', STRICT, async () => Promise.reject(new Error('ENOTFOUND')))).to.match(/does not resolve/);
  });
});
