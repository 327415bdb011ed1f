import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { CLIENT_KEY, SECRET_KEY, tempDataDir } from '../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

function serviceEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: tempDataDir(),
    CLIENT_API_KEYS: CLIENT_KEY,
    SECRET_API_KEYS: SECRET_KEY,
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Collects a child's stdout until the "service started" log line; returns its url and pid. */
function started(child: ChildProcess, output: { text: string }): Promise<{ url: string; pid: number }> {
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output.text += chunk.toString();
      const line = output.text.split('\n').find((candidate) => candidate.includes('"service started'));
      if (line) {
        const entry = JSON.parse(line) as { url: string; pid: number; msg: string };
        resolve({ url: entry.url, pid: entry.pid });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before starting:\n${output.text}`)));
  });
}

async function refused(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  );
}

describe('E2E: npm start, signals, the shutdown deadline and start failures', function () {
  this.timeout(180_000);

  it('kill -TERM on the PID that `npm start` prints stops the server, and npm exits 0', async () => {
    const child = spawn('npm', ['start'], { cwd: ROOT, env: serviceEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { text: '' };
    child.stderr!.on('data', (chunk: Buffer) => (output.text += chunk.toString()));
    const { url, pid } = await started(child, output);
    expect(output.text).to.contain(`kill -TERM ${pid}`);
    expect((await fetch(`${url}/healthz`)).status).to.equal(200);
    process.kill(pid, 'SIGTERM');
    expect(await exitOf(child)).to.deep.equal({ code: 0, signal: null });
    expect(output.text).to.contain('service stopped');
    expect(await refused(url)).to.equal(true);
  });

  it('LOG_LEVEL above info still says on stderr where the service listens and which pid stops it (newcomer probe: warn hid it)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: serviceEnv({ LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        output.stderr += chunk.toString();
        const found = output.stderr.split('\n').find((candidate) => candidate.startsWith('service started on '));
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} before starting:\n${output.stderr}`)));
    });
    expect(line).to.match(new RegExp(`^service started on http://127\\.0\\.0\\.1:\\d+ \\(pid ${child.pid}; stop with Ctrl-C or kill -TERM ${child.pid}\\)$`));
    process.kill(child.pid!, 'SIGTERM');
    expect(await exitOf(child)).to.deep.equal({ code: 0, signal: null });
    expect(output.stdout).to.equal('');
  });

  it("kill -TERM on npm's own PID reaches the server too (nothing is left running)", async () => {
    const child = spawn('npm', ['start'], { cwd: ROOT, env: serviceEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { text: '' };
    const { url, pid } = await started(child, output);
    child.kill('SIGTERM');
    await exitOf(child);
    await new Promise<void>((resolve) => {
      const check = () => {
        try {
          process.kill(pid, 0);
          setTimeout(check, 100);
        } catch {
          resolve();
        }
      };
      check();
    });
    expect(await refused(url)).to.equal(true);
  });

  it('a stuck request cannot hold the shutdown past SHUTDOWN_TIMEOUT_S: it exits 1, naming what was still open', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: serviceEnv({ SHUTDOWN_TIMEOUT_S: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { text: '' };
    const { url } = await started(child, output);
    // A client that announces a body and never sends all of it.
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /users HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${CLIENT_KEY}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"app_user_id":`,
    );
    socket.on('error', () => {});
    // Another request answered means the server has read the stuck one's headers.
    expect((await fetch(`${url}/healthz`)).status).to.equal(200);
    child.kill('SIGTERM');
    const exit = await exitOf(child);
    socket.destroy();
    expect(exit).to.deep.equal({ code: 1, signal: null });
    expect(output.text).to.contain('shutdown did not finish within SHUTDOWN_TIMEOUT_S=1 s');
    expect(output.text).to.match(/"still_open":\["1 HTTP request\(s\) in flight: POST \/users/);
  });

  it('a port already in use is one clear line on stderr (no stack), exit 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: serviceEnv({ PORT: String(port) }),
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).to.equal(1);
      expect(result.stderr.trim().split('\n')).to.deep.equal([
        `Failed to start: port ${port} on 127.0.0.1 is already in use (EADDRINUSE). Stop the other process or set PORT to a free port (PORT=0 picks one).`,
      ]);
    } finally {
      blocker.close();
    }
  });

  it('a data directory, host or key file it cannot use names its setting, at once (exit 1; a key file that cannot be read is a configuration error, 78)', () => {
    const file = path.join(tempDataDir(), 'a-file');
    fs.writeFileSync(file, '');
    const start = (extra: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: serviceEnv(extra), encoding: 'utf8', timeout: 60_000 });
    for (const [extra, status, line] of [
      [{ DATA_DIR: file }, 1, /^Failed to start: cannot use the data directory .*ENOTDIR.*Check DATA_DIR/],
      [{ DATA_DIR: path.join(file, 'below') }, 1, /^Failed to start: cannot use the data directory .*Check DATA_DIR/],
      // Node's recursive mkdir spins forever under /proc; this fails at once.
      [{ DATA_DIR: '/proc/no-such-dir/data' }, 1, /^Failed to start: cannot use the data directory \/proc\/no-such-dir\/data.*Check DATA_DIR/],
      [{ HOST: 'no-such-host.invalid' }, 1, /^Failed to start: HOST=no-such-host\.invalid is not an address this machine can listen on/],
      [
        { ASC_ISSUER_ID: 'x', ASC_KEY_ID: 'y', ASC_PRIVATE_KEY_PATH: '/no/such/key.p8' },
        78,
        /^ {2}- ASC_PRIVATE_KEY_PATH: cannot read \/no\/such\/key\.p8 \(ENOENT\)$/m,
      ],
    ] as const) {
      const result = start(extra);
      expect(result.status, JSON.stringify(extra)).to.equal(status);
      expect(result.stderr, JSON.stringify(extra)).to.match(line);
    }
  });

  it('--help prints the roles and where settings come from (exit 0), starting nothing', () => {
    const env = serviceEnv();
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', '--help'], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).to.equal(0);
    expect(result.stdout)
      .to.match(/^Usage: node dist\/src\/main.js \[all\|api\|projector\]/)
      .and.to.contain('SHUTDOWN_TIMEOUT_S');
    expect(fs.readdirSync(env.DATA_DIR!)).to.deep.equal([]);
  });

  it('the npm commands run node directly (exec) and read .env when present', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.prestart).to.equal('npm run build');
    expect(scripts.start).to.equal('exec node --env-file-if-exists=.env dist/src/main.js');
    expect(scripts.projector).to.equal('exec node --env-file-if-exists=.env dist/src/main.js projector');
    for (const name of ['audit-credits', 'replay', 'export-events', 'migrate-events', 'demo']) {
      // replay also caps node's heap (flat memory on long logs).
      expect(scripts[name], name).to.match(/^node --env-file-if-exists=\.env( --max-[a-z-]+-size=\d+)* --import tsx scripts\/[a-z-]+\.ts$/);
    }
    // One node process reads .env, so its "not found" notice (if any) comes once, not once per process.
    const help = spawnSync('npm', ['run', '-s', 'export-events', '--', '--help'], { cwd: ROOT, env: serviceEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(help.status, help.stderr).to.equal(0);
    expect(help.stderr.split('.env not found').length - 1).to.be.at.most(1);
    // `npm run audit` (the issues' name) is the same script; plain `npm audit` stays npm's own command.
    expect(scripts.audit).to.equal('npm run -s audit-credits --');
  });

  it('an unknown role is a usage error (exit 2), one line', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
      cwd: ROOT,
      env: serviceEnv(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).to.equal(2);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    expect(result.stderr).to.contain('all|api|projector');
  });
});
