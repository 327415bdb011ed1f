import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { EXPORT_COLUMNS, type ExportedEvent } from '../../src/application/export/event-export-format.js';
import { fromCsvRecord, parseCsv } from '../support/csv-reader.js';
import { createUser, eventually, getUser, putProgram, putPromo, putReward, never } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';

const run = promisify(execFile);

/** Runs the export script as a child process on `dataDir`; stdout is the export when there is no --out. */
async function exportEvents(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', 'scripts/export-events.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
}

function ndjson(text: string): ExportedEvent[] {
  expect(text.endsWith('\n') || text === '').to.equal(true);
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as ExportedEvent);
}

/** Every event through GET /admin/events, page by page. */
async function adminEvents(svc: TestService): Promise<ExportedEvent[]> {
  const all: ExportedEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await svc.admin('GET', `/admin/events?limit=1000${after === null ? '' : `&after=${after}`}`);
    expect(response.status).to.equal(200);
    const page = response.body.data.events as ExportedEvent[];
    if (page.length === 0) return all;
    all.push(...page);
    after = response.body.data.next_after as string;
  }
}

const AWKWARD_USER = 'o\'neil, "jr"';
const AWKWARD_METADATA = { note: 'commas, "double quotes"\nand a new line', crlf: 'a\r\nb', emoji: '✓ Zoë', nested: { list: [1, null, true, 'x,y'] } };

