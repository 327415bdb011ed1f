import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { get, startChildService } from '../support/child-service.js';
import { tempDataDir } from '../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs a module body in a child, reading its stdout as it comes; returns its lines and exit code. */
function runLogging(body: string): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) =>
      resolve({
        code,
        lines: stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      }),
    ),
  );
}

describe('E2E: a stdout nobody reads (a supervisor or harness that keeps the pipe and stops reading it)', function () {
  this.timeout(120_000);

  it('does not stop the service: it answers thousands of requests and still stops on SIGTERM with exit 0', async () => {
    const service = await startChildService(tempDataDir());
    // From here on the pipe is not read: the requests' log lines fill it and every buffer behind it.
    service.process.stdout!.removeAllListeners('data');
    service.process.stdout!.pause();
    const statuses = new Map<number, number>();
    for (let start = 0; start < 4000; start += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => get(service.url, `/users/not-there-${start + index}`)));
      for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).to.deep.equal({ 404: 4000 });
    await service.stop();
    expect({ code: service.process.exitCode, signal: service.process.signalCode }).to.deep.equal({ code: 0, signal: null });
  });

  it('a burst larger than its bound of unwritten lines: keeps the first ones in order, drops the rest and says how many once writing resumes', async () => {
    const { code, lines } = await runLogging(`
      import { createLogger } from './src/observability/logger.ts';
      const logger = createLogger('info');
      const padding = 'x'.repeat(200);
      for (let n = 0; n < 60000; n += 1) logger.info({ n, padding }, 'line');
    `);
    expect(code).to.equal(0);
    const kept = lines.filter((line) => line.msg === 'line').map((line) => line.n as number);
    const warnings = lines.filter((line) => line.level === 40);
    // Every line past the bound (8 MiB unwritten) was dropped; the first ones were kept, in order.
    expect(kept.length).to.be.within(20000, 59999);
    expect(kept).to.deep.equal(Array.from({ length: kept.length }, (_, n) => n));
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ dropped: 60000 - kept.length, msg: `${60000 - kept.length} log lines dropped: stdout was not read` });
  });
});
