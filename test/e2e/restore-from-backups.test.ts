import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { get, post, startChildService } from '../support/child-service.js';
import { createUser } from '../support/fixtures.js';
import { eventually, Receiver } from '../support/webhook-receiver.js';
import { startTestService, tempDataDir } from '../support/test-service.js';

/** Copies the files of `name` (the database, its -wal and -shm) from one directory to another. */
function copyDatabase(name: string, from: string, to: string): void {
  for (const file of fs.readdirSync(from).filter((entry) => entry.startsWith(name))) fs.copyFileSync(path.join(from, file), path.join(to, file));
}

function removeDatabase(name: string, dir: string): void {
  for (const file of fs.readdirSync(dir).filter((entry) => entry.startsWith(name))) fs.rmSync(path.join(dir, file));
}

/** The README's backup (For operators): a consistent copy of each file, in the order it gives, the key store apart. */
function backUp(dataDir: string, dir: string, keysDir = dir): void {
  for (const [name, into] of [
    ['webhooks.db', dir],
    ['referrals.db', dir],
    ['data-keys.db', keysDir],
  ] as const) {
    const db = new Database(path.join(dataDir, name));
    try {
      db.exec(`VACUUM INTO '${path.join(into, name).replaceAll("'", "''")}'`);
    } finally {
      db.close();
    }
  }
}

