import 'reflect-metadata';
import { expect } from 'chai';
import { poolIndexProjection } from '../../../projections/pool-index.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog, type LoggedEvent } from '../../../src/application/event-log.js';
import { PoolReactions } from '../../../src/application/reactions/pool-reactions.js';
import { PoolAssignments } from '../../../src/application/shared-resources/pool-assignments.js';
import { StreamExecutor } from '../../../src/application/stream-executor.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, registered, rewardGranted, rewardRevoked } from '../../support/events.js';

const RUNS = 40;
const USERS = ['u0', 'u1', 'u2', 'u3'];
const GRANTS = ['g0', 'g1', 'g2', 'g3', 'g4'];

const code = (value: string) => ({ value, link: null, expires_at: '2099-01-01T00:00:00.000Z' });
const pooledGrant = (grantId: string) =>
  rewardGranted({ grant_id: grantId, reward_key: 'sender', kind: 'store_promo_code', credits: null, balance_after: null });
const revoked = (grantId: string) => rewardRevoked({ grant_id: grantId, reward_key: 'sender', kind: 'store_promo_code' });
const grantData = (logged: LoggedEvent) => logged.data as { grant_id: string; app_user_id?: string; code?: { value: string }; value?: { value: string } };

/** A small deterministic generator (a linear congruential one): each run is reproducible from its seed. */
function randomness(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const shuffle = <T>(items: T[]) => {
    const shuffled = [...items];
    for (let index = shuffled.length - 1; index > 0; index -= 1) {
      const other = Math.floor(next() * (index + 1));
      [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
    }
    return shuffled;
  };
  return { next, shuffle };
}

/**
 * Every way a pool is written at once, interleaved at random: two processes (two executors on one
 * log, so appends conflict), reaction pages handled twice and overlapping, the requests of claims
 * and manual grants (half of them without a grant position, as a retry), the withdrawals of
 * clawbacks, and refills repeating earlier values.
 */
async function interleave(app: ApplicationSpec, seed: number): Promise<Set<string>> {
  const random = randomness(seed);
  const own = new PoolAssignments(app.executor, app.clock, app.readStore, app.consistency);
  const other = new PoolAssignments(new StreamExecutor(new EventLog(app.store, new RandomIds()), app.readStore), app.clock, app.readStore, app.consistency);
  const either = () => (random.next() < 0.5 ? own : other);
  const given: Record<string, DomainEvent[]> = { 'pool-sender': [event('PoolCodesAdded', { codes: [code('I0'), code('I1')] })] };
  const revocations = new Set<string>();
  for (const user of USERS) {
    given[`user-${user}`] = [registered(user), ...GRANTS.map(pooledGrant)];
    for (const grant of GRANTS.filter(() => random.next() < 0.3)) {
      given[`user-${user}`]!.push(revoked(grant));
      revocations.add(`${user}/${grant}`);
    }
  }
  await app.given(given);
  const log: LoggedEvent[] = [];
  for (const user of USERS) log.push(...(await app.events(`user-${user}`)).filter((one) => one.type === 'RewardGranted' || one.type === 'RewardRevoked'));
  log.sort((a, b) => (a.position < b.position ? -1 : 1));
  const work: (() => Promise<unknown>)[] = [];
  for (let round = 0; round < 2; round += 1) {
    for (let start = 0; start < log.length; ) {
      const page = log.slice(start, start + 1 + Math.floor(random.next() * 8));
      const reaction = new PoolReactions(either());
      work.push(() => reaction.handleBatch(page));
      start += page.length;
    }
  }
  for (const logged of log) {
    const user = logged.stream.slice('user-'.length);
    const { grant_id: grant } = grantData(logged);
    const pools = either();
    if (logged.type === 'RewardGranted') {
      const position = random.next() < 0.5 ? null : logged.position;
      work.push(() => pools.request('sender', { grant_id: grant, app_user_id: user, expires_at: null, position }, app.context));
    } else work.push(() => pools.withdraw('sender', grant, user, app.context));
  }
  for (let refill = 0; refill < 4; refill += 1) {
    const pools = either();
    const values = [`R${refill}a`, `R${refill}b`, `R${Math.max(0, refill - 1)}a`];
    work.push(() => pools.addCodes('sender', values.map(code), app.context));
  }
  const running: Promise<unknown>[] = [];
  for (const task of random.shuffle(work)) {
    running.push(task());
    if (random.next() < 0.3) await new Promise((resolve) => setImmediate(resolve));
  }
  const failures = (await Promise.allSettled(running)).flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
  expect(failures, 'failures').to.deep.equal([]);
  // Codes assigned by the last refills reach their users, as the pools reaction delivers them.
  await new PoolReactions(own).handleBatch((await app.events('pool-sender')).filter((one) => one.type === 'PoolCodeAssigned'));
  return revocations;
}

describe('a pool written by everything at once, in random interleavings (SPEC §5.3, §7.5)', function () {
  this.timeout(60_000);

  for (let run = 0; run < RUNS; run += 1) {
    it(`run ${run}: each code to one grant, one code per grant, none to a withdrawn grant, every delivery as the pool decided`, async () => {
      const app = await applicationSpec({ projections: [poolIndexProjection] });
      try {
        const revocations = await interleave(app, run + 7);
        const codeOf = new Map<string, string>();
        const grantOf = new Map<string, string>();
        const withdrawn = new Set<string>();
        for (const logged of await app.events('pool-sender')) {
          const data = grantData(logged);
          const grant = `${data.app_user_id}/${data.grant_id}`;
          if (logged.type === 'PoolCodeAssigned') {
            expect(grantOf.has(data.code!.value), `${data.code!.value} given twice`).to.equal(false);
            expect(codeOf.has(grant), `${grant} given two codes`).to.equal(false);
            expect(withdrawn.has(grant), `${grant} given a code after it was withdrawn`).to.equal(false);
            grantOf.set(data.code!.value, grant);
            codeOf.set(grant, data.code!.value);
          }
          if (logged.type === 'PoolRequestWithdrawn') withdrawn.add(grant);
          if (logged.type === 'PoolCodeRequested')
            expect(codeOf.has(grant) || withdrawn.has(grant), `${grant} queued after it was served or withdrawn`).to.equal(false);
        }
        for (const user of USERS) {
          const delivered = (await app.events(`user-${user}`)).filter((one) => one.type === 'RewardValueAssigned').map(grantData);
          expect(new Set(delivered.map((value) => value.grant_id)).size, `${user}: one value per grant`).to.equal(delivered.length);
          for (const value of delivered) expect(value.value!.value, `${user}/${value.grant_id}`).to.equal(codeOf.get(`${user}/${value.grant_id}`));
        }
        for (const grant of revocations) expect(withdrawn.has(grant) || codeOf.has(grant), `revoked ${grant}: withdrawn, or served before`).to.equal(true);
      } finally {
        await app.stop();
      }
    });
  }
});
