import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { get, post, startChildService } from '../support/child-service.js';
import { eventually } from '../support/fixtures.js';
import { CLIENT_KEY, tempDataDir } from '../support/test-service.js';

const MAIN = ['--import', 'tsx', 'src/main.ts'];

function runMain(env: Record<string, string>) {
  const { CLIENT_API_KEYS: _client, SECRET_API_KEYS: _secret, ...inherited } = process.env;
  return spawnSync(process.execPath, MAIN, { env: { ...inherited, PORT: '0', HOST: '127.0.0.1', ...env }, encoding: 'utf8', timeout: 30_000 });
}

describe('E2E: start-up configuration and graceful shutdown', function () {
  this.timeout(120_000);

  it('refuses to start on an invalid setting, naming the variable', () => {
    for (const [variable, value] of [
      ['PORT', 'eighty'],
      ['CLAIM_WINDOW_DAYS', '-3'],
      ['REFERRAL_LINK_BASE', 'not a url'],
      ['EVENTSTORE_URL', 'http://wrong'],
      ['LOG_LEVEL', 'loud'],
    ] as const) {
      const result = runMain({ DATA_DIR: tempDataDir(), [variable]: value });
      expect(result.status, `${variable}=${value}`).to.equal(78);
      expect(result.stderr).to.contain(variable);
    }
  });

  it('refuses to start in production without keys', () => {
    const result = runMain({ DATA_DIR: tempDataDir(), NODE_ENV: 'production' });
    expect(result.status).to.equal(78);
    expect(result.stderr).to.match(/CLIENT_API_KEYS|SECRET_API_KEYS/);
  });

  it('outside production, generates one client and one secret key, keeps them, prints them once on stderr and names their file at every start', async () => {
    const dataDir = tempDataDir();
    const { CLIENT_API_KEYS: _client, SECRET_API_KEYS: _secret, ...inherited } = process.env;
    const start = () =>
      new Promise<{ output: string; errors: string; url: string; stop: () => Promise<void> }>((resolve, reject) => {
        const child = spawn(process.execPath, MAIN, { env: { ...inherited, NODE_ENV: 'development', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' } });
        let output = '';
        let errors = '';
        child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
          if (match) {
            resolve({
              output,
              errors,
              url: match[1]!,
              stop: () =>
                new Promise((done) => {
                  child.once('exit', () => done());
                  child.kill('SIGTERM');
                }),
            });
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
      });
    const first = await start();
    await first.stop();
    const keys = JSON.parse(fs.readFileSync(path.join(dataDir, 'api-keys.json'), 'utf8')) as { client: string; secret: string };
    // On stderr, framed, away from the JSON log lines on stdout.
    expect(first.output).to.not.contain(keys.secret);
    expect(first.errors)
      .to.contain(keys.client)
      .and.to.contain(keys.secret)
      .and.to.match(/^\+-+\+$/m);
    expect(first.errors).to.contain(path.join(dataDir, 'api-keys.json'));
    const second = await start();
    try {
      expect(second.output + second.errors).to.not.contain(keys.secret);
      expect(second.errors).to.contain(`Using the development API keys kept in ${path.join(dataDir, 'api-keys.json')}`);
      const response = await fetch(`${second.url}/users/nobody`, { headers: { 'x-api-key': keys.client } });
      expect(response.status).to.equal(404);
      const admin = await fetch(`${second.url}/admin/rewards`, { headers: { 'x-api-key': keys.secret } });
      expect(admin.status).to.equal(200);
    } finally {
      await second.stop();
    }
  });

  it('a log with encrypted personal data and no data-keys.db beside it is refused, at start and by the scripts, creating nothing', async () => {
    const dataDir = tempDataDir();
    const first = await startChildService(dataDir);
    expect((await post(first.url, '/users', { app_user_id: 'keyed', metadata: { email: 'k@example.com' } })).status).to.equal(201);
    await first.stop();
    // A copy of referrals.db restored without its key store.
    for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith('data-keys.db'))) fs.rmSync(path.join(dataDir, file));
    const started = runMain({ DATA_DIR: dataDir, CLIENT_API_KEYS: 'ck', SECRET_API_KEYS: 'sk' });
    expect(started.status).to.equal(1);
    expect(started.stderr).to.contain('data-keys.db is missing').and.contain('Nothing was created');
    const { CLIENT_API_KEYS: _client, SECRET_API_KEYS: _secret, ...inherited } = process.env;
    const audit = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-credits.ts'], {
      env: { ...inherited, DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(audit.status).to.not.equal(0);
    expect(audit.stderr).to.contain('data-keys.db is missing');
    expect(fs.readdirSync(dataDir).filter((name) => name.startsWith('data-keys.db'))).to.deep.equal([]);
  });

  it('data keys without their log (referrals.db deleted or not restored) are refused at start, creating nothing: the service would start empty', async () => {
    const dataDir = tempDataDir();
    const first = await startChildService(dataDir);
    expect((await post(first.url, '/users', { app_user_id: 'kept', metadata: { email: 'k@example.com' } })).status).to.equal(201);
    await first.stop();
    for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith('referrals.db'))) fs.rmSync(path.join(dataDir, file));
    const started = runMain({ DATA_DIR: dataDir, CLIENT_API_KEYS: 'ck', SECRET_API_KEYS: 'sk' });
    expect(started.status).to.equal(1);
    expect(started.stderr).to.contain('referrals.db is missing').and.contain('holds 1 data key').and.contain('Nothing was created');
    expect(fs.readdirSync(dataDir).filter((name) => name.startsWith('referrals.db'))).to.deep.equal([]);
  });

  it('a database file removed while the service runs: no write is acknowledged from then on (503 naming the file), and /readyz says so', async () => {
    const dataDir = tempDataDir();
    const service = await startChildService(dataDir);
    try {
      expect((await post(service.url, '/users', { app_user_id: 'before' })).status).to.equal(201);
      for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith('referrals.db'))) fs.rmSync(path.join(dataDir, file));
      const after = await post(service.url, '/users', { app_user_id: 'after' });
      // The app gets the usual 503 (no server path in an answer to a client); the log and /readyz name the file.
      expect(after.status).to.equal(503);
      expect(after.body.errors[0].code).to.equal('SERVICE_UNAVAILABLE');
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).to.equal(503);
      expect(await ready.text()).to.contain('removed or replaced');
      // Monitoring still answers: it is how an operator sees the trouble.
      expect((await fetch(`${service.url}/metrics`)).status).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  it('a data-key file removed while the service runs: a new user with personal data is refused (503), not given a key that would be lost; every later write too, and /readyz says so', async () => {
    const dataDir = tempDataDir();
    const service = await startChildService(dataDir);
    try {
      expect((await post(service.url, '/users', { app_user_id: 'before', metadata: { a: 1 } })).status).to.equal(201);
      for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith('data-keys.db'))) fs.rmSync(path.join(dataDir, file));
      const after = await post(service.url, '/users', { app_user_id: 'after', metadata: { a: 2 } });
      expect(after.status).to.equal(503);
      expect(after.body.errors[0].code).to.equal('SERVICE_UNAVAILABLE');
      // Not acknowledged now, nor later: the key store keeps refusing until a restart.
      expect((await post(service.url, '/users', { app_user_id: 'later', metadata: { a: 3 } })).status).to.equal(503);
      expect((await post(service.url, '/users', { app_user_id: 'plain' })).status, 'a write with no personal data').to.equal(503);
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).to.equal(503);
      expect(await ready.text())
        .to.contain('data-keys.db')
        .and.to.contain('removed or replaced');
    } finally {
      await service.stop();
    }
  });

  it('SIGTERM finishes in-flight requests, stops cleanly (exit 0) and every acknowledged write is kept', async () => {
    const dataDir = tempDataDir();
    const service = await startChildService(dataDir);
    const exit = new Promise<number | null>((resolve) => service.process.once('exit', (code) => resolve(code)));
    const inFlight = Array.from({ length: 60 }, (_, index) =>
      post(service.url, '/users', { app_user_id: `drain-${index}` }).then(
        (response) => ({ index, status: response.status }),
        () => ({ index, status: 0 }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    service.process.kill('SIGTERM');
    const results = await Promise.all(inFlight);
    expect(await exit).to.equal(0);
    const acknowledged = results.filter((result) => result.status === 201);
    expect(results.every((result) => result.status === 201 || result.status === 0)).to.equal(true);
    expect(acknowledged.length).to.be.greaterThan(0);
    const restarted = await startChildService(dataDir);
    try {
      for (const { index } of acknowledged) expect((await get(restarted.url, `/users/drain-${index}`)).status).to.equal(200);
    } finally {
      await restarted.stop();
    }
  });

  it('SIGTERM under keep-alive load: answers after the signal close their connections, so the stop ends cleanly (exit 0) instead of at the deadline', async () => {
    const service = await startChildService(tempDataDir());
    const exit = new Promise<number | null>((resolve) => service.process.once('exit', (code) => resolve(code)));
    // One request the service is reading when the signal comes: its head sent (the service invites
    // the body: 100 Continue), its body held back until the service says it is shutting down.
    const held = net.connect(Number(new URL(service.url).port), '127.0.0.1');
    let heldAnswer = '';
    held.on('data', (chunk: Buffer) => (heldAnswer += chunk.toString('latin1')));
    const heldClosed = new Promise<void>((resolve) => held.once('close', () => resolve()));
    const body = JSON.stringify({ app_user_id: 'held-through-shutdown' });
    held.write(
      `POST /users HTTP/1.1\r\nhost: x\r\nx-api-key: ${CLIENT_KEY}\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    await eventually(async () => expect(heldAnswer).to.match(/^HTTP\/1\.1 100 Continue\r\n/));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const ask = () =>
      new Promise<{ status: number }>((resolve, reject) => {
        const request = http.get(`${service.url}/users/nobody`, { agent, headers: { 'x-api-key': CLIENT_KEY } }, (response) => {
          response.resume();
          response.once('end', () => resolve({ status: response.statusCode! }));
        });
        request.once('error', reject);
      });
    let signalled = false;
    let answered = 0;
    const statuses = new Set<number>();
    // Eight clients, each sending its next request as soon as the last is answered, until the
    // service stops taking them (before, the connections stayed open for 10 s: exit 1).
    const client = async () => {
      for (;;) {
        const answer = await ask().catch(() => null);
        if (answer === null) {
          if (signalled) return;
          throw new Error('a request failed before the signal');
        }
        answered += 1;
        statuses.add(answer.status);
        if (answered === 400 && !signalled) {
          signalled = true;
          service.process.kill('SIGTERM');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    agent.destroy();
    expect(signalled).to.equal(true);
    expect([...statuses]).to.deep.equal([404]);
    // The held request is answered, and its answer closes its connection.
    await eventually(async () => expect(service.logs()).to.contain('"msg":"shutting down"'));
    held.write(body);
    await heldClosed;
    expect(heldAnswer).to.match(/\r\nHTTP\/1\.1 201 Created\r\n/);
    expect(heldAnswer).to.match(/\r\nconnection: close\r\n/i);
    expect(await exit).to.equal(0);
  });
});
