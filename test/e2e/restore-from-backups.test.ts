import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'chai';
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
});