describe('npm run export-events (child process)', function () {
  this.timeout(180_000);

  let dataDir: string;
  let reference: ExportedEvent[];
  let webhookSecret: string;
  let secondPhaseFrom: Date;
  let workDir: string;

  before(async () => {
    workDir = tempDir('referrals-export');
    const svc = await startTestService({ env: { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    dataDir = svc.dataDir;
    // A webhook endpoint (disabled: nothing is sent): its events carry the signing secret, which no reader of the log sees.
    const webhook = await svc.admin('PUT', '/admin/webhooks/feed', { url: 'http://127.0.0.1:9/', enabled: false });
    expect(webhook.status).to.equal(201);
    webhookSecret = webhook.body.data.webhook.secret;
    await putReward(svc, 'credits', { kind: 'credit', name: 'Credits, "the good kind"', credits: 10 });
    await putReward(svc, 'week', { kind: 'basic', name: 'Week' });
    await putProgram(svc, 'main', {
      rewards: {
        sender: [{ reward_key: 'credits', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }],
        receiver: [{ reward_key: 'week', activation: { variant: 'claim' }, deactivation: { variant: 'interval', duration: 7, period: 'days' } }],
      },
    });
    await putPromo(svc, 'HELLO', { rewards: [{ reward_key: 'credits', activation: { variant: 'claim' }, deactivation: never }] });
    const referrer = await createUser(svc, AWKWARD_USER, { metadata: AWKWARD_METADATA, is_premium: true });
    // Enough events for several pages of the export (1000 per page).
    for (let batch = 0; batch < 20; batch += 1) {
      await Promise.all(Array.from({ length: 20 }, (_, index) => createUser(svc, `user-${batch}-${index}`, { metadata: { batch, index } })));
    }
    expect((await svc.call('POST', `/users/user-0-0/claim-code`, { code: referrer.referral_code })).status).to.equal(200);
    expect((await svc.call('POST', `/users/user-0-1/claim-code`, { code: 'hello' })).status).to.equal(200);
    await eventually(async () => expect((await getUser(svc, AWKWARD_USER)).stats.claims).to.equal(1));

    // A second phase, recorded strictly later, for --since.
    const firstPhase = await adminEvents(svc);
    const lastRecorded = Date.parse(firstPhase[firstPhase.length - 1]!.recorded_at);
    while (Date.now() <= lastRecorded + 2) await new Promise((resolve) => setTimeout(resolve, 5));
    secondPhaseFrom = new Date();
    while (Date.now() <= secondPhaseFrom.getTime() + 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const withdrawal = await svc.call('POST', `/users/${encodeURIComponent(AWKWARD_USER)}/rewards/withdraw-credits`, {
      key: 'credits',
      amount: 3,
      operation_id: 'order, "1"',
    });
    expect(withdrawal.status).to.equal(200);
    await createUser(svc, 'late-comer', { metadata: { note: 'tab\there' } });
    reference = await adminEvents(svc);
    await svc.stop();
    expect(reference.length).to.be.greaterThan(1000);
    expect(reference.some((event) => Date.parse(event.recorded_at) < secondPhaseFrom.getTime())).to.equal(true);
    expect(reference.some((event) => Date.parse(event.recorded_at) >= secondPhaseFrom.getTime())).to.equal(true);
  });

  it('the reference (GET /admin/events) is exactly what the store holds (personal fields decrypted with its data keys)', async () => {
    const backend = openEmbeddedBackend(dataDir);
    try {
      const store = backend.eventStore;
      const stored = await store.readAll({ after: null, limit: 100_000 });
      // `sealed` (the stored envelopes of the decrypted values, for read models) is not part of the event.
      // The signing secret is the one value readers see redacted (SPEC §12).
      const asEvents = stored.map(({ sealed: _sealed, ...event }) => ({
        ...event,
        data: event.type === 'WebhookEndpointCreated' ? { ...event.data, secret: { redacted: true } } : event.data,
        position: event.position.toString(),
        recordedAt: event.recordedAt.toISOString(),
      }));
      expect(asEvents).to.deep.equal(
        reference.map(({ position, stream, revision, id, type, data, metadata, recorded_at }) => ({
          position,
          stream,
          revision,
          id,
          type,
          data,
          metadata,
          recordedAt: recorded_at,
        })),
      );
    } finally {
      await backend.close();
    }
  });

  it('NDJSON on stdout: every event, in order, equal to the log (ids, positions, revisions, types, data, metadata)', async () => {
    const { stdout, stderr } = await exportEvents(dataDir, []);
    const exported = ndjson(stdout);
    expect(exported).to.deep.equal(reference);
    expect(exported.map((event) => Object.keys(event))).to.deep.equal(reference.map(() => [...EXPORT_COLUMNS]));
    expect(typeof exported[0]!.position).to.equal('string');
    expect(stderr).to.contain(`Exported ${reference.length} events`);
    // The awkward bits survived as they were.
    const registered = exported.find((event) => event.type === 'UserRegistered' && event.stream === `user-${AWKWARD_USER}`)!;
    expect(registered.data.metadata).to.deep.equal(AWKWARD_METADATA);
    const withdrawn = exported.find((event) => event.type === 'CreditsWithdrawn')!;
    expect(withdrawn.metadata.operation_id).to.equal('order, "1"');
    expect(exported.find((event) => event.type === 'WebhookEndpointCreated')!.data.secret).to.deep.equal({ redacted: true });
    expect(stdout).to.not.contain(webhookSecret);
  });

  it('CSV to a file: RFC 4180 quoting of commas, quotes and new lines parses back to the same events', async () => {
    const out = path.join(workDir, 'events.csv');
    await exportEvents(dataDir, ['--format', 'csv', '--out', out]);
    const text = fs.readFileSync(out, 'utf8');
    const [header, ...records] = parseCsv(text);
    expect(header).to.deep.equal([...EXPORT_COLUMNS]);
    expect(records.map(fromCsvRecord)).to.deep.equal(reference);
    // The stream name with a comma and quotes is quoted, its quotes doubled.
    expect(text).to.contain(`"user-o'neil, ""jr"""`);
    // Records end with CRLF; the data's own new lines are JSON-escaped, not raw.
    expect(text.split('\r\n').length - 1).to.equal(reference.length + 1);
  });

  it('a file is written beside its name and renamed once whole, readable by its owner alone (0600, whatever the umask)', async () => {
    const out = path.join(workDir, 'private.ndjson');
    fs.writeFileSync(out, 'an earlier export\n', { mode: 0o644 });
    fs.chmodSync(out, 0o644);
    await exportEvents(dataDir, ['--out', out]);
    expect(fs.statSync(out).mode & 0o777).to.equal(0o600);
    expect(ndjson(fs.readFileSync(out, 'utf8'))).to.deep.equal(reference);
    expect(fs.readdirSync(workDir).filter((name) => name.includes('.partial-'))).to.deep.equal([]);
  });

  it('--after: only events after the position', async () => {
    const middle = reference[Math.floor(reference.length / 2)]!.position;
    const { stdout } = await exportEvents(dataDir, ['--after', middle]);
    expect(ndjson(stdout)).to.deep.equal(reference.filter((event) => BigInt(event.position) > BigInt(middle)));
  });

  it('--stream-prefix and --type (also a list), alone and together with --after', async () => {
    const byPrefix = ndjson((await exportEvents(dataDir, ['--stream-prefix', 'code-'])).stdout);
    expect(byPrefix).to.deep.equal(reference.filter((event) => event.stream.startsWith('code-')));
    expect(byPrefix.length).to.be.greaterThan(400);

    const byType = ndjson((await exportEvents(dataDir, ['--type', 'RewardGranted'])).stdout);
    expect(byType).to.deep.equal(reference.filter((event) => event.type === 'RewardGranted'));
    expect(byType.length).to.be.greaterThan(1);

    const after = reference[10]!.position;
    const combined = ndjson((await exportEvents(dataDir, ['--stream-prefix', 'user-', '--type', 'CodeClaimed,CreditsWithdrawn', '--after', after])).stdout);
    expect(combined).to.deep.equal(
      reference.filter(
        (event) => BigInt(event.position) > BigInt(after) && event.stream.startsWith('user-') && ['CodeClaimed', 'CreditsWithdrawn'].includes(event.type),
      ),
    );
    expect(combined.map((event) => event.type).sort()).to.deep.equal(['CodeClaimed', 'CodeClaimed', 'CreditsWithdrawn']);
  });

  it('a filtered export names the end of the log it read, not the last event it matched, to continue from', async () => {
    const { stderr } = await exportEvents(dataDir, ['--type', 'UserRegistered']);
    const head = reference[reference.length - 1]!.position;
    expect(reference.filter((event) => event.type === 'UserRegistered').at(-1)!.position).to.not.equal(head);
    expect(stderr).to.contain(`last position read ${head} (continue later with --after ${head})`);
  });

  it('--since: only events recorded at or after the instant', async () => {
    const { stdout } = await exportEvents(dataDir, ['--since', secondPhaseFrom.toISOString()]);
    const exported = ndjson(stdout);
    expect(exported).to.deep.equal(reference.filter((event) => Date.parse(event.recorded_at) >= secondPhaseFrom.getTime()));
    expect(exported.map((event) => event.type)).to.include.members(['CreditsWithdrawn', 'UserRegistered']);
    expect(exported.length).to.be.lessThan(10);

    const csv = path.join(workDir, 'since.csv');
    await exportEvents(dataDir, ['--since', secondPhaseFrom.toISOString(), '--type', 'UserRegistered', '--out', csv]);
    const [, ...records] = parseCsv(fs.readFileSync(csv, 'utf8'));
    expect(records.map(fromCsvRecord).map((event) => event.stream)).to.deep.equal(['user-late-comer']);
  });

  it('--since without an offset is UTC, whatever the time zone of the machine running the export', async () => {
    const withoutOffset = secondPhaseFrom.toISOString().replace(/Z$/, '');
    const { stdout } = await exportEvents(dataDir, ['--since', withoutOffset], { TZ: 'America/New_York' });
    const exported = ndjson(stdout);
    expect(exported.length).to.be.greaterThan(0);
    expect(exported).to.deep.equal(reference.filter((event) => Date.parse(event.recorded_at) >= secondPhaseFrom.getTime()));
  });

  it('a reader that closes the pipe early (`| head`) ends the export with exit 0 and no error', async () => {
    // A log far larger than a pipe's buffer: the export is still writing when the reader goes.
    const bigDir = tempDir('referrals-export-epipe');
    const backend = openEmbeddedBackend(bigDir);
    const metadata = { correlation_id: 'test', causation_id: 'test', actor: 'test', schema_version: 1 };
    for (let page = 0; page < 10; page += 1) {
      const deleted = Array.from({ length: 1_000 }, (_, index) => ({
        id: randomUUID(),
        type: 'WebhookEndpointDeleted',
        data: { id: `endpoint-${page}-${index}`, deleted_at: new Date().toISOString() },
        metadata,
      }));
      await backend.eventStore.append(`webhook-epipe-${page}`, deleted, 'no_stream');
    }
    await backend.close();
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/export-events.ts'], {
      env: { ...process.env, DATA_DIR: bigDir, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // As `head -n 1` does: read the first line, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).to.equal(0);
    expect(stderr).to.not.contain('export-events:');
  });

  it('a bad flag value is a usage error (exit 2) that writes nothing', async () => {
    const failure = await exportEvents(dataDir, ['--format', 'xml']).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).to.equal(2);
    expect(failure?.stdout).to.equal('');
    expect(failure?.stderr).to.contain('--format must be ndjson or csv');
  });

  it('--after at or past the end of the log says so and exports nothing', async () => {
    const head = ndjson((await exportEvents(dataDir, [])).stdout).at(-1)!.position;
    const atEnd = await exportEvents(dataDir, ['--after', head]);
    expect(atEnd.stdout).to.equal('');
    expect(atEnd.stderr).to.contain(`--after ${head} is the end of the log`);
    const past = await exportEvents(dataDir, ['--after', String(BigInt(head) + 1000n)]);
    expect(past.stdout).to.equal('');
    expect(past.stderr).to.contain('is past the end of the log').and.to.contain(`the last position is ${head}`);
  });

  it('--after at the end of the log with --out replaces an earlier export in that file by the empty one', async () => {
    const head = ndjson((await exportEvents(dataDir, [])).stdout).at(-1)!.position;
    const ndjsonFile = path.join(workDir, 'earlier.ndjson');
    const csvFile = path.join(workDir, 'earlier.csv');
    fs.writeFileSync(ndjsonFile, '{"an":"earlier export"}\n');
    fs.writeFileSync(csvFile, 'an,earlier\r\nexport,here\r\n');
    await exportEvents(dataDir, ['--after', head, '--out', ndjsonFile]);
    await exportEvents(dataDir, ['--after', String(BigInt(head) + 1000n), '--out', csvFile]);
    expect(fs.readFileSync(ndjsonFile, 'utf8')).to.equal('');
    expect(parseCsv(fs.readFileSync(csvFile, 'utf8'))).to.deep.equal([[...EXPORT_COLUMNS]]);
  });
});
