import 'reflect-metadata';
import { ReadModelGate } from '../../../src/application/projections/read-model-gate.js';
import { expect } from 'chai';
import { usersProjection } from '../../../projections/users.js';
import { CatalogQueries } from '../../../src/application/queries/catalog-queries.js';
import { UserQueries } from '../../../src/application/queries/user-queries.js';
import { PersonalDataCipher } from '../../../src/application/privacy/personal-data-cipher.js';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import type { Config } from '../../../src/config.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { CountingReadStore } from '../../support/counting-read-store.js';
import { registered, rewardGranted } from '../../support/events.js';

const config = { CLAIM_WINDOW_DAYS: 7, REFERRAL_LINK_BASE: null } as unknown as Config;

/**
 * A hot user (one account withdrawing from many devices) gets many answers at once; each shows
 * the user as the read models hold it after that request's write.
 */
describe('UserQueries.userView: simultaneous views of one user share one read', () => {
  let app: ApplicationSpec;
  let counting: CountingReadStore;
  let queries: UserQueries;

  beforeEach(async () => {
    app = await applicationSpec({ projections: [usersProjection] });
    counting = new CountingReadStore(app.readStore);
    queries = new UserQueries(new CatalogQueries(counting), counting, app.clock, config, new ReadModelGate(), new PersonalDataCipher(new MemoryKeyStore()));
    await app.given({ 'user-ann': [registered('ann'), rewardGranted({ grant_id: 'g1', credits: 5, balance_after: 5 })] });
  });
  afterEach(() => app.stop());

  it('32 views asked for in one turn read the user once, and all get the same view', async () => {
    await queries.userView('ann');
    const oneView = counting.counts.documentsRead;
    counting.resetCounts();
    const views = await Promise.all(Array.from({ length: 32 }, () => queries.userView('ann')));
    expect(counting.counts.documentsRead).to.equal(oneView);
    expect(new Set(views).size).to.equal(1);
    expect(views[0]!.app_user_id).to.equal('ann');
  });

  it('views of different users are not shared', async () => {
    await app.given({ 'user-bob': [registered('bob')] });
    const [ann, bob] = await Promise.all([queries.userView('ann'), queries.userView('bob')]);
    expect(ann!.app_user_id).to.equal('ann');
    expect(bob!.app_user_id).to.equal('bob');
  });

  /** A change of the user's document, as a projection commits it. */
  async function makePremium(position: bigint, after: bigint | null): Promise<void> {
    const doc = (await app.readStore.get('users', 'ann'))!;
    await app.readStore.commitBatches([
      { projector: 'test-write', version: 1, position, after, changes: [{ op: 'put', collection: 'users', id: 'ann', doc: { ...doc, is_premium: true } }] },
    ]);
  }

  it('a view asked for after a write reached the read models shows it, though a view of the same user is still being read', async () => {
    const before = queries.userView('ann');
    await makePremium(1n, null);
    const after = queries.userView('ann');
    expect((await after)!.is_premium).to.equal(true);
    // Asked for before the write: it may show either state.
    expect([null, true]).to.include((await before)!.is_premium);
  });

  it('a view asked for once an earlier read started is read again', async () => {
    const first = await queries.userView('ann');
    await makePremium(1n, null);
    const second = await queries.userView('ann');
    expect(first!.is_premium).to.equal(null);
    expect(second!.is_premium).to.equal(true);
  });

  it('a shared view cannot be changed by one of its callers; a view with one caller is its own', async () => {
    const [view] = await Promise.all([queries.userView('ann'), queries.userView('ann')]);
    expect(Object.isFrozen(view)).to.equal(true);
    expect(() => {
      (view as { app_user_id: string }).app_user_id = 'mallory';
    }).to.throw(TypeError);
    expect(() => (view!.rewards.active.credit as unknown[]).push({})).to.throw(TypeError);
    expect(view!.rewards.active.credit).to.deep.equal([]);
    const alone = await queries.userView('ann');
    expect(Object.isFrozen(alone)).to.equal(false);
  });

  it('an unknown user is null for every caller', async () => {
    const views = await Promise.all([queries.userView('nobody'), queries.userView('nobody')]);
    expect(views).to.deep.equal([null, null]);
  });
});
