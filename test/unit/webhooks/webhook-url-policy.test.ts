import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { postWithTimeout } from '../../../src/application/webhooks/http-post.js';
import { checkWebhookUrl, deliveryLookup, isPublicAddress } from '../../../src/application/webhooks/webhook-url-policy.js';
import { DomainError } from '../../../src/domain/domain-error.js';

const STRICT = { WEBHOOKS_ALLOW_HTTP: false, WEBHOOKS_ALLOW_PRIVATE: false };

async function refusal(url: string, settings = STRICT, resolve = async (_host: string) => ['93.184.215.14']): Promise<string | null> {
  try {
    await checkWebhookUrl(url, settings, { resolve });
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
      '::127.0.0.1',
      '::10.0.0.1',
      '::169.254.169.254',
      '::0.0.0.2',
      // As a URL writes them (new URL('https://[::127.0.0.1]/').hostname is [::7f00:1]): IPv4-compatible, deprecated.
      '::7f00:1',
      '::a00:1',
      '::a9fe:a9fe',
      '::808:808',
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
    // An address literal is checked as written, IPv4-compatible IPv6 included.
    for (const url of ['https://[::127.0.0.1]/', 'https://[::10.0.0.1]/x', 'https://[::169.254.169.254]/', 'https://[::ffff:127.0.0.1]/'])
      expect(await refusal(url), url).to.match(/non-public address/);
  });

  it('refuses a name resolving to a private address (any of its addresses), unless WEBHOOKS_ALLOW_PRIVATE', async () => {
    const resolvesPrivate = async () => ['93.184.215.14', '10.0.0.7'];
    expect(await refusal('https://internal.example.com/x', STRICT, resolvesPrivate)).to.match(/non-public address \(10\.0\.0\.7\)/);
    expect(await refusal('https://internal.example.com/x', { ...STRICT, WEBHOOKS_ALLOW_PRIVATE: true }, resolvesPrivate)).to.equal(null);
    expect(await refusal('https://nowhere.invalid/x', STRICT, async () => Promise.reject(new Error('ENOTFOUND')))).to.match(/does not resolve/);
  });
});

describe('webhook deliveries: the connection checks the address it resolves (no DNS rebinding)', () => {
  it('a host resolving to a private address is refused at connect time unless WEBHOOKS_ALLOW_PRIVATE=true', async () => {
    let received = 0;
    const server = http.createServer((_request, response) => {
      received += 1;
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`;
    try {
      // As if the host had passed checkWebhookUrl with a public address and now answered 127.0.0.1.
      const refused = await postWithTimeout(url, {}, '{}', 2_000, { lookup: deliveryLookup({ ...STRICT, WEBHOOKS_ALLOW_HTTP: true }) });
      expect(refused.statusCode).to.equal(null);
      expect(refused.error).to.match(/localhost resolves to a non-public address \((127\.0\.0\.1|::1)\)/);
      expect(received).to.equal(0);
      const allowed = await postWithTimeout(url, {}, '{}', 2_000, { lookup: deliveryLookup({ WEBHOOKS_ALLOW_HTTP: true, WEBHOOKS_ALLOW_PRIVATE: true }) });
      expect(allowed.statusCode).to.equal(204);
      expect(received).to.equal(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
