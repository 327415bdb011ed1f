import 'reflect-metadata';
import { expect } from 'chai';
import { poolIndexProjection } from '../../../projections/pool-index.js';
import type { LoggedEvent } from '../../../src/application/event-log.js';
import { PoolReactions } from '../../../src/application/reactions/pool-reactions.js';
import { PoolAssignments } from '../../../src/application/shared-resources/pool-assignments.js';
import type { EventStore } from '../../../src/ports/event-store.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, registered, rewardGranted, rewardRevoked } from '../../support/events.js';

const code = (value: string) => ({ value, link: null, expires_at: '2099-01-01T00:00:00.000Z' });
/** The grant an event of the pool or of a user's rewards is about. */
const grantOf = (one: LoggedEvent) => (one.data as { grant_id: string }).grant_id;
/** The pool's answer to g1…g5 with three codes A, B, C: codes for the first three, the others wait in line. */
const SERVED_IN_ORDER = [
  ['PoolCodeAssigned', 'g1'],
  ['PoolCodeAssigned', 'g2'],
  ['PoolCodeAssigned', 'g3'],
  ['PoolCodeRequested', 'g4'],
  ['PoolCodeRequested', 'g5'],
];
const pooledGrant = (grantId: string) =>
  rewardGranted({ grant_id: grantId, reward_key: 'sender', kind: 'store_promo_code', credits: null, balance_after: null });

describe('pools reaction: a page of pooled grants (issue #10: a popular referrer with a pooled sender reward)', () => {
  let app: ApplicationSpec;
  let reaction: PoolReactions;
  const appends = new Map<string, number>();

  beforeEach(async () => {
    appends.clear();
    app = await applicationSpec({
      projections: [poolIndexProjection],
      store: (inner) => {
        const counting: EventStore = Object.create(inner);
        counting.append = async (stream, events, expected) => {
          appends.set(stream, (appends.get(stream) ?? 0) + 1);
          return inner.append(stream, events, expected);
        };
        return counting;
      },
    });
    reaction = new PoolReactions(new PoolAssignments(app.executor, app.clock, app.readStore, app.consistency));
    await app.given({
      'pool-sender': [event('PoolCodesAdded', { codes: [code('A'), code('B'), code('C')] })],
      'user-bob': [registered('bob'), ...['g1', 'g2', 'g3', 'g4', 'g5'].map(pooledGrant)],
    });
  });
  afterEach(async () => app.stop());

  it("asks the pool once for the page's grants, in grant order, each event naming its grant; handled again, it changes nothing", async () => {
    const grants = (await app.events('user-bob')).filter((one) => one.type === 'RewardGranted');
    const outcome = await app.when(() => reaction.handleBatch(grants));
    expect(appends.get('pool-sender'), 'appends to the pool').to.equal(1);
    const pool = outcome.appended.get('pool-sender')!;
    expect(pool.map((one) => [one.type, grantOf(one)])).to.deep.equal(SERVED_IN_ORDER);
    expect(pool.map((one) => one.metadata.causation_id)).to.deep.equal(grants.map((grant) => grant.id));
    const values = outcome.appended.get('user-bob')!.filter((one) => one.type === 'RewardValueAssigned');
    expect(values.map((one) => [grantOf(one), (one.data.value as { value: string }).value])).to.have.deep.members([
      ['g1', 'A'],
      ['g2', 'B'],
      ['g3', 'C'],
    ]);
    (await app.when(() => reaction.handleBatch(grants))).thenNothing();
  });

  it('requests arriving together (claims with a pooled reward) share appends; a grant asked for twice at once still gets one code', async () => {
    const pools = new PoolAssignments(app.executor, app.clock, app.readStore, app.consistency);
    const grants = ['g1', 'g2', 'g3', 'g4', 'g5'];
    const request = (grantId: string) => pools.request('sender', { grant_id: grantId, app_user_id: 'bob', expires_at: null, position: null }, app.context);
    const outcome = await app.when(() => Promise.all([...grants.map(request), ...grants.map(request)]));
    const pool = outcome.appended.get('pool-sender')!;
    expect(pool.map((one) => [one.type, grantOf(one)])).to.deep.equal(SERVED_IN_ORDER);
    // [g1] alone; [g2…g5, g1's repeat] together (the repeat shares no grant with them); the other
    // repeats, which cannot share a batch with their grants, after: they write nothing.
    expect(appends.get('pool-sender')).to.equal(2);
    const values = outcome.appended.get('user-bob')!.filter((one) => one.type === 'RewardValueAssigned');
    expect(values.map(grantOf).sort()).to.deep.equal(['g1', 'g2', 'g3']);
  });

  it('a grant revoked in the same page leaves the line it joined; the next refill serves the one behind it', async () => {
    const revoked = rewardRevoked({ grant_id: 'g4', reward_key: 'sender', kind: 'store_promo_code' });
    await app.given({ 'user-bob': [revoked] });
    const page = (await app.events('user-bob')).filter((one) => one.type === 'RewardGranted' || one.type === 'RewardRevoked');
    const outcome = await app.when(() => reaction.handleBatch(page));
    expect(outcome.appended.get('pool-sender')!.map((one) => [one.type, grantOf(one)])).to.deep.equal([
      ['PoolCodeAssigned', 'g1'],
      ['PoolCodeAssigned', 'g2'],
      ['PoolCodeAssigned', 'g3'],
      ['PoolCodeRequested', 'g4'],
      ['PoolCodeRequested', 'g5'],
      ['PoolRequestWithdrawn', 'g4'],
    ]);
    const refill = await new PoolAssignments(app.executor, app.clock, app.readStore, app.consistency).addCodes('sender', [code('D')], app.context);
    expect(refill).to.include({ added: 1 });
    const served = (await app.events('pool-sender')).filter((one) => one.type === 'PoolCodeAssigned').map((one) => grantOf(one));
    expect(served).to.deep.equal(['g1', 'g2', 'g3', 'g5']);
  });
});
