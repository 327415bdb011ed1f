import fs from 'node:fs';
import { expect } from 'chai';
import { buildConsole } from '../../scripts/build-console.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** SPEC §14: what every /console response carries. */
function expectConsoleHeaders(headers: Headers) {
  const csp = headers.get('content-security-policy') ?? '';
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
      .map(([name, ...values]) => [name, values]),
  );
  expect(directives.get('default-src')).to.deep.equal(["'self'"]);
  expect(directives.get('script-src')).to.deep.equal(["'self'"]);
  expect(directives.get('connect-src')).to.deep.equal(["'self'"]);
  expect(directives.get('frame-ancestors')).to.deep.equal(["'none'"]);
  expect(csp).not.to.match(/unsafe-inline|unsafe-eval/);
  expect(headers.get('x-content-type-options')).to.equal('nosniff');
  expect(headers.get('referrer-policy')).to.equal('no-referrer');
}

describe('API: the console is served at /console (SPEC §14)', () => {
  let svc: TestService;

  before(async () => {
    await buildConsole();
    svc = await startTestService({ validateResponses: false });
  });
  after(async () => svc.stop());

  it('GET /console serves the page without a key, with the security headers', async () => {
    for (const pathname of ['/console', '/console/']) {
      const response = await fetch(`${svc.url}${pathname}`);
      expect(response.status, pathname).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/html/);
      expectConsoleHeaders(response.headers);
      const html = await response.text();
      expect(html).to.include('<script type="module" src="/console/assets/main.js"></script>');
      // No inline script and nothing from another origin.
      expect(html).not.to.match(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html).not.to.match(/(src|href)="(https?:)?\/\//);
    }
  });

  it('carries the Content-Security-Policy the README quotes, word for word (newcomer probe: the quote left five directives out)', async () => {
    const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const quoted = /every `\/console` response carries `Content-Security-Policy: ([^`]+)`/.exec(readme)?.[1];
    const served = (await fetch(`${svc.url}/console`)).headers.get('content-security-policy');
    expect(quoted?.replace(/\s+/g, ' ')).to.equal(served);
  });

  it('serves the bundle and stylesheet under /console/assets with the same headers', async () => {
    for (const [asset, type] of [
      ['main.js', /^text\/javascript/],
      ['main.css', /^text\/css/],
    ] as const) {
      const response = await fetch(`${svc.url}/console/assets/${asset}`);
      expect(response.status, asset).to.equal(200);
      expect(response.headers.get('content-type')).to.match(type);
      expectConsoleHeaders(response.headers);
      expect((await response.text()).length).to.be.greaterThan(1000);
    }
  });

  it('answers an unknown console path with 404 PATH_ERROR, still with the headers', async () => {
    // The assets folder itself is no page either: a 404 under the console's policy, not a redirect.
    // An asset's path with a slash after it names no file: 404, not the asset's 405 (main.js%2f is the same path).
    for (const pathname of [
      '/console/assets/nope.js',
      '/console/settings',
      '/console/assets/../../package.json',
      '/console/assets',
      '/console/assets?x=1',
      '/console/assets/main.js/',
      '/console/assets/main.css/',
      '/console/assets/main.js%2f',
    ]) {
      const response = await fetch(`${svc.url}${pathname}`, { redirect: 'manual' });
      // (fetch resolves the `..` of the third path: it asks for /package.json, outside the console)
      if (!pathname.includes('..')) expectConsoleHeaders(response.headers);
      expect(response.status, pathname).to.equal(404);
      expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('PATH_ERROR');
    }
    // The message names the path as requested, the /console prefix included.
    const missing = (await (await fetch(`${svc.url}/console/assets/nope.js`)).json()) as { errors: { message: string }[] };
    expect(missing.errors[0]!.message).to.equal('No such path: GET /console/assets/nope.js');
    expectConsoleHeaders((await fetch(`${svc.url}/console/nope`)).headers);
  });

  it('ignores a byte range: the whole file, never an error about a body', async () => {
    for (const pathname of ['/console/', '/console/assets/main.js']) {
      for (const range of ['bytes=999999999-', 'bytes=0-9']) {
        const response = await fetch(`${svc.url}${pathname}`, { headers: { range } });
        expect(response.status, `${pathname} ${range}`).to.equal(200);
        expect((await response.text()).length).to.be.greaterThan(100);
      }
    }
  });

  it('answers another method on the page or an asset with 405 METHOD_NOT_ALLOWED (Allow: GET), on a missing asset 404', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      for (const pathname of ['/console', '/console/', '/console/assets/main.js', '/console/assets/main.css']) {
        const response = await fetch(`${svc.url}${pathname}`, { method });
        expect(response.status, `${method} ${pathname}`).to.equal(405);
        expect(response.headers.get('allow')).to.equal('GET');
        expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('METHOD_NOT_ALLOWED');
        expectConsoleHeaders(response.headers);
      }
    }
    for (const pathname of [
      '/console/assets/nope.js',
      '/console/assets/../../package.json',
      '/console/assets/',
      '/console/assets/%E0%A4%A',
      '/console/assets/main.js/',
    ]) {
      const response = await fetch(`${svc.url}${pathname}`, { method: 'POST' });
      expect(response.status, pathname).to.equal(404);
    }
    // The 404 names the path as requested.
    const page = (await (await fetch(`${svc.url}/console/nope?x=1`, { method: 'POST' })).json()) as { errors: { message: string }[] };
    expect(page.errors[0]!.message).to.equal('No such path: POST /console/nope');
  });

  it('CONSOLE=off: /console is 404 PATH_ERROR', async () => {
    const off = await startTestService({ env: { CONSOLE: 'off' }, validateResponses: false });
    try {
      for (const pathname of ['/console', '/console/assets/main.js']) {
        const response = await fetch(`${off.url}${pathname}`);
        expect(response.status, pathname).to.equal(404);
        expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('PATH_ERROR');
      }
    } finally {
      await off.stop();
    }
  });

  it('a bad CONSOLE value stops start-up naming the variable', async () => {
    let failure: unknown;
    try {
      await (await startTestService({ env: { CONSOLE: 'maybe' } })).stop();
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.include('CONSOLE').and.include('maybe');
  });
});
