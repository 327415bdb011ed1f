import cors from 'cors';
import type { RequestHandler } from 'express';

/**
 * CORS for the app API (`CORS_ORIGINS`): a web build of the app (an Expo or React Native Web
 * app, a single-page app) calls the service from a page on another origin, so the browser asks
 * first (a preflight: `OPTIONS` with `Access-Control-Request-Method`) and then reads an answer
 * only when it names the page's origin. The expressjs `cors` middleware writes those headers.
 *
 * Only the app's client-key operations are open to pages (`openTo`: their paths, src/http/app.ts):
 * the secret key belongs on a server, so neither `/admin` nor the manual grant answers a
 * preflight, and the console is served from the service's own origin. Without `CORS_ORIGINS`
 * nothing here runs: no CORS header is sent, and `OPTIONS` is 405 like any method a path does not have.
 */
export function browserAccess(origins: readonly string[] | '*', openTo: (path: string) => boolean): RequestHandler {
  const headers = cors({
    origin: origins === '*' ? '*' : [...origins],
    methods: ['GET', 'POST'],
    // What the app API reads from a request beyond the CORS-safelisted headers.
    allowedHeaders: ['x-api-key', 'content-type', 'x-request-id'],
    // What an app reads from an answer: the request id to quote, and when to retry (429, 503).
    exposedHeaders: ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy'],
    maxAge: 600,
  });
  return (req, res, next) => {
    // Not from a page (no Origin), or an OPTIONS that is not a preflight: the API as ever (405).
    if (req.headers.origin === undefined || !openTo(req.path)) return next();
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return next();
    headers(req, res, next);
  };
}
