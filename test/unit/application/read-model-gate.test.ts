import 'reflect-metadata';
import { expect } from 'chai';
import { catalogProjection } from '../../../projections/catalog.js';
import { rewardEntryId, USER_REWARDS, USERS, usersProjection } from '../../../projections/users.js';
import pino from 'pino';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import { ReadModelGate } from '../../../src/application/projections/read-model-gate.js';
import { CatalogQueries } from '../../../src/application/queries/catalog-queries.js';
import { UserQueries } from '../../../src/application/queries/user-queries.js';
import { PersonalDataCipher } from '../../../src/application/privacy/personal-data-cipher.js';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import type { Config } from '../../../src/config.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, registered, rewardGranted, T0 } from '../../support/events.js';

/** A promise and the function that settles it. */
function latch(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

const turns = async (count: number) => {
  for (let index = 0; index < count; index += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('ReadModelGate: a commit of this process never lands between the reads of one answer', () => {
  it('a commit waits for the reads under way; reads asked for while it waits go after it', async () => {
    const gate = new ReadModelGate();
    const order: string[] = [];
    const first = latch();
    const reading = gate.read(async () => {
      order.push('read 1 starts');
      await first.done;
      order.push('read 1 ends');
    });
    const committing = gate.commit(async () => void order.push('commit'));
    const later = gate.read(async () => void order.push('read 2'));
    await turns(3);
    expect(order).to.deep.equal(['read 1 starts']);
    first.open();
    await Promise.all([reading, committing, later]);
    expect(order).to.deep.equal(['read 1 starts', 'read 1 ends', 'commit', 'read 2']);
  });

  it('reads run together, commits one at a time, and a failure on either side releases the gate', async () => {
    const gate = new ReadModelGate();
    const both = latch();
    let inside = 0;
    let most = 0;
    const read = () =>
      gate.read(async () => {
        inside += 1;
        most = Math.max(most, inside);
        await both.done;
        inside -= 1;
      });
    const reads = [read(), read(), read()];
    await turns(2);
    both.open();
    await Promise.all(reads);
    expect(most).to.equal(3);

    let committing = 0;
    let overlapped = false;
    const commit = () =>
      gate.commit(async () => {
        committing += 1;
        if (committing > 1) overlapped = true;
        await turns(2);
        committing -= 1;
      });
    await Promise.all([commit(), commit(), commit()]);
    expect(overlapped).to.equal(false);

    await gate.read(async () => Promise.reject(new Error('read failed'))).catch(() => null);
    await gate.commit(async () => Promise.reject(new Error('commit failed'))).catch(() => null);
    expect(await gate.commit(async () => 'committed')).to.equal('committed');
    expect(await gate.read(async () => 'read')).to.equal('read');
  });
});

describe('ProjectionRunner under the gate', () => {
  it('commits a page only once the reads under way have ended', async () => {
    const app = await applicationSpec();
    try {
      const gate = new ReadModelGate();
      const runner = new ProjectionRunner(app.log, app.readStore, [usersProjection], pino({ level: 'silent' }), gate);
      await runner.init();
      await app.given({ 'user-ann': [registered('ann')] });
      const reading = latch();
      const read = gate.read(() => reading.done);
      const page = runner.processPage();
      await turns(5);
      expect(await app.readStore.get(USERS, 'ann'), 'committed during the read').to.equal(null);
      reading.open();
      await read;
      await page;
      expect((await app.readStore.get(USERS, 'ann'))?.exists).to.equal(true);
    } finally {
      await app.stop();
    }
  });
});

describe('UserQueries.userView under the gate', () => {
  let app: ApplicationSpec;
  beforeEach(async () => {
    app = await applicationSpec({ projections: [usersProjection, catalogProjection] });
    const coins = {
      key: 'coins',
      kind: 'credit',
      name: 'Coins',
      description: null,
      metadata: null,
      credits: 5,
      created_at: T0.toISOString(),
      updated_at: null,
    } as const;
    await app.given({
      'reward-coins': [event('RewardCreated', { reward: coins })],
      'user-ann': [registered('ann'), rewardGranted({ grant_id: 'g1', credits: 5, balance_after: 5 })],
    });
  });
  afterEach(() => app.stop());

  /**
   * The projector records the expiry of ann's entry — the entry marked expired and its kind added
   * to the user's expired_kinds, in one commit — just after the view has read the user document:
   * the turn in which a commit releases the requests waiting for it, and the runner goes on.
   */
  it('an expiry committed while the view is read shows the entry in one of its lists, never in neither', async () => {
    const gate = new ReadModelGate();
    const user = (await app.readStore.get(USERS, 'ann'))!;
    const entry = (await app.readStore.get(USER_REWARDS, rewardEntryId('ann', 'g1')))!;
    const expiry = {
      projector: 'test-expiry',
      version: 1,
      position: 10n,
      after: null,
      changes: [
        { op: 'put' as const, collection: USERS, id: 'ann', doc: { ...user, expired_kinds: ['credit'] } },
        { op: 'put' as const, collection: USER_REWARDS, id: rewardEntryId('ann', 'g1'), doc: { ...entry, expired: true } },
      ],
    };
    let expiring: Promise<void> | null = null;
    const store = Object.create(app.readStore) as ReadStore;
    store.get = async <T extends Record<string, unknown>>(collection: string, id: string) => {
      const doc = await app.readStore.get<T>(collection, id);
      // Ungated, the commit lands here, before the view reads the entries.
      if (collection === USERS && expiring === null) expiring = gate.commit(() => app.readStore.commitBatches([expiry]));
      return doc;
    };
    const config = { CLAIM_WINDOW_DAYS: 7, REFERRAL_LINK_BASE: null } as unknown as Config;
    const queries = new UserQueries(new CatalogQueries(store), store, app.clock, config, gate, new PersonalDataCipher(new MemoryKeyStore()));
    const view = (await queries.userView('ann'))!;
    await expiring;
    const listed = [...view.rewards.active.credit, ...view.rewards.expired.credit];
    expect(listed, 'the entry is in the active or the expired list').to.have.length(1);
    // The commit waited for the view: the view is the state before it.
    expect(view.rewards.active.credit).to.have.length(1);
    const after = (await queries.userView('ann'))!;
    expect(after.rewards.active.credit).to.have.length(0);
    expect(after.rewards.expired.credit).to.have.length(1);
  });
});
