/**
 * Builds the operator console (console/) into dist/console/: one ES module bundle and one
 * stylesheet (Preact, uPlot, openapi-fetch and the views), plus index.html. No CDN, nothing
 * fetched: the service serves these files itself at /console (src/http/console.ts).
 *
 *   npm run build:console          (also run by npm ci, npm start, npm test and npm run build)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist', 'console');

export async function buildConsole(): Promise<void> {
  fs.mkdirSync(path.join(OUT, 'assets'), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'console/src/main.tsx')],
    outdir: path.join(OUT, 'assets'),
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'linked',
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(ROOT, 'console/index.html'), path.join(OUT, 'index.html'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole();
  console.error(`console built into ${path.relative(process.cwd(), OUT) || '.'}`);
}
