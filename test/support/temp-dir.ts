import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Every directory a test makes lives under one folder for the run, removed when the process
 * exits: a run leaves nothing in the system's temp folder (a full `npm test` used to leave about
 * a thousand directories there, data dirs included).
 */
let runRoot: string | null = null;

function root(): string {
  if (runRoot === null) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-tests-'));
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
    runRoot = made;
  }
  return runRoot;
}

/** A fresh empty directory, named after `prefix`, removed with the run's folder at exit. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(root(), `${prefix}-`));
}