function restoreBackup(dataDir: string, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/restore-backup.ts', ...args], {
    env: { ...process.env, NODE_ENV: 'test', DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

function integrity(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
}

/** Each user answers as itself when expected, else 404 (never another user's document). */
async function expectUsers(url: string, present: string[], absent: string[]): Promise<void> {
  for (const user of present) expect((await get(url, `/users/${user}`)).body.data.user.app_user_id, user).to.equal(user);
  for (const user of absent) expect((await get(url, `/users/${user}`)).status, user).to.equal(404);
}

/** The user's events as GET /admin/events shows them (personal fields opened, or marked erased). */
async function registration(svc: Awaited<ReturnType<typeof startTestService>>, appUserId: string) {
  const events = (await svc.admin('GET', `/admin/events?stream=user-${appUserId}&type=UserRegistered`)).body.data.events;
  return events[0].data as { metadata: unknown };
}

describe('E2E: restoring from backups (README, For operators and Personal data)', function () {
  this.timeout(120_000);

  it('an erasure repeated after restoring an older key store destroys the keys it brought back', async () => {
    const dataDir = tempDataDir();
    const keysBackup = tempDataDir();
    let svc = await startTestService({ dataDir });
    await createUser(svc, 'erased', { metadata: { email: 'erased@example.org' }, payment_customer_id: 'cus_erased' });
    await svc.stop();
    copyDatabase('data-keys.db', dataDir, keysBackup);
    svc = await startTestService({ dataDir });
    expect((await svc.admin('DELETE', '/admin/users/erased')).status).to.equal(204);
    await svc.stop();
    // The key store comes back from the backup taken before the erasure: the log says erased, the keys are there.
    removeDatabase('data-keys.db', dataDir);
    copyDatabase('data-keys.db', keysBackup, dataDir);
    svc = await startTestService({ dataDir });
    try {
      expect(await registration(svc, 'erased')).to.deep.include({ metadata: { email: 'erased@example.org' } });
      // README: repeat the erasures made since the backup.
      expect((await svc.admin('DELETE', '/admin/users/erased')).status).to.equal(204);
      expect(await registration(svc, 'erased')).to.deep.include({ metadata: { erased: true } });
    } finally {
      await svc.stop();
    }
    const keys = new Database(path.join(dataDir, 'data-keys.db'), { readonly: true });
    try {
      const subjects = (keys.prepare('SELECT subject FROM data_keys').all() as { subject: string }[]).map((row) => row.subject);
      expect(subjects.filter((subject) => subject === 'user:erased' || subject.startsWith('customer:'))).to.deep.equal([]);
    } finally {
      keys.close();
    }
  });

  it('an update racing that repeated erasure is erased with it or kept after it, never sealed under a key it destroys', async () => {
    const dataDir = tempDataDir();
    const keysBackup = tempDataDir();
    const users = Array.from({ length: 24 }, (_, index) => `restored-racer-${index}`);
    let svc = await startTestService({ dataDir });
    for (const user of users) await createUser(svc, user, { metadata: { email: `${user}@example.org` } });
    await svc.stop();
    copyDatabase('data-keys.db', dataDir, keysBackup);
    svc = await startTestService({ dataDir });
    for (const user of users) expect((await svc.admin('DELETE', `/admin/users/${user}`)).status).to.equal(204);
    await svc.stop();
    removeDatabase('data-keys.db', dataDir);
    copyDatabase('data-keys.db', keysBackup, dataDir);
    svc = await startTestService({ dataDir });
    try {
      for (const user of users) {
        // The update finds the restored key and seals under it; the DELETE destroys that key.
        const [updated, erased] = await Promise.all([
          svc.call('POST', '/users', { app_user_id: user, metadata: { email: `${user}-later@example.org` } }),
          new Promise((resolve) => setTimeout(resolve, users.indexOf(user) % 4)).then(() => svc.admin('DELETE', `/admin/users/${user}`)),
        ]);
        expect([updated.status, erased.status]).to.deep.equal([200, 204]);
        const events = (await svc.admin('GET', `/admin/events?stream=user-${user}`)).body.data.events as { type: string; data: any }[];
        const last = events[events.length - 1]!;
        if (last.type === 'UserProfileUpdated') expect(last.data.changes.metadata, user).to.deep.equal({ email: `${user}-later@example.org` });
        else expect(last.type, user).to.equal('UserErased');
      }
    } finally {
      await svc.stop();
    }
  });

  it('migrate-events refuses a log holding encrypted values without its data-keys.db, creating nothing', async () => {
    const source = tempDataDir();
    const svc = await startTestService({ dataDir: source });
    await createUser(svc, 'sealed', { metadata: { email: 'sealed@example.org' } });
    await svc.stop();
    removeDatabase('data-keys.db', source);
    const target = path.join(tempDataDir(), 'copy');
    const refused = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/migrate-events.ts', '--from', source, '--to', target], {
      encoding: 'utf8',
    }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).to.deep.include({ code: 1 });
    expect((refused as { stderr: string }).stderr).to.contain('data-keys.db is missing');
    expect(fs.readdirSync(source).filter((name) => name.startsWith('data-keys.db'))).to.deep.equal([]);
    expect(fs.existsSync(target)).to.equal(false);
  });

  it('an outbox restored from a later backup than the log: the events the log appends next are still delivered', async () => {
    const receiver = await new Receiver().start();
    const dataDir = tempDataDir();
    const env = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
    try {
      let svc = await startTestService({ dataDir, env });
      expect((await svc.admin('PUT', '/admin/webhooks/backend', { url: receiver.url, events: ['user.created'] })).status).to.equal(201);
      await createUser(svc, 'before');
      await eventually(
        async () => receiver.requests.length,
        (count) => count >= 1,
      );
      await svc.stop();
      // webhooks.db as a backup taken after referrals.db would hold it: fed 50 events further than the log goes.
      const outbox = new Database(path.join(dataDir, 'webhooks.db'));
      outbox.prepare('UPDATE webhook_feeds SET position = position + 50').run();
      outbox.close();
      svc = await startTestService({ dataDir, env });
      try {
        await createUser(svc, 'after');
        const delivered = await eventually(
          async () => receiver.requests.map((request) => request.json?.data?.user?.app_user_id ?? request.json?.data?.app_user_id),
          (users) => users.includes('after'),
        );
        expect(delivered).to.include('after');
      } finally {
        await svc.stop();
      }
    } finally {
      await receiver.stop();
    }
  });
  it('npm run restore-backup after a crash: the WAL the crash left is removed, and the store is whole at the backup', async () => {
    const dataDir = tempDataDir();
    const backup = tempDataDir();
    const keys = tempDataDir();
    const before = ['kept-1', 'kept-2', 'kept-3'];
    const after = ['lost-1', 'lost-2', 'lost-3', 'lost-4'];
    let svc = await startChildService(dataDir);
    for (const user of before) expect((await post(svc.url, '/users', { app_user_id: user, metadata: { email: `${user}@example.org` } })).status).to.equal(201);
    backUp(dataDir, backup, keys);
    for (const user of after) expect((await post(svc.url, '/users', { app_user_id: user })).status).to.equal(201);
    await svc.kill();
    expect(fs.statSync(path.join(dataDir, 'referrals.db-wal')).size, 'the crash leaves a WAL').to.be.greaterThan(0);

    const restored = restoreBackup(dataDir, '--from', backup, '--keys', keys);
    expect(restored.status, restored.stderr).to.equal(0);
    expect(restored.stdout).to.contain('Restored webhooks.db, referrals.db, data-keys.db');
    expect(fs.existsSync(path.join(dataDir, 'referrals.db-wal'))).to.equal(false);
    expect(integrity(path.join(dataDir, 'referrals.db'))).to.equal('ok');
    expect(fs.statSync(path.join(dataDir, 'referrals.db')).mode & 0o777).to.equal(0o600);

    svc = await startChildService(dataDir);
    try {
      await expectUsers(svc.url, before, after);
      expect((await get(svc.url, '/users/kept-1')).body.data.user.metadata).to.deep.equal({ email: 'kept-1@example.org' });
      expect((await post(svc.url, '/users', { app_user_id: 'after-restore' })).status).to.equal(201);
    } finally {
      await svc.stop();
    }
    expect(integrity(path.join(dataDir, 'referrals.db'))).to.equal('ok');
  });

  it('npm run restore-backup refuses, changing nothing: a service running (75), no event log in the backup (66), a damaged copy (1)', async () => {
    const dataDir = tempDataDir();
    const backup = tempDataDir();
    const svc = await startChildService(dataDir);
    const log = path.join(dataDir, 'referrals.db');
    try {
      expect((await post(svc.url, '/users', { app_user_id: 'running' })).status).to.equal(201);
      backUp(dataDir, backup);
      const inode = fs.statSync(log).ino;
      const running = restoreBackup(dataDir, '--from', backup);
      expect(running.status, running.stderr).to.equal(75);
      expect(running.stderr).to.contain('a service is running on').and.to.contain('nothing was changed');
      expect(fs.statSync(log).ino).to.equal(inode);
    } finally {
      await svc.stop();
    }
    // An API-only process holds no projector lock, but has the files open.
    const apiOnly = await startChildService(dataDir, { RUN_PROJECTOR: 'false' });
    try {
      const running = restoreBackup(dataDir, '--from', backup);
      expect(running.status, running.stderr).to.equal(75);
      expect(running.stderr).to.contain('referrals.db');
    } finally {
      await apiOnly.stop();
    }
    const inode = fs.statSync(log).ino;
    const empty = tempDataDir();
    const missing = restoreBackup(dataDir, '--from', empty);
    expect(missing.status, missing.stderr).to.equal(66);
    expect(missing.stderr).to.contain(path.join(empty, 'referrals.db'));
    fs.writeFileSync(path.join(backup, 'data-keys.db'), 'not a database, but a file of that name');
    const damaged = restoreBackup(dataDir, '--from', backup);
    expect(damaged.status, damaged.stderr).to.equal(1);
    expect(damaged.stderr).to.contain(path.join(backup, 'data-keys.db'));
    expect(fs.statSync(log).ino, 'the event log, whose copy was fine, is not replaced either').to.equal(inode);
  });

  it('a backup moved over the log while the service runs: the stop removes the WAL of the replaced file, and the next start reads the backup whole', async () => {
    const dataDir = tempDataDir();
    const backup = tempDataDir();
    let svc = await startChildService(dataDir);
    for (const user of ['kept-a', 'kept-b']) expect((await post(svc.url, '/users', { app_user_id: user })).status).to.equal(201);
    backUp(dataDir, backup);
    for (const user of ['lost-a', 'lost-b', 'lost-c']) expect((await post(svc.url, '/users', { app_user_id: user })).status).to.equal(201);
    fs.renameSync(path.join(backup, 'referrals.db'), path.join(dataDir, 'referrals.db'));
    expect((await post(svc.url, '/users', { app_user_id: 'refused' })).status).to.equal(503);
    await svc.stop();
    expect(fs.existsSync(path.join(dataDir, 'referrals.db-wal')), 'the WAL of the file no name names').to.equal(false);
    expect(integrity(path.join(dataDir, 'referrals.db'))).to.equal('ok');
    svc = await startChildService(dataDir);
    try {
      await expectUsers(svc.url, ['kept-a', 'kept-b'], ['lost-a', 'lost-b', 'lost-c', 'refused']);
      expect((await post(svc.url, '/users', { app_user_id: 'after-restart' })).status).to.equal(201);
    } finally {
      await svc.stop();
    }
  });
});
