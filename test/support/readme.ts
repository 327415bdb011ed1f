import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { tempDataDir } from './test-service.js';

/** The README as a newcomer reads it: its commands are run verbatim by the test/e2e/readme-*.test.ts suites. */
const README = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/**
 * The README from the heading line `heading` (`## Walkthrough`, `### Apps in a browser (CORS)`)
 * up to the next heading of its level or above.
 */
export function readmeSection(heading: string): string {
  const lines = README.split('\n');
  const start = lines.indexOf(heading);
  expect(start, heading).to.be.greaterThan(-1);
  const level = /^#+/.exec(heading)![0].length;
  let inCode = false;
  let end = start + 1;
  for (; end < lines.length; end += 1) {
    const line = lines[end]!;
    // A `# comment` in a shell block is not a heading.
    if (line.startsWith('```')) inCode = !inCode;
    const marks = /^(#+) /.exec(line)?.[1]?.length;
    if (!inCode && marks !== undefined && marks <= level) break;
  }
  return lines.slice(start, end).join('\n');
}

/** The ```sh blocks of `text`, verbatim. */
export function shellBlocks(text: string): string[] {
  return codeBlocks(text, 'sh');
}

/** The code blocks of `language` in `text`, verbatim. */
export function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

/**
 * Runs a README block as a reader pastes it (bash, stopping at the first failure) against the
 * service at `base`, from a directory of its own; asynchronously, so a service running in this
 * process answers meanwhile.
 */
export async function runVerbatim(commands: string, base: string, timeout = 30_000): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', commands], {
    cwd: tempDataDir(),
    env: { ...process.env, BASE: base },
    encoding: 'utf8',
    timeout,
  });
}

/**
 * A fresh data directory loaded by `npm run demo`, as the README's sections that start from the
 * demo data say (with no keys of its own: the demo makes one-off keys).
 */
export async function demoDataDir(): Promise<string> {
  const dataDir = tempDataDir();
  const { PORT: _port, ...inherited } = process.env;
  await promisify(execFile)('npm', ['run', '-s', 'demo'], {
    env: { ...inherited, DATA_DIR: dataDir, LOG_LEVEL: 'silent', CLIENT_API_KEYS: '', SECRET_API_KEYS: '' },
  });
  return dataDir;
}
