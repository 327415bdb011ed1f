import 'reflect-metadata';
import { ReadModelGate } from '../../../src/application/projections/read-model-gate.js';
import fs from 'node:fs';
import { expect } from 'chai';
import pino from 'pino';
import { defaultProjections } from '../../support/projections.js';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { type CommandContext, EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import { UserQueries } from '../../../src/application/queries/user-queries.js';
import { PersonalDataCipher } from '../../../src/application/privacy/personal-data-cipher.js';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { CatalogQueries } from '../../../src/application/queries/catalog-queries.js';
import { EXPIRED_PER_KIND } from '../../../src/application/queries/user-view.js';
import type { Config } from '../../../src/config.js';
import type { NewDomainEvent } from '../../../src/domain/decider.js';
import { CountingReadStore } from '../../support/counting-read-store.js';
import { DAY, event, iso, programAssigned, registered, rewardGranted, T0 } from '../../support/events.js';
import { tempDir } from '../../support/temp-dir.js';

const HISTORY = 10_000;
const context: CommandContext = { correlation_id: 'request-1', causation_id: 'request-1', actor: 'process:test' };

describe('projection cost does not grow with history (instrumented read store)', function () {
  this.timeout(120_000);
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let store: CountingReadStore;
  let runner: ProjectionRunner;

  async function append(stream: string, events: NewDomainEvent[]): Promise<void> {
    for (let start = 0; start < events.length; start += 1_000) await log.append(stream, events.slice(start, start + 1_000), 'any', context);
  }

  async function catchUp(): Promise<void> {
    while (await runner.processPage());
  }

  /** Documents and bytes read and written to project `events` appended to `stream`. */
  async function costOf(stream: string, events: NewDomainEvent[]) {
    await append(stream, events);
    store.resetCounts();
    await catchUp();
    return store.counts;
  }

  const claimCounted = (count: number) =>
    event('ReferralClaimCounted', { claimer: `claimer-${count}`, code: 'REFCODE', claims: count, cause_position: String(count) });
  /** A sender credit grant added to the referrer's one never-expiring entry (SPEC §5.3). */
  const senderGrant = (count: number, balance: number) =>
    rewardGranted({
      grant_id: `grant-${count}`,
      entry_id: 'grant-1',
      credits: 5,
      balance_after: balance,
      granted_at: iso(count),
      cause: { type: 'referrals', variant: 'claim', count, claimer: `claimer-${count}`, program_id: 'prog' },
    });
  const withdrawal = (index: number, start: number) =>
    event('CreditsWithdrawn', {
      operation_id: `op-${index}`,
      key: 'coins',
      withdrawn_at: iso(index),
      credits_requested_to_withdraw: 1,
      credits_withdrawn: 1,
      credits_available_at_start: start,
      credits_available_at_end: start - 1,
      debits: [{ grant_id: 'bank', credits: 1 }],
    });

  before(async function () {
    dir = tempDir('projection-cost');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    store = new CountingReadStore(new SqliteReadStore(db));
    runner = new ProjectionRunner(log, store, defaultProjections, pino({ level: 'silent' }));
    await runner.init();

    // A referrer with HISTORY counted claims and sender grants, and one with none yet.
    for (const referrer of ['busy-referrer', 'new-referrer']) {
      await append(`user-${referrer}`, [registered(referrer), programAssigned('prog', referrer.toUpperCase()), claimCounted(1), senderGrant(1, 5)]);
    }
    const history: NewDomainEvent[] = [];
    for (let count = 2; count <= HISTORY; count += 1) history.push(claimCounted(count), senderGrant(count, 5 * count));
    await append('user-busy-referrer', history);

    // A user with HISTORY withdrawals from one entry, and one with none yet.
    for (const spender of ['busy-spender', 'new-spender']) {
      await append(`user-${spender}`, [registered(spender), rewardGranted({ grant_id: 'bank', credits: 1_000_000, balance_after: 1_000_000 })]);
    }
    await append(
      'user-busy-spender',
      Array.from({ length: HISTORY }, (_, index) => withdrawal(index, 1_000_000 - index)),
    );
    await catchUp();
  });

  after(async function () {
    await store.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`counting a claim and granting its sender reward: ${HISTORY.toLocaleString('en')} past claims cost what the first did`, async function () {
    const busy = await costOf('user-busy-referrer', [claimCounted(HISTORY + 1), senderGrant(HISTORY + 1, 5 * (HISTORY + 1))]);
    const fresh = await costOf('user-new-referrer', [claimCounted(2), senderGrant(2, 10)]);
    expect(busy.documentsRead).to.equal(fresh.documentsRead);
    expect(busy.documentsWritten).to.equal(fresh.documentsWritten);
    // Only the digits of the larger counters and balances differ.
    expect(busy.bytesRead).to.be.at.most(fresh.bytesRead + 64);
    expect(busy.bytesWritten).to.be.at.most(fresh.bytesWritten + 64);
    expect(busy.documentsWritten).to.be.greaterThan(0);
  });

  it(`a withdrawal: ${HISTORY.toLocaleString('en')} past withdrawals cost what the first did`, async function () {
    const busy = await costOf('user-busy-spender', [withdrawal(HISTORY, 1_000_000 - HISTORY)]);
    const fresh = await costOf('user-new-spender', [withdrawal(0, 1_000_000)]);
    expect(busy.documentsRead).to.equal(fresh.documentsRead);
    expect(busy.documentsWritten).to.equal(fresh.documentsWritten);
    expect(busy.bytesRead).to.be.at.most(fresh.bytesRead + 64);
    expect(busy.bytesWritten).to.be.at.most(fresh.bytesWritten + 64);
    expect(busy.documentsWritten).to.be.greaterThan(0);
  });

  it(`the user view reads the live entries and at most ${EXPIRED_PER_KIND} expired ones per kind, whatever the history`, async function () {
    const expired: NewDomainEvent[] = [registered('veteran', { first_seen_at: T0.toISOString() })];
    for (let index = 0; index < EXPIRED_PER_KIND + 50; index += 1) {
      expired.push(
        rewardGranted({ grant_id: `old-${index}`, reward_key: 'pass', kind: 'basic', expires_at: iso(index * DAY + DAY), granted_at: iso(index * DAY) }),
        event('RewardExpired', {
          grant_id: `old-${index}`,
          reward_key: 'pass',
          kind: 'basic',
          expired_at: iso(index * DAY + DAY),
          credits_forfeited: null,
          balance_after: null,
        }),
      );
    }
    expired.push(rewardGranted({ grant_id: 'live', credits: 3, balance_after: 3 }));
    await append('user-veteran', expired);
    await catchUp();
    const config = { CLAIM_WINDOW_DAYS: 7, REFERRAL_LINK_BASE: null } as unknown as Config;
    const queries = new UserQueries(
      new CatalogQueries(store),
      store,
      { now: () => new Date(T0.getTime() + 1000 * DAY) },
      config,
      new ReadModelGate(),
      new PersonalDataCipher(new MemoryKeyStore()),
    );
    store.resetCounts();
    await queries.userView('veteran');
    // The user document, its live entry, the 100 most recent expired entries of one kind (no reward definitions stored here).
    expect(store.counts.documentsRead).to.equal(1 + 1 + EXPIRED_PER_KIND);
  });
});
