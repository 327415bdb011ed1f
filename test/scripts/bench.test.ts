import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { EventLog } from '../../src/application/event-log.js';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { streams } from '../../src/domain/events/index.js';
import { StoreCounter } from '../../scripts/bench/counting-stores.js';
import { countInstructions, instructionsIn } from '../../scripts/bench/instruction-counter.js';
import { load } from '../../scripts/bench/load.js';
import { parseBenchOptions, SECTIONS } from '../../scripts/bench/options.js';
import { UsageError } from '../../scripts/cli/command-line.js';
import type { BenchReport } from '../../scripts/bench/report.js';
import { tempDataDir } from '../support/test-service.js';

const run = promisify(execFile);

function bench(args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', ...args], { maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

describe('npm run bench', function () {
  this.timeout(240_000);

  describe('options', () => {
    it('defaults to every section and the sizes of issue #10', () => {
      const options = parseBenchOptions([])!;
      expect([...options.only]).to.deep.equal([...SECTIONS]);
      expect(options).to.include({ duration: 5, connections: 32, history: 100_000, events: 200_000, json: false });
    });

    it('takes a subset and sizes', () => {
      const options = parseBenchOptions(['--only', 'claims,replay', '--history', '5000', '--duration', '2.5', '--json'])!;
      expect([...options.only]).to.deep.equal(['claims', 'replay']);
      expect(options).to.include({ history: 5000, duration: 2.5, json: true });
    });

    it('--help is not an error', () => {
      expect(parseBenchOptions(['--help'])).to.equal(null);
    });

    for (const args of [['--bogus'], ['--only', 'everything'], ['--history', '-1'], ['--connections', '1.5'], ['positional']]) {
      it(`refuses ${args.join(' ')}`, () => {
        expect(() => parseBenchOptions(args)).to.throw(UsageError);
      });
    }
  });

  it('--help prints the usage with examples and exits 0', async () => {
    const { code, stdout } = await bench(['--help']);
    expect(code).to.equal(0);
    expect(stdout).to.contain('Usage: npm run bench').and.to.contain('Examples:').and.to.contain('--only');
  });

  it('an unknown flag exits 2 with the usage on stderr', async () => {
    const { code, stdout, stderr } = await bench(['--frobnicate']);
    expect(code).to.equal(2);
    expect(stdout).to.equal('');
    expect(stderr).to.contain("Unknown option '--frobnicate'").and.to.contain('Usage: npm run bench --');
  });

  it('runs a small history section end to end and reports it as JSON', async () => {
    const { code, stdout, stderr } = await bench([
      '--only',
      'history',
      '--history',
      '300',
      '--cost-commands',
      '5',
      '--duration',
      '1',
      '--connections',
      '4',
      '--max-requests',
      '100',
      '--json',
    ]);
    expect(code, stderr).to.equal(0);
    const report = JSON.parse(stdout) as BenchReport;
    expect(report.version).to.equal(1);
    expect(report.figures.map((figure) => figure.key)).to.deep.equal(['history.catch_up', 'history.claims', 'history.withdrawals']);
    expect(report.figures[0]!.value).to.be.a('number');
    for (const figure of report.figures.slice(1)) expect(figure.load!.ok, figure.key).to.be.greaterThan(0);
    expect(report.cost.map((cost) => cost.commands)).to.deep.equal([
      { fresh: 5, veteran: 5 },
      { fresh: 5, veteran: 5 },
    ]);
    for (const cost of report.cost) {
      expect(cost.fresh.rows_written, cost.what).to.be.greaterThan(0);
      expect(cost.veteran.rows_read, cost.what).to.be.greaterThan(0);
      expect(cost.ratio.rows_written, cost.what).to.be.a('number');
      expect(cost.by_store.event_store.fresh.rows_written + cost.by_store.read_store.fresh.rows_written, cost.what).to.be.closeTo(cost.fresh.rows_written, 0.2);
    }
  });
});

describe('bench: load runs', () => {
  // The instrument, not the service: autocannon used to notice a finished run only at its next
  // whole-second tick, so every rate bounded by --max-requests came out as max / N seconds.
  it('a run that has sent all its requests ends then, not at the next whole second', async () => {
    const server = http.createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const measured = await load({
        url: `http://127.0.0.1:${port}`,
        connections: 2,
        duration: 30,
        maxRequests: 50,
        request: () => ({ method: 'GET', path: '/' }),
      });
      expect(measured).to.include({ requests: 50, ok: 50, errors: 0 });
      expect(measured.seconds, 'a 50-request run took a whole tick').to.be.below(0.9);
      expect(measured.req_per_s).to.be.above(50);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('bench: counting stores', () => {
  it('counts rows and bytes the application reads and writes, and not reads that find nothing', async () => {
    const dataDir = tempDataDir();
    const counter = new StoreCounter();
    const backend = counter.wrap(openEmbeddedBackend(dataDir));
    try {
      const log = new EventLog(backend.eventStore, new RandomIds());
      const context = { correlation_id: 'c', causation_id: 'c', actor: 'process:test' };
      counter.start();
      await log.append(streams.code('ABC'), [{ type: 'CodeReserved', data: { code: 'ABC', type: 'referral', owner_id: 'u' } }], 'no_stream', context);
      const written = { ...counter.counts };
      expect(written).to.include({ calls: 1, rows_written: 1, rows_read: 0, bytes_read: 0 });
      expect(written.bytes_written).to.be.greaterThan(40);

      await backend.eventStore.readStream(streams.code('ABC'));
      await backend.eventStore.readStream(streams.code('NONE'));
      await backend.readStore.get('users', 'nobody');
      const { total, event_store: events, read_store: readModels } = counter.stop();
      expect(total).to.include({ calls: 2, rows_read: 1, rows_written: 1 });
      expect(total.bytes_read).to.be.greaterThan(40);
      expect(events).to.deep.equal(total);
      expect(readModels).to.deep.equal({ calls: 0, rows_read: 0, bytes_read: 0, rows_written: 0, bytes_written: 0 });

      await backend.eventStore.readStream(streams.code('ABC'));
      expect(counter.counts.rows_read, 'stopped').to.equal(1);
    } finally {
      await backend.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('bench instruction counts (perf stat)', () => {
  it('reads the count from perf stat -x output, and nothing from a count perf could not make', () => {
    expect(instructionsIn('1234567,,instructions,100.00,\n')).to.equal(1234567);
    expect(instructionsIn('1234567,,instructions:u,1000,100.00,,\n')).to.equal(1234567);
    expect(instructionsIn('<not counted>,,instructions,0,0.00,,\n')).to.equal(null);
    expect(instructionsIn('<not supported>,,instructions,0,100.00,,\n')).to.equal(null);
    expect(instructionsIn('Error:\nNo permission to enable instructions event.\n')).to.equal(null);
  });

  it('without a process there is nothing to count', async () => {
    expect(await (await countInstructions(undefined)).stop()).to.equal(null);
  });

  it('counts a running process: twice the work is about twice the instructions', async function () {
    this.timeout(30_000);
    const measure = async (iterations: number) => {
      // Waits for a line on stdin, spins, then says so: perf is attached around the spin alone.
      const child = spawn(process.execPath, [
        '-e',
        `process.stdin.once('data', () => { let s = 0; for (let i = 0; i < ${iterations}; i++) s += i % 7; console.log(s); });`,
      ]);
      const counting = await countInstructions(child.pid);
      const done = new Promise((resolve) => child.stdout.once('data', resolve));
      child.stdin.write('go\n');
      await done;
      const counted = await counting.stop();
      child.kill();
      return counted;
    };
    const once = await measure(20_000_000);
    if (once === null) {
      console.warn('      (perf cannot count here: the bench reports instruction counts as not counted)');
      this.skip();
    }
    const twice = (await measure(40_000_000))!;
    expect(twice / once!).to.be.within(1.5, 2.5);
  });
});
