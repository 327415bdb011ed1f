import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { PROJECTOR_LOCK_FILE, SqliteProjectorLock } from '../../../src/adapters/sqlite/projector-lock.js';
import { tempDataDir } from '../../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** In a process of its own: takes the lock of the DATA_DIR in argv, says so, and holds it until killed. */
const HOLDER = `
import { SqliteProjectorLock } from './src/adapters/sqlite/projector-lock.ts';
const lock = new SqliteProjectorLock(process.argv.at(-1));
console.log(lock.tryTake() ? 'held' : 'busy');
setInterval(() => {}, 60_000);
`;

/** Starts HOLDER on `dir`; resolves once it says whether it took the lock. */
async function holderProcess(dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', HOLDER, dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const said = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { child, said };
}

describe('SqliteProjectorLock: one projector per embedded DATA_DIR', () => {
  it('one holder at a time; released, the next one takes it', () => {
    const dir = tempDataDir();
    const first = new SqliteProjectorLock(dir);
    const second = new SqliteProjectorLock(dir);
    try {
      expect(first.tryTake()).to.equal(true);
      expect(first.tryTake(), 'taken again by its holder').to.equal(true);
      expect(second.tryTake()).to.equal(false);
      first.release();
      expect(second.tryTake()).to.equal(true);
      expect(first.tryTake()).to.equal(false);
    } finally {
      first.close();
      second.close();
    }
  });

  it('held here, it stays out of reach of another process after a second lock object opens it in this process', async function () {
    this.timeout(30_000);
    const dir = tempDataDir();
    const holder = new SqliteProjectorLock(dir);
    const second = new SqliteProjectorLock(dir);
    try {
      expect(holder.tryTake()).to.equal(true);
      // (Opening and closing any handle to the file would have dropped this process's POSIX lock on it.)
      const third = new SqliteProjectorLock(dir);
      third.close();
      const { child: other, said } = await holderProcess(dir);
      other.kill('SIGKILL');
      expect(said).to.equal('busy');
      expect(second.tryTake()).to.equal(false);
    } finally {
      holder.close();
      second.close();
    }
  });

  it('a holder killed by SIGKILL frees it at once: no expiry to wait out', async function () {
    this.timeout(30_000);
    const dir = tempDataDir();
    const { child: holder, said } = await holderProcess(dir);
    expect(said).to.equal('held');
    const standby = new SqliteProjectorLock(dir);
    try {
      expect(standby.tryTake(), 'while the other process lives').to.equal(false);
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.kill('SIGKILL');
      await exited;
      expect(standby.tryTake(), 'once it is killed').to.equal(true);
    } finally {
      standby.close();
    }
  });

  it('a lock file deleted under its holder is taken again by the holder: a process started afterwards stands by', async function () {
    this.timeout(30_000);
    const dir = tempDataDir();
    const holder = new SqliteProjectorLock(dir);
    try {
      expect(holder.tryTake()).to.equal(true);
      expect(holder.keepOnItsFile()).to.equal('kept');
      fs.rmSync(path.join(dir, PROJECTOR_LOCK_FILE));
      expect(holder.keepOnItsFile()).to.equal('renewed');
      expect(holder.keepOnItsFile()).to.equal('kept');
      const { child, said } = await holderProcess(dir);
      child.kill('SIGKILL');
      expect(said).to.equal('busy');
    } finally {
      holder.close();
    }
  });

  it('one whose deleted file another holder replaced first says it is lost', () => {
    const dir = tempDataDir();
    const holder = new SqliteProjectorLock(dir);
    let other: SqliteProjectorLock | null = null;
    try {
      expect(holder.tryTake()).to.equal(true);
      fs.rmSync(path.join(dir, PROJECTOR_LOCK_FILE));
      other = new SqliteProjectorLock(dir);
      expect(other.tryTake(), 'the new file is free').to.equal(true);
      expect(holder.keepOnItsFile()).to.equal('lost');
      expect(other.keepOnItsFile()).to.equal('kept');
    } finally {
      holder.close();
      other?.close();
    }
  });

  it('a standby never takes a deleted or replaced lock file while its holder lives: it follows the holder to the new one (reviews: two processes projected)', () => {
    const dir = tempDataDir();
    const file = path.join(dir, PROJECTOR_LOCK_FILE);
    const holder = new SqliteProjectorLock(dir);
    const standby = new SqliteProjectorLock(dir);
    try {
      expect(holder.tryTake()).to.equal(true);
      expect(standby.tryTake()).to.equal(false);
      fs.rmSync(file);
      expect(standby.tryTake(), 'deleted: still held by its holder').to.equal(false);
      expect(fs.existsSync(file), 'nothing made in its place meanwhile').to.equal(false);
      expect(holder.keepOnItsFile()).to.equal('renewed');
      expect(standby.tryTake(), 'the holder holds the new file').to.equal(false);
      // Replaced by another file (a clean-up job), before the holder's next check.
      fs.writeFileSync(`${file}.new`, '');
      fs.renameSync(`${file}.new`, file);
      expect(standby.tryTake(), 'replaced: still held by its holder').to.equal(false);
      expect(holder.keepOnItsFile()).to.equal('renewed');
      holder.release();
      expect(standby.tryTake(), 'released: the standby takes over').to.equal(true);
      expect(holder.tryTake()).to.equal(false);
    } finally {
      holder.close();
      standby.close();
    }
  });

  it('a standby whose holder is gone takes the lock file made in place of a deleted one at once', async function () {
    this.timeout(30_000);
    const dir = tempDataDir();
    const { child, said } = await holderProcess(dir);
    const standby = new SqliteProjectorLock(dir);
    try {
      expect(said).to.equal('held');
      expect(standby.tryTake()).to.equal(false);
      fs.rmSync(path.join(dir, PROJECTOR_LOCK_FILE));
      expect(standby.tryTake(), 'its holder still holds the deleted file').to.equal(false);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      expect(standby.tryTake()).to.equal(true);
      const { child: late, said: lateSaid } = await holderProcess(dir);
      late.kill('SIGKILL');
      expect(lateSaid, 'the file it took is the one in DATA_DIR').to.equal('busy');
    } finally {
      child.kill('SIGKILL');
      standby.close();
    }
  });
});
