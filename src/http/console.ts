import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, Router } from 'express';
import type { Config } from '../config.js';
import { methodNotAllowed, pathNotFound } from './errors.js';
import { labelRoute } from './route-label.js';

/**
 * The operator console (SPEC §14): a single-page app built by `npm run build:console` into
 * `dist/console/` and served here at `/console`, its assets under `/console/assets/`. Loading it
 * needs no key; every call it makes goes to the admin API with the key the operator enters.
 * `CONSOLE=off` mounts nothing, so `/console` is the usual 404 `PATH_ERROR`.
 */

/** SPEC §14: nothing but this origin; no inline or eval'd script; never framed. */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
  // Assets are rebuilt in place by `npm run build:console`: always revalidate.
  res.setHeader('cache-control', 'no-cache');
  next();
};

/** The package root (where package.json is), from src/http in development or dist/src/http when built. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the console router');
    dir = parent;
  }
  return dir;
}

const CONSOLE_ASSETS_DIR = path.join(packageRoot(), 'dist', 'console');

export function consoleRouter(config: Pick<Config, 'CONSOLE'>): Router {
  const router = Router({ caseSensitive: true, strict: true });
  const assetsDir = CONSOLE_ASSETS_DIR;
  if (config.CONSOLE === 'off') return router;
  const index = path.join(assetsDir, 'index.html');
  const page: RequestHandler = (_req, res) => {
    if (!fs.existsSync(index)) {
      res.status(503).type('text/plain').send('The console is not built: run `npm run build:console` (npm ci, npm start and npm test do it).\n');
      return;
    }
    res.sendFile(index, { acceptRanges: false });
  };
  const assets = path.join(assetsDir, 'assets');
  router.use('/console', securityHeaders);
  router.get(['/console', '/console/'], page);
  router.all(['/console', '/console/'], methodNotAllowed(['GET']));
  // No redirect of a folder to its slash (it went to a 404, under the file server's own policy);
  // no byte ranges (the files are small, and a range past the end was answered as a bad body).
  // Another method on an asset that exists is 405, as on every known path (SPEC §1).
  const otherMethod: RequestHandler = (req, res, next) => (isAsset(assets, req.path) ? methodNotAllowed(['GET'])(req, res, next) : next());
  const files = Router().use(
    express.static(assets, { index: false, redirect: false, acceptRanges: false, fallthrough: true, etag: true, lastModified: false }),
    otherMethod,
  );
  router.use('/console/assets', labelRoute('/console/assets/*', files));
  // Anything else under /console is the API's 404, still with the console's headers.
  router.use('/console', pathNotFound);
  return router;
}

/** Whether `urlPath` (relative to /console/assets) names a file of the built assets. */
function isAsset(assets: string, urlPath: string): boolean {
  let relative: string;
  try {
    relative = decodeURIComponent(urlPath);
  } catch {
    return false;
  }
  // A file is never a folder: `main.js/` (a path the file server cannot serve) is no asset.
  if (relative.endsWith('/')) return false;
  const file = path.resolve(assets, `.${path.posix.normalize(relative)}`);
  if (!file.startsWith(`${assets}${path.sep}`)) return false;
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
