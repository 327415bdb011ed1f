import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { tempDataDir } from '../../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const APPENDS = 2_000;

/**
 * In a process of its own: `APPENDS` appends to the DATA_DIR in argv, eight at a time (as
 * concurrent requests would), each a stream of its own, started once the other writer is ready
 * too (so they overlap); prints how many were acknowledged and the first failure.
 */
const WRITER = `
import fs from 'node:fs';
import { openSqlite } from './src/adapters/sqlite/sqlite-database.ts';
import { SqliteEventStore } from './src/adapters/sqlite/sqlite-event-store.ts';
const [dir, name] = process.argv.slice(-2);
const db = openSqlite(dir);
const store = new SqliteEventStore(db);
fs.writeFileSync(dir + '/ready-' + name, '');
for (let waited = 0; fs.readdirSync(dir).filter((file) => file.startsWith('ready-')).length < 2 && waited < 20000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
const event = (id) => ({ id, type: 'Written', data: { pad: 'x'.repeat(1000) }, metadata: { correlation_id: id, causation_id: id, actor: name, schema_version: 1 } });
let acknowledged = 0;
let failure = null;
for (let batch = 0; batch < ${APPENDS} / 8; batch += 1) {
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => store.append(name + '-' + batch + '-' + index, [event(name + '-' + batch + '-' + index)], 'no_stream')));
  for (const result of results) result.status === 'fulfilled' ? (acknowledged += 1) : (failure ??= String(result.reason?.message));
}
await store.close();
db.close();
console.log(JSON.stringify({ acknowledged, failure }));
`;

/**
 * README: `RUN_PROJECTOR=false` runs an API-only process beside the projector on one DATA_DIR.
 * Both write to the same referrals.db; SQLite lets one writer at a time, and a connection waits
 * for the other's write to end (its busy timeout) rather than failing at once ("database is
 * locked", a 503).
 */
describe('SQLite: two processes writing to one DATA_DIR at once', () => {
  it('both processes’ appends are all acknowledged, and all in the log: a writer waits for the other’s commit instead of failing', async function () {
    this.timeout(60_000);
    const dir = tempDataDir();
    try {
      openSqlite(dir).close(); // the schema, written once before both start
      const write = (name: string) =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WRITER, dir, name], { cwd: ROOT, encoding: 'utf8' }).then(
          ({ stdout }) => JSON.parse(stdout.trim().split('\n').pop()!) as { acknowledged: number; failure: string | null },
        );
      const [a, b] = await Promise.all([write('a'), write('b')]);
      expect(a).to.deep.equal({ acknowledged: APPENDS, failure: null });
      expect(b).to.deep.equal({ acknowledged: APPENDS, failure: null });
      const db = openSqlite(dir);
      expect(await new SqliteEventStore(db).headPosition()).to.equal(BigInt(2 * APPENDS));
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
