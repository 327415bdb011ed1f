import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { browserTestsSkipped, launchChromium } from '../support/chromium.js';
import { createUser } from '../support/fixtures.js';
import { CLIENT_KEY, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

const APP = 'https://app.example.com';

/** A preflight as a browser sends it before a cross-origin request with an API key. */
function preflight(svc: TestService, path: string, origin: string, method = 'POST') {
  return fetch(`${svc.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type,x-api-key' },
  });
}

describe('API: apps in a browser (CORS_ORIGINS)', () => {
  describe('without CORS_ORIGINS (the default)', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService();
    });
    after(async () => svc.stop());

    it('sends no CORS header, and a preflight is a method the path does not have (405)', async () => {
      const answer = await fetch(`${svc.url}/codes/NOPE`, { headers: { origin: APP, 'x-api-key': CLIENT_KEY } });
      expect(answer.status).to.equal(404);
      expect(answer.headers.get('access-control-allow-origin')).to.equal(null);
      expect((await preflight(svc, '/users', APP)).status).to.equal(405);
    });
  });

  describe('with origins named', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { CORS_ORIGINS: `${APP},http://localhost:8081` } });
      await createUser(svc, 'ann');
    });
    after(async () => svc.stop());

    it("answers a named origin's preflight for the app's operations, native and WinWinKit-compatible, without a key", async () => {
      for (const path of ['/users', '/users/ann/claim-code', '/codes/ANY', '/store/offer-codes/x', '/compat/winwinkit/users/ann/rewards/withdraw-credits']) {
        const answer = await preflight(svc, path, APP);
        expect(answer.status, path).to.equal(204);
        expect(answer.headers.get('access-control-allow-origin'), path).to.equal(APP);
        expect(answer.headers.get('access-control-allow-methods'), path).to.equal('GET,POST');
        expect(answer.headers.get('access-control-allow-headers'), path).to.equal('x-api-key,content-type,x-request-id');
        expect(answer.headers.get('access-control-max-age'), path).to.equal('600');
        expect(answer.headers.get('vary'), path).to.contain('Origin');
      }
    });

    it('names the origin on answers, errors included, and lets the page read the request id and when to retry', async () => {
      const read = await fetch(`${svc.url}/users/ann`, { headers: { origin: 'http://localhost:8081', 'x-api-key': CLIENT_KEY } });
      expect(read.status).to.equal(200);
      expect(read.headers.get('access-control-allow-origin')).to.equal('http://localhost:8081');
      expect(read.headers.get('access-control-expose-headers')).to.equal('x-request-id,retry-after,ratelimit,ratelimit-policy');
      const missing = await fetch(`${svc.url}/users/nobody`, { headers: { origin: APP, 'x-api-key': CLIENT_KEY } });
      expect(missing.status).to.equal(404);
      expect(missing.headers.get('access-control-allow-origin')).to.equal(APP);
    });

    it('names no other origin, opens no admin operation to pages, and an OPTIONS that is not a preflight is 405', async () => {
      const other = await preflight(svc, '/users', 'https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).to.equal(null);
      const read = await fetch(`${svc.url}/users/ann`, { headers: { origin: 'https://evil.example', 'x-api-key': CLIENT_KEY } });
      expect(read.headers.get('access-control-allow-origin')).to.equal(null);
      // The manual grant needs the secret key, on either surface: no page may ask for it.
      for (const path of ['/admin/rewards', '/admin/users/ann', '/users/ann/rewards/grant', '/compat/winwinkit/users/ann/rewards/grant']) {
        const admin = await preflight(svc, path, APP, 'GET');
        expect(admin.status, path).to.equal(405);
        expect(admin.headers.get('access-control-allow-origin'), path).to.equal(null);
        const answer = await fetch(`${svc.url}${path}`, { headers: { origin: APP, 'x-api-key': SECRET_KEY } });
        expect(answer.headers.get('access-control-allow-origin'), path).to.equal(null);
      }
      expect((await fetch(`${svc.url}/users`, { method: 'OPTIONS', headers: { origin: APP } })).status).to.equal(405);
    });
  });

  it('CORS_ORIGINS=* opens the app API to any page', async () => {
    const svc = await startTestService({ env: { CORS_ORIGINS: '*' } });
    try {
      const answer = await preflight(svc, '/users', 'https://anywhere.example');
      expect(answer.status).to.equal(204);
      expect(answer.headers.get('access-control-allow-origin')).to.equal('*');
    } finally {
      await svc.stop();
    }
  });

  describe('in a real browser', function () {
    this.timeout(120_000);
    let page: http.Server;
    let svc: TestService;
    let browser: Browser;
    let pageOrigin: string;

    before(async function () {
      if (browserTestsSkipped) {
        console.warn('    CONSOLE_BROWSER_TESTS=skip: the CORS browser test is skipped');
        this.skip();
      }
      // The app's web page, on an origin of its own.
      page = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
      await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
      pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      svc = await startTestService({ env: { CORS_ORIGINS: pageOrigin } });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await svc?.stop();
      await new Promise((resolve) => page?.close(resolve));
    });

    /** What `fetch` gives a page at `origin`: the status and the request id, or the error. */
    async function fetchFrom(origin: string) {
      const tab = await browser.newPage();
      try {
        await tab.goto(`${origin}/`);
        return await tab.evaluate(
          async ({ url, key }) => {
            try {
              const answer = await fetch(`${url}/users`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'x-api-key': key },
                body: JSON.stringify({ app_user_id: `web-${Math.random()}` }),
              });
              return { status: answer.status, requestId: answer.headers.get('x-request-id'), error: null };
            } catch (error) {
              return { status: null, requestId: null, error: String(error) };
            }
          },
          { url: svc.url, key: CLIENT_KEY },
        );
      } finally {
        await tab.close();
      }
    }

    it("lets the named origin's page register a user and read the answer; another origin's page cannot", async () => {
      const allowed = await fetchFrom(pageOrigin);
      expect(allowed).to.include({ status: 201, error: null });
      expect(allowed.requestId).to.match(/^[0-9a-f-]{36}$/);
      // The same page server under another name is another origin.
      const refused = await fetchFrom(pageOrigin.replace('127.0.0.1', 'localhost'));
      expect(refused.status).to.equal(null);
      expect(refused.error).to.match(/TypeError/);
    });
  });
});
