import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../support/temp-dir.js';

/**
 * What every script promises on its command line: `--help` prints the usage (exit 0, nothing
 * else done), an unknown flag is a usage error (exit 2), and a script that reads a store
 * refuses a DATA_DIR without a database, naming the path, without creating anything.
 */
interface ScriptCase {
  file: string;
  npm: string;
  /** Arguments that make it read a store (null: it creates its store, e.g. the demo). */
  reads: string[] | null;
  /** Where the missing store would be, given the missing directory (default DATA_DIR/referrals.db). */
  env?: (missing: string) => Record<string, string>;
}

const SCRIPTS: ScriptCase[] = [
  { file: 'scripts/audit-credits.ts', npm: 'npm run audit-credits', reads: [] },
  { file: 'scripts/replay.ts', npm: 'npm run replay', reads: [] },
  { file: 'scripts/export-events.ts', npm: 'npm run export-events', reads: ['--type', 'UserRegistered'] },
  { file: 'scripts/migrate-events.ts', npm: 'npm run migrate-events', reads: ['--to', path.join(os.tmpdir(), 'unused-target')] },
  { file: 'scripts/demo.ts', npm: 'npm run demo', reads: null },
  { file: 'scripts/generate-events.ts', npm: 'npm run generate-events', reads: null },
  { file: 'scripts/bench.ts', npm: 'npm run bench', reads: null },
  // Reads a backup, not DATA_DIR's store: test/e2e/restore-from-backups.test.ts has its refusals.
  { file: 'scripts/restore-backup.ts', npm: 'npm run restore-backup', reads: null },
];

/** A preload that makes the process report Node 20.20.2 (the machines' end-of-life release). */
const AS_NODE_20 = path.join(tempDir('as-node-20'), 'as-node-20.cjs');
fs.writeFileSync(AS_NODE_20, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });\n");

function run(file: string, args: string[], env: Record<string, string> = {}, nodeOptions: string[] = []) {
  return spawnSync(process.execPath, [...nodeOptions, '--import', 'tsx', file, ...args], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('Scripts: --help, unknown flags and a missing database', function () {
  this.timeout(120_000);

  for (const script of SCRIPTS) {
    describe(script.file, () => {
      it('--help prints the usage, options and examples, and exits 0', () => {
        const result = run(script.file, ['--help']);
        expect(result.status, result.stderr).to.equal(0);
        expect(result.stdout).to.match(new RegExp(`^Usage: ${script.npm} --`));
        expect(result.stdout).to.contain('Options:').and.to.contain('--help').and.to.contain('Examples:');
        expect(result.stdout).to.contain(script.npm);
      });

      it('an unknown flag is a usage error: exit 2, the flag named, the usage, nothing written to stdout', () => {
        const dataDir = path.join(os.tmpdir(), `referrals-never-${process.pid}-${Date.now()}`);
        const result = run(script.file, ['--no-such-flag'], { DATA_DIR: dataDir });
        expect(result.status).to.equal(2);
        expect(result.stderr).to.contain('--no-such-flag').and.to.contain('Usage:');
        expect(result.stdout).to.equal('');
        expect(fs.existsSync(dataDir)).to.equal(false);
      });

      it('on a Node release the project does not support, says so and exits 1 before anything loads (no crash, nothing created)', () => {
        const dataDir = path.join(os.tmpdir(), `referrals-old-node-${process.pid}-${Date.now()}`);
        const result = run(script.file, script.file.includes('migrate') ? ['--from', dataDir, '--to', `${dataDir}-to`] : [], { DATA_DIR: dataDir }, [
          '--require',
          AS_NODE_20,
        ]);
        expect(result.status, result.stderr).to.equal(1);
        expect(result.stderr).to.contain('Node 20.20.2 cannot run this service');
        expect(fs.existsSync(dataDir)).to.equal(false);
      });

      if (script.reads !== null) {
        const reads = script.reads;
        it('refuses a DATA_DIR without a database (exit 66), naming the path, and creates nothing', () => {
          const missing = path.join(tempDir('referrals-typo'), 'dat');
          const args = script.file.includes('migrate') ? ['--from', missing, ...reads] : reads;
          const result = run(script.file, args, { DATA_DIR: missing });
          expect(result.status, result.stderr).to.equal(66);
          expect(result.stderr).to.contain(path.join(missing, 'referrals.db'));
          expect(fs.existsSync(missing)).to.equal(false);
        });
      }
    });
  }
});
