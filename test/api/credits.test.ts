import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { DATABASE_FILE } from '../../src/adapters/sqlite/sqlite-database.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import type { Backend } from '../../src/backends/backend.js';
import { withdrawResponse } from '../../src/http/schemas/users.js';
import { type EventStore, ForwardingEventStore, StoreUnavailableError } from '../../src/ports/event-store.js';
import { CountingReadStore } from '../support/counting-read-store.js';
import { createUser, days, eventually, events, getUser, putReward } from '../support/fixtures.js';
import { CLIENT_KEY, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

const DAY = 86_400_000;

describe('API: credits — withdrawals, manual grants, ledger and event log', () => {
  let svc: TestService;

  const grant = (user: string, body: Record<string, unknown>) => svc.admin('POST', `/users/${user}/rewards/grant`, body);
  const withdraw = (user: string, body: Record<string, unknown>) => svc.call('POST', `/users/${user}/rewards/withdraw-credits`, body);
  const creditEntries = async (user: string) =>
    (await getUser(svc, user)).rewards.active.credit.map((entry: any) => ({ credits: entry.credits, expires_at: entry.expires_at }));

  before(async () => {
    svc = await startTestService();
    await putReward(svc, 'gems', { kind: 'credit', name: 'Gems', credits: 10 });
    await putReward(svc, 'vip', { kind: 'basic', name: 'VIP' });
  });
  after(async () => svc.stop());

  describe('POST /users/{id}/rewards/grant (secret key)', () => {
    it('grants credits with 201 and stacks them', async () => {
      await createUser(svc, 'granted');
      const first = await grant('granted', { key: 'gems' });
      expect(first.status).to.equal(201);
      expect(first.body.data.rewards_granted.credit).to.have.length(1);
      expect(first.body.data.rewards_granted.credit[0]).to.include({ credits: 10, expires_at: null });
      const second = await grant('granted', { key: 'gems' });
      // rewards_granted shows the grant as granted; the user's entry accumulates (SPEC §5.3).
      expect(second.body.data.rewards_granted.credit[0]).to.include({ credits: 10, expires_at: null });
      expect((await creditEntries('granted')).map((entry: { credits: number }) => entry.credits)).to.deep.equal([20]);
    });

    it('answers 200 and adds nothing when a basic reward is already active', async () => {
      expect((await grant('granted', { key: 'vip', deactivation: { variant: 'interval', duration: 1, period: 'months' } })).status).to.equal(201);
      const again = await grant('granted', { key: 'vip' });
      expect(again.status).to.equal(200);
      expect(again.body.data.rewards_granted.basic).to.have.length(0);
      expect((await getUser(svc, 'granted')).rewards.active.basic).to.have.length(1);
    });

    it('operation_id: a repeat grants nothing more; another key with it is 422 GRANT.OPERATION_ID_REUSED', async () => {
      const first = await grant('granted', { key: 'gems', operation_id: 'comp-1' });
      const repeat = await grant('granted', { key: 'gems', operation_id: 'comp-1' });
      expect(repeat.status).to.equal(200);
      expect(repeat.body.data.rewards_granted).to.deep.equal(first.body.data.rewards_granted);
      expect((await creditEntries('granted')).map((entry: { credits: number }) => entry.credits)).to.deep.equal([30]);
      const reused = await grant('granted', { key: 'vip', operation_id: 'comp-1' });
      expect(reused.status).to.equal(422);
      expect(reused.body.errors[0]).to.include({ code: 'GRANT.OPERATION_ID_REUSED', source: '/operation_id' });
      expect((await grant('granted', { key: 'no-such-reward', operation_id: 'comp-1' })).body.errors[0].code).to.equal('GRANT.OPERATION_ID_REUSED');
    });

    it('a grant skipped because its basic reward is active still uses its operation_id: a repeat is 200, another key with it 422', async () => {
      await createUser(svc, 'skipped-op');
      expect((await grant('skipped-op', { key: 'vip', operation_id: 'vip-1' })).status).to.equal(201);
      const skipped = await grant('skipped-op', { key: 'vip', operation_id: 'vip-2' });
      expect(skipped.status).to.equal(200);
      expect(skipped.body.data.rewards_granted.basic).to.have.length(0);
      expect((await grant('skipped-op', { key: 'vip', operation_id: 'vip-2' })).status).to.equal(200);
      const reused = await grant('skipped-op', { key: 'gems', operation_id: 'vip-2' });
      expect(reused.status).to.equal(422);
      expect(reused.body.errors[0]).to.include({ code: 'GRANT.OPERATION_ID_REUSED', source: '/operation_id' });
      expect(await creditEntries('skipped-op')).to.deep.equal([]);
    });

    it('an operation_id is per kind: a withdrawal and a grant may each use it once, in either order (SPEC §6)', async () => {
      await createUser(svc, 'per-kind');
      expect((await grant('per-kind', { key: 'gems', operation_id: 'support-1' })).status).to.equal(201);
      const first = await withdraw('per-kind', { key: 'gems', amount: 3, operation_id: 'support-1' });
      expect(first.status).to.equal(200);
      expect(first.body.data.withdraw_result).to.include({ credits_withdrawn: 3, credits_available_at_end: 7 });
      // Each kind still remembers its own first use.
      expect((await grant('per-kind', { key: 'gems', operation_id: 'support-1' })).status).to.equal(200);
      expect((await withdraw('per-kind', { key: 'gems', amount: 3, operation_id: 'support-1' })).body.data.withdraw_result).to.deep.equal(
        first.body.data.withdraw_result,
      );
      expect((await grant('per-kind', { key: 'vip', operation_id: 'support-1' })).body.errors[0].code).to.equal('GRANT.OPERATION_ID_REUSED');
      expect((await withdraw('per-kind', { key: 'gems', amount: 5, operation_id: 'support-1' })).body.errors[0].code).to.equal('WITHDRAW.OPERATION_ID_REUSED');
      // The other order: a withdrawal first, then a grant with its id.
      expect((await withdraw('per-kind', { key: 'gems', amount: 1, operation_id: 'order-9' })).status).to.equal(200);
      expect((await grant('per-kind', { key: 'gems', operation_id: 'order-9' })).status).to.equal(201);
      expect((await creditEntries('per-kind')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(10 - 3 - 1 + 10);
    });

    it("a grant written when operation ids were not per kind (its event id derived as a withdrawal's) lets a withdrawal use its operation_id", async () => {
      await createUser(svc, 'old-log');
      expect((await grant('old-log', { key: 'gems', operation_id: 'legacy-1' })).status).to.equal(201);
      // Give the grant's event the id the versions before 2026-11-24 derived for any operation.
      const granted = (await events(svc, 'stream=user-old-log&type=RewardGranted')).at(-1)!;
      const db = new Database(path.join(svc.dataDir, DATABASE_FILE));
      db.prepare('UPDATE events SET id = ? WHERE id = ?').run(new RandomIds().derived('user-old-log', 'operation', 'legacy-1', '0'), granted.id);
      db.close();
      const first = await withdraw('old-log', { key: 'gems', amount: 4, operation_id: 'legacy-1' });
      expect(first.status).to.equal(200);
      expect(first.body.data.withdraw_result).to.include({ credits_withdrawn: 4, credits_available_at_end: 6 });
      expect((await withdraw('old-log', { key: 'gems', amount: 4, operation_id: 'legacy-1' })).body.data.withdraw_result).to.deep.equal(
        first.body.data.withdraw_result,
      );
      expect((await grant('old-log', { key: 'gems', operation_id: 'legacy-1' })).status).to.equal(200);
    });

    it("an operation_id equal to a grant's generated id is a new grant with an entry of its own", async () => {
      await createUser(svc, 'namesake');
      await svc.admin('POST', '/users/namesake/rewards/grant', { key: 'gems', deactivation: days(1) });
      // The id a grant without operation_id got, as a client reads it in the log, sent as an operation_id.
      const generated = String((await events(svc, 'stream=user-namesake&type=RewardGranted'))[0]!.data.grant_id);
      const namesake = generated.replace(/^manual[:/]/, '').replace(/\/\d+$/, '');
      const second = await svc.admin('POST', '/users/namesake/rewards/grant', { key: 'gems', operation_id: namesake, deactivation: days(1) });
      expect(second.status).to.equal(201);
      const withdrawn = await svc.call('POST', '/users/namesake/rewards/withdraw-credits', { key: 'gems', amount: 15 });
      expect(withdrawn.body.data.withdraw_result).to.include({ credits_available_at_start: 20, credits_withdrawn: 15, credits_available_at_end: 5 });
      const entries = (await getUser(svc, 'namesake')).rewards.active.credit.map((entry: { credits: number }) => entry.credits);
      expect(entries.reduce((sum: number, credits: number) => sum + credits, 0)).to.equal(5);
      expect(entries.every((credits: number) => credits >= 0)).to.equal(true);
      const grants = await events(svc, 'stream=user-namesake&type=RewardGranted');
      expect(new Set(grants.map((grant) => grant.data.grant_id)).size).to.equal(2);
    });

    it('errors: 403 client key, 404 user, 422 GRANT.REWARD_NOT_FOUND, 400 shapes', async () => {
      expect((await svc.call('POST', '/users/granted/rewards/grant', { key: 'gems' }, { 'x-api-key': CLIENT_KEY })).status).to.equal(403);
      expect((await grant('nobody', { key: 'gems' })).body.errors[0].code).to.equal('NOT_FOUND.USER');
      expect((await grant('granted', { key: 'nothing' })).body.errors[0]).to.include({ code: 'GRANT.REWARD_NOT_FOUND', source: '/key' });
      expect((await grant('granted', {})).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/key' });
      expect((await grant('granted', { key: 'gems', deactivation: { variant: 'interval', duration: 3 } })).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: '/deactivation/period',
      });
    });
  });

  describe('POST /users/{id}/rewards/withdraw-credits', () => {
    it('drains the earliest-expiring entry first (never-expiring last) and keeps drained entries with 0', async () => {
      await createUser(svc, 'drain');
      await grant('drain', { key: 'gems' }); // never expires
      await grant('drain', { key: 'gems', deactivation: days(30) });
      await grant('drain', { key: 'gems', deactivation: days(10) });
      const response = await withdraw('drain', { key: 'gems', amount: 15 });
      expect(response.status).to.equal(200);
      const { withdraw_result, user } = withdrawResponse.parse(response.body).data;
      expect(withdraw_result).to.deep.equal({
        credits_available_at_start: 30,
        credits_available_at_end: 15,
        credits_requested_to_withdraw: 15,
        credits_withdrawn: 15,
      });
      const byExpiry = user.rewards.active.credit.map((entry) => [
        entry.expires_at === null ? 'never' : Math.round((Date.parse(entry.expires_at) - svc.clock.now().getTime()) / DAY),
        entry.credits,
      ]);
      expect(byExpiry).to.deep.equal([
        ['never', 10],
        [30, 5],
        [10, 0],
      ]);
    });

    it('withdraws what is left when asked for more, then 0', async () => {
      const partial = (await withdraw('drain', { key: 'gems', amount: 100 })).body.data.withdraw_result;
      expect(partial).to.deep.equal({ credits_available_at_start: 15, credits_available_at_end: 0, credits_requested_to_withdraw: 100, credits_withdrawn: 15 });
      const empty = (await withdraw('drain', { key: 'gems', amount: 1 })).body.data.withdraw_result;
      expect(empty).to.deep.equal({ credits_available_at_start: 0, credits_available_at_end: 0, credits_requested_to_withdraw: 1, credits_withdrawn: 0 });
    });

    it('operation_id: a repeat returns the original result and debits nothing; other key or amount → 422', async () => {
      await createUser(svc, 'idem');
      await grant('idem', { key: 'gems' });
      const first = (await withdraw('idem', { key: 'gems', amount: 4, operation_id: 'order-1' })).body.data;
      const repeat = await withdraw('idem', { key: 'gems', amount: 4, operation_id: 'order-1' });
      expect(repeat.status).to.equal(200);
      expect(repeat.body.data.withdraw_result).to.deep.equal(first.withdraw_result);
      expect(repeat.body.data.user.rewards.active.credit[0].credits).to.equal(6);
      const otherAmount = await withdraw('idem', { key: 'gems', amount: 5, operation_id: 'order-1' });
      expect(otherAmount.status).to.equal(422);
      expect(otherAmount.body.errors[0]).to.include({ code: 'WITHDRAW.OPERATION_ID_REUSED', source: '/operation_id' });
      await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 1 });
      expect((await withdraw('idem', { key: 'coins', amount: 4, operation_id: 'order-1' })).body.errors[0].code).to.equal('WITHDRAW.OPERATION_ID_REUSED');
      // Another key that names no credit reward: the remembered operation_id answers first (SPEC §6).
      expect((await withdraw('idem', { key: 'no-such-reward', amount: 4, operation_id: 'order-1' })).body.errors[0].code).to.equal(
        'WITHDRAW.OPERATION_ID_REUSED',
      );
    });

    it('errors: 400 for every shape rule, 404 user, 422 WITHDRAW.REWARD_NOT_FOUND', async () => {
      const shapes: [Record<string, unknown>, string][] = [
        [{ amount: 1 }, '/key'],
        [{ key: '', amount: 1 }, '/key'],
        [{ key: 'gems' }, '/amount'],
        [{ key: 'gems', amount: 0 }, '/amount'],
        [{ key: 'gems', amount: 1.5 }, '/amount'],
        [{ key: 'gems', amount: '5' }, '/amount'],
        [{ key: 'gems', amount: 2_147_483_648 }, '/amount'],
        [{ key: 'gems', amount: 1, operation_id: '' }, '/operation_id'],
        [{ key: 'gems', amount: 1, operation_id: 'x'.repeat(129) }, '/operation_id'],
      ];
      for (const [body, source] of shapes) {
        const response = await withdraw('idem', body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source });
      }
      expect((await withdraw('nobody', { key: 'gems', amount: 1 })).body.errors[0].code).to.equal('NOT_FOUND.USER');
      for (const key of ['unknown', 'vip', 'k'.repeat(65), 'Upper-Case']) {
        const response = await withdraw('idem', { key, amount: 1 });
        expect(response.status).to.equal(422);
        expect(response.body.errors[0]).to.include({ code: 'WITHDRAW.REWARD_NOT_FOUND', source: '/key' });
      }
    });
  });

  describe('invariants under concurrency', () => {
    it('parallel withdrawals never overdraw: withdrawn = min(requested, granted)', async () => {
      await createUser(svc, 'crowd');
      for (let index = 0; index < 5; index += 1) await grant('crowd', { key: 'gems' });
      const responses = await Promise.all(Array.from({ length: 40 }, () => withdraw('crowd', { key: 'gems', amount: 3 })));
      expect(responses.every((response) => response.status === 200)).to.equal(true);
      const results = responses.map((response) => response.body.data.withdraw_result);
      const withdrawn = results.reduce((sum: number, result: any) => sum + result.credits_withdrawn, 0);
      expect(withdrawn).to.equal(Math.min(40 * 3, 50));
      expect(results.every((result: any) => result.credits_available_at_end >= 0)).to.equal(true);
      expect((await creditEntries('crowd')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(0);
    });

    it('parallel repeats of one operation_id debit once and all answer the same result', async () => {
      await createUser(svc, 'repeater');
      await grant('repeater', { key: 'gems' });
      await grant('repeater', { key: 'gems' });
      const responses = await Promise.all(Array.from({ length: 30 }, () => withdraw('repeater', { key: 'gems', amount: 7, operation_id: 'pay-42' })));
      const results = responses.map((response) => JSON.stringify(response.body.data.withdraw_result));
      expect(new Set(results).size).to.equal(1);
      expect(JSON.parse(results[0]!)).to.include({ credits_withdrawn: 7, credits_available_at_start: 20 });
      expect((await creditEntries('repeater')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(13);
      expect(await events(svc, 'stream=user-repeater&type=CreditsWithdrawn')).to.have.length(1);
    });

    it('one withdrawal operation_id sent with two amounts by 30 at once debits once: one amount wins, the other is 422 WITHDRAW.OPERATION_ID_REUSED', async () => {
      await createUser(svc, 'two-amounts');
      for (let index = 0; index < 3; index += 1) await grant('two-amounts', { key: 'gems' });
      const amounts = Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? 5 : 3));
      const responses = await Promise.all(amounts.map((amount) => withdraw('two-amounts', { key: 'gems', amount, operation_id: 'split-op' })));
      const accepted = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status === 422);
      expect(accepted.length + refused.length).to.equal(30);
      const requested = new Set(accepted.map((response) => response.body.data.withdraw_result.credits_requested_to_withdraw));
      expect(requested.size).to.equal(1);
      const winner = [...requested][0] as number;
      // Every request with the winning amount is a repeat of the first (200); every one with the other amount is refused.
      expect(accepted).to.have.length(amounts.filter((amount) => amount === winner).length);
      expect(refused).to.have.length(amounts.filter((amount) => amount !== winner).length);
      for (const response of refused) expect(response.body.errors[0]).to.include({ code: 'WITHDRAW.OPERATION_ID_REUSED', source: '/operation_id' });
      expect(new Set(accepted.map((response) => JSON.stringify(response.body.data.withdraw_result))).size).to.equal(1);
      expect(accepted[0]!.body.data.withdraw_result).to.deep.equal({
        credits_available_at_start: 30,
        credits_available_at_end: 30 - winner,
        credits_requested_to_withdraw: winner,
        credits_withdrawn: winner,
      });
      const debits = await events(svc, 'stream=user-two-amounts&type=CreditsWithdrawn');
      expect(debits).to.have.length(1);
      expect((await creditEntries('two-amounts')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(30 - winner);
    });

    it('30 first uses at once of one grant operation_id grant once: one 201, 29 × 200, one RewardGranted', async () => {
      await createUser(svc, 'grant-crowd');
      const responses = await Promise.all(Array.from({ length: 30 }, () => grant('grant-crowd', { key: 'gems', operation_id: 'comp-crowd' })));
      expect(responses.filter((response) => response.status === 201)).to.have.length(1);
      expect(responses.filter((response) => response.status === 200)).to.have.length(29);
      const first = responses.find((response) => response.status === 201)!;
      for (const response of responses) expect(response.body.data.rewards_granted).to.deep.equal(first.body.data.rewards_granted);
      expect(await events(svc, 'stream=user-grant-crowd&type=RewardGranted')).to.have.length(1);
      expect((await creditEntries('grant-crowd')).map((entry: { credits: number }) => entry.credits)).to.deep.equal([10]);
    });

    it('one grant operation_id sent with two keys by 30 at once: one key wins, every request with the other is 422 GRANT.OPERATION_ID_REUSED', async () => {
      await createUser(svc, 'grant-split');
      const keys = Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? 'gems' : 'vip'));
      const responses = await Promise.all(keys.map((key) => grant('grant-split', { key, operation_id: 'comp-split' })));
      const created = responses.filter((response) => response.status === 201);
      expect(created).to.have.length(1);
      const winner = keys[responses.indexOf(created[0]!)]!;
      responses.forEach((response, index) => {
        if (keys[index] === winner) expect(response.status, `request ${index}`).to.be.oneOf([200, 201]);
        else {
          expect(response.status, `request ${index}`).to.equal(422);
          expect(response.body.errors[0]).to.include({ code: 'GRANT.OPERATION_ID_REUSED', source: '/operation_id' });
        }
      });
      expect(responses.filter((response) => response.status === 200)).to.have.length(14);
      expect(responses.filter((response) => response.status === 422)).to.have.length(15);
      const granted = await events(svc, 'stream=user-grant-split&type=RewardGranted');
      expect(granted).to.have.length(1);
      expect(granted[0]!.data.reward_key).to.equal(winner);
      const user = await getUser(svc, 'grant-split');
      expect(user.rewards.active.credit).to.have.length(winner === 'gems' ? 1 : 0);
      expect(user.rewards.active.basic).to.have.length(winner === 'vip' ? 1 : 0);
    });

    it('one operation_id sent by 20 grants and 20 withdrawals at once: one grant and one withdrawal, each with its own answer (ids are per kind)', async () => {
      await createUser(svc, 'mixed-ops');
      await grant('mixed-ops', { key: 'gems' });
      const requests = Array.from({ length: 40 }, (_, index) =>
        index % 2 === 0
          ? grant('mixed-ops', { key: 'gems', operation_id: 'order-77' })
          : withdraw('mixed-ops', { key: 'gems', amount: 4, operation_id: 'order-77' }),
      );
      const responses = await Promise.all(requests);
      const grants = responses.filter((_, index) => index % 2 === 0);
      const withdrawals = responses.filter((_, index) => index % 2 === 1);
      expect(grants.filter((response) => response.status === 201)).to.have.length(1);
      expect(grants.filter((response) => response.status === 200)).to.have.length(19);
      expect(withdrawals.every((response) => response.status === 200)).to.equal(true);
      expect(new Set(withdrawals.map((response) => JSON.stringify(response.body.data.withdraw_result))).size).to.equal(1);
      expect(withdrawals[0]!.body.data.withdraw_result).to.include({ credits_requested_to_withdraw: 4, credits_withdrawn: 4 });
      const granted = await events(svc, 'stream=user-mixed-ops&type=RewardGranted');
      expect(granted.filter((event: any) => event.data.cause.operation_id === 'order-77')).to.have.length(1);
      expect(await events(svc, 'stream=user-mixed-ops&type=CreditsWithdrawn')).to.have.length(1);
      expect((await creditEntries('mixed-ops')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(20 - 4);
    });

    it('a basic reward granted by 30 at once without operation_id is granted once: one 201, 29 × 200 (already active), one entry', async () => {
      await createUser(svc, 'vip-crowd');
      const responses = await Promise.all(Array.from({ length: 30 }, () => grant('vip-crowd', { key: 'vip' })));
      expect(responses.filter((response) => response.status === 201)).to.have.length(1);
      const repeats = responses.filter((response) => response.status === 200);
      expect(repeats).to.have.length(29);
      for (const response of repeats) expect(response.body.data.rewards_granted.basic).to.have.length(0);
      expect(await events(svc, 'stream=user-vip-crowd&type=RewardGranted')).to.have.length(1);
      expect((await getUser(svc, 'vip-crowd')).rewards.active.basic).to.have.length(1);
    });
  });

  describe('GET /admin/users/{id}/credit-ledger', () => {
    it('lists every movement oldest first; deltas sum to the balance and match the entries', async () => {
      await createUser(svc, 'audited');
      await grant('audited', { key: 'gems', operation_id: 'g1' });
      await grant('audited', { key: 'gems', deactivation: days(2) });
      await withdraw('audited', { key: 'gems', amount: 4, operation_id: 'w1' });
      svc.clock.advance(3 * DAY);
      await svc.service.runMaintenance();
      await withdraw('audited', { key: 'gems', amount: 1 });
      const response = await svc.admin('GET', '/admin/users/audited/credit-ledger');
      expect(response.status).to.equal(200);
      const entries = response.body.data.entries as any[];
      expect(entries.map((entry) => [entry.kind, entry.delta, entry.balance_after])).to.deep.equal([
        ['grant', 10, 10],
        ['grant', 10, 20],
        ['withdraw', -4, 16],
        ['expire', -6, 10],
        ['withdraw', -1, 9],
      ]);
      expect(entries.reduce((sum, entry) => sum + entry.delta, 0)).to.equal(9);
      expect((await creditEntries('audited')).reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(9);
      expect(entries[0]).to.include({ operation_id: 'g1', key: 'gems' });
      expect(entries[0].cause).to.include({ type: 'manual' });
      expect(entries[2]).to.include({ operation_id: 'w1' });
      expect(entries[2].cause).to.include({ type: 'withdrawal' });
      expect(entries[3].cause).to.include({ type: 'expiry' });
      const positions = entries.map((entry) => BigInt(entry.position));
      expect(positions).to.deep.equal([...positions].sort((a, b) => (a < b ? -1 : 1)));
      expect((await svc.admin('GET', '/admin/users/audited/credit-ledger?key=other')).body.data.entries).to.deep.equal([]);
      expect((await svc.admin('GET', '/admin/users/ghost/credit-ledger')).body.errors[0].code).to.equal('NOT_FOUND.USER');
      expect((await svc.call('GET', '/admin/users/audited/credit-ledger')).status).to.equal(403);
    });
    it('a read records the expiries whose time has passed first: the ledger ends at the balance GET /users shows, before any sweep', async () => {
      await createUser(svc, 'lapsed');
      await grant('lapsed', { key: 'gems', deactivation: days(1) });
      await grant('lapsed', { key: 'gems' }); // never expires
      await createUser(svc, 'lapsed-export');
      await grant('lapsed-export', { key: 'gems', deactivation: days(1) });
      svc.clock.advance(2 * DAY); // no sweep runs in the tests: only a read can record the expiries
      const balance = async (user: string) => (await creditEntries(user)).reduce((sum: number, entry: any) => sum + entry.credits, 0);
      expect(await balance('lapsed')).to.equal(10);
      // Read by 30 at once: each sees the expiry, which is recorded once.
      const reads = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          svc.call('GET', '/admin/users/lapsed/credit-ledger', undefined, { 'x-api-key': SECRET_KEY, 'x-request-id': `ledger-read-${i}` }),
        ),
      );
      for (const read of reads) {
        expect(read.status).to.equal(200);
        expect(read.body.data.entries.map((entry: any) => [entry.kind, entry.delta, entry.balance_after])).to.deep.equal([
          ['grant', 10, 10],
          ['grant', 10, 20],
          ['expire', -10, 10],
        ]);
      }
      const expired = await events(svc, 'stream=user-lapsed&type=RewardExpired');
      expect(expired).to.have.length(1);
      expect(expired[0]!.metadata).to.include({ actor: 'process:expiry-sweep' });
      expect(expired[0]!.metadata.correlation_id).to.match(/^ledger-read-\d+$/);
      // The access export holds the same ledger.
      expect(await balance('lapsed-export')).to.equal(0);
      const exported = await svc.admin('GET', '/admin/users/lapsed-export/export');
      expect(exported.body.data.export.credit_ledger.map((entry: any) => [entry.kind, entry.balance_after])).to.deep.equal([
        ['grant', 10],
        ['expire', 0],
      ]);
      // Nothing due: a read writes nothing.
      const before = (await events(svc, 'stream=user-lapsed')).length;
      await svc.admin('GET', '/admin/users/lapsed/credit-ledger');
      expect(await events(svc, 'stream=user-lapsed')).to.have.length(before);
    });

    it('pages with limit and after: the pages put together are the whole ledger, and the last page says so with a null next_after', async () => {
      await createUser(svc, 'paged');
      for (let i = 0; i < 6; i++) await grant('paged', { key: 'gems', operation_id: `p${i}` });
      await withdraw('paged', { key: 'gems', amount: 5, operation_id: 'pw' });
      const ledger = (query: string) => svc.admin('GET', `/admin/users/paged/credit-ledger${query}`);
      const whole = (await ledger('')).body.data;
      expect(whole.entries).to.have.length(7);
      expect(whole.next_after, 'without limit: every row, nothing to read on').to.equal(null);
      const pages: any[] = [];
      let after: string | null = null;
      do {
        const page: any = (await ledger(`?limit=3${after ? `&after=${after}` : ''}`)).body.data;
        pages.push(page);
        after = page.next_after;
      } while (after !== null);
      expect(pages.map((page) => page.entries.length)).to.deep.equal([3, 3, 1]);
      expect(pages.flatMap((page) => page.entries)).to.deep.equal(whole.entries);
      // A last page that is exactly full still ends the ledger.
      const exact = (await ledger('?limit=7')).body.data;
      expect([exact.entries.length, exact.next_after]).to.deep.equal([7, null]);
      // With a key filter, and a cursor taken from another filter, rows still follow the cursor.
      const first = (await ledger('?limit=2&key=gems')).body.data;
      expect((await ledger(`?limit=10&key=gems&after=${first.next_after}`)).body.data.entries).to.deep.equal(whole.entries.slice(2));
      for (const bad of ['?limit=0', '?limit=1001', '?limit=x', '?after=12', '?after=00000000000000000012.2']) {
        const refused = await ledger(bad);
        expect(refused.status, bad).to.equal(400);
        expect(refused.body.errors[0].code, bad).to.equal('BAD_REQUEST');
      }
    });
  });

  describe('GET /admin/events', () => {
    it('pages the log in commit order by position, filtered by stream or type', async () => {
      const first = (await svc.admin('GET', '/admin/events?limit=3')).body.data;
      expect(first.events).to.have.length(3);
      expect(first.events[0]).to.have.all.keys('position', 'stream', 'revision', 'id', 'type', 'data', 'metadata', 'recorded_at');
      expect(first.events[0].metadata).to.include.keys('correlation_id', 'causation_id', 'actor', 'schema_version');
      const second = (await svc.admin('GET', `/admin/events?limit=3&after=${first.next_after}`)).body.data;
      expect(BigInt(second.events[0].position) > BigInt(first.next_after)).to.equal(true);
      const withdrawals = (await svc.admin('GET', '/admin/events?type=CreditsWithdrawn&limit=1000')).body.data.events;
      expect(withdrawals.length).to.be.greaterThan(0);
      expect(withdrawals.every((event: any) => event.type === 'CreditsWithdrawn')).to.equal(true);
      // A comma-separated list is any of its types, in one page, in commit order (as export-events --type).
      const mixed = (await svc.admin('GET', '/admin/events?type=CreditsWithdrawn,RewardGranted&limit=1000')).body.data.events;
      expect(new Set(mixed.map((event: any) => event.type))).to.deep.equal(new Set(['CreditsWithdrawn', 'RewardGranted']));
      expect(mixed.filter((event: any) => event.type === 'CreditsWithdrawn')).to.deep.equal(withdrawals);
      const own2 = (await svc.admin('GET', '/admin/events?stream=user-audited&type=CreditsWithdrawn,RewardGranted')).body.data.events;
      expect(own2.length).to.be.greaterThan(1);
      expect(own2.every((event: any) => ['CreditsWithdrawn', 'RewardGranted'].includes(event.type))).to.equal(true);
      expect((await svc.admin('GET', '/admin/events?type=CreditsWithdrawn,')).status).to.equal(400);
      // A type no event has (a typo) is named, as by npm run export-events --type: not an empty page.
      const typo = await svc.admin('GET', '/admin/events?type=CreditsWithdrawn,CodeClaim');
      expect(typo.status).to.equal(400);
      expect(typo.body.errors[0]).to.include({ code: 'BAD_REQUEST' });
      expect(typo.body.errors[0].source).to.match(/^query:\/type/);
      expect(typo.body.errors[0].message).to.include('no event type CodeClaim');
      const own = (await svc.admin('GET', '/admin/events?stream=user-audited')).body.data.events;
      expect(own.map((event: any) => event.revision)).to.deep.equal(own.map((_: unknown, index: number) => index));
      const users = (await svc.admin('GET', '/admin/events?stream_prefix=reward-')).body.data.events;
      expect(users.every((event: any) => event.stream.startsWith('reward-'))).to.equal(true);
      const end = (await svc.admin('GET', '/admin/events?after=999999999')).body.data;
      expect(end).to.deep.equal({ events: [], next_after: '999999999' });
      expect((await svc.admin('GET', '/admin/events?limit=1001')).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: 'query:/limit' });
      expect((await svc.admin('GET', '/admin/events?after=abc')).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: 'query:/after' });
    });

    it('pages one stream newest first with order=desc (the console shows a user history so, SPEC §14); without a stream it is 400', async () => {
      const whole = (await svc.admin('GET', '/admin/events?stream=user-audited&limit=1000')).body.data.events;
      expect(whole.length).to.be.greaterThan(4);
      const newestFirst: any[] = [];
      let after: string | null = null;
      for (;;) {
        const page: any = (await svc.admin('GET', `/admin/events?stream=user-audited&order=desc&limit=2${after === null ? '' : `&after=${after}`}`)).body.data;
        if (page.events.length === 0) break;
        newestFirst.push(...page.events);
        after = page.next_after;
        expect(after).to.equal(page.events[page.events.length - 1].position);
      }
      expect(newestFirst).to.deep.equal([...whole].reverse());
      const withdrawals = (await svc.admin('GET', '/admin/events?stream=user-audited&type=CreditsWithdrawn&order=desc')).body.data.events;
      expect(withdrawals).to.deep.equal(whole.filter((event: any) => event.type === 'CreditsWithdrawn').reverse());
      expect((await svc.admin('GET', '/admin/events?stream=user-audited&order=asc&limit=1000')).body.data.events).to.deep.equal(whole);
      for (const path of ['/admin/events?order=desc', '/admin/events?stream_prefix=user-&order=desc']) {
        const refused = await svc.admin('GET', path);
        expect(refused.status, path).to.equal(400);
        expect(refused.body.errors[0], path).to.include({ code: 'BAD_REQUEST', source: 'query:/order' });
      }
      // A stream and a prefix together would answer the stream whatever the prefix: 400, in either order.
      for (const path of ['/admin/events?stream=user-audited&stream_prefix=webhook-', '/admin/events?stream_prefix=user-&stream=user-audited&order=desc']) {
        expect((await svc.admin('GET', path)).body.errors[0], path).to.include({ status: 400, code: 'BAD_REQUEST', source: 'query:/stream_prefix' });
      }
      expect((await svc.admin('GET', '/admin/events?stream=user-audited&order=newest')).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: 'query:/order',
      });
    });

    it('takes a page limit in plain digits only, on every listing (0x10, 1e1, +5, 5.0 and padded values are 400)', async () => {
      const listings = [
        '/admin/events',
        '/admin/reviews',
        '/admin/webhooks/inbound',
        '/admin/webhooks/x/deliveries',
        '/admin/analytics/top-codes?from=2026-11-01&to=2026-11-30',
      ];
      for (const listing of listings) {
        const join = listing.includes('?') ? '&' : '?';
        expect((await svc.admin('GET', `${listing}${join}limit=5`)).status, listing).not.to.equal(400);
        for (const limit of ['0x10', '1e1', '%2B5', '5.0', '%205', '5%20', '%0A5', '']) {
          const response = await svc.admin('GET', `${listing}${join}limit=${limit}`);
          expect(response.status, `${listing} limit=${limit}`).to.equal(400);
          expect(response.body.errors[0], `${listing} limit=${limit}`).to.include({ code: 'BAD_REQUEST', source: 'query:/limit' });
        }
      }
      expect((await svc.admin('GET', '/admin/webhooks/inbound?after=99999999999999999999')).status).to.equal(200);
    });

    it('refuses a query parameter that is not validly percent-encoded UTF-8, or that the operation does not take, naming it', async () => {
      await createUser(svc, 'rep-\ufffd');
      const refused: [string, string][] = [
        // A lone surrogate, a byte that starts no UTF-8 character, an overlong '/', a cut emoji, a bad escape: never read as U+FFFD or as typed.
        ['/admin/events?stream_prefix=user-rep-%ED%A0%80', 'query:/stream_prefix'],
        ['/admin/events?stream_prefix=user-rep-%FF', 'query:/stream_prefix'],
        ['/admin/events?stream=user-rep-%C0%AF', 'query:/stream'],
        ['/admin/events?type=%F0%9F%98', 'query:/type'],
        ['/admin/events?stream_prefix=user-pct%us', 'query:/stream_prefix'],
        ['/admin/events?stream_prefix=user-%', 'query:/stream_prefix'],
        ['/admin/events?%FF=1', 'query:/%FF'],
        // Not a parameter of the operation: a bracketed or misspelt name would otherwise turn the filter off.
        ['/admin/events?stream_prefix[]=user-', 'query:/stream_prefix[]'],
        ['/admin/events?streamprefix=user-', 'query:/streamprefix'],
        ['/admin/users/rep-%EF%BF%BD/credit-ledger?limitt=5', 'query:/limitt'],
        ['/admin/reviews?a%2Fb=1', 'query:/a~1b'],
      ];
      for (const [path, source] of refused) {
        const response = await svc.admin('GET', path);
        expect(response.status, path).to.equal(400);
        expect(response.body.errors[0], path).to.include({ code: 'BAD_REQUEST', source });
      }
      // Valid encodings, '+' for a space, and empty parts still read as before.
      const events = await svc.admin('GET', '/admin/events?stream=user-rep-%EF%BF%BD&&limit=5&');
      expect(events.status).to.equal(200);
      expect(events.body.data.events.map((event: { stream: string }) => event.stream)).to.include('user-rep-\ufffd');
      expect((await svc.admin('GET', '/admin/events?stream_prefix=user+x&limit=1')).status).to.equal(200);
    });
  });
});

describe('API: a page of the credit ledger reads as many rows for a long ledger as for a short one', () => {
  it('counts the documents a page of 5 reads: at the start and at the end of 60 movements, and for a user of 8', async () => {
    let store: CountingReadStore | null = null;
    const svc = await startTestService({
      backend: (backend) => {
        store = new CountingReadStore(backend.readStore);
        return { ...backend, readStore: store };
      },
    });
    try {
      await putReward(svc, 'gems', { kind: 'credit', name: 'Gems', credits: 10 });
      const movements = async (user: string, count: number) => {
        await createUser(svc, user);
        for (let i = 0; i < count; i++)
          expect((await svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'gems', operation_id: `g${i}` })).status).to.equal(201);
      };
      await movements('long', 60);
      await movements('short', 8);
      const cursorAt = async (user: string, rows: number) =>
        (await svc.admin('GET', `/admin/users/${user}/credit-ledger?limit=${rows}`)).body.data.next_after as string;
      const readsOf = async (user: string, after: string | null) => {
        store!.resetCounts();
        const page = await svc.admin('GET', `/admin/users/${user}/credit-ledger?limit=5${after ? `&after=${after}` : ''}`);
        expect(page.body.data.entries).to.have.length(5);
        return store!.counts.documentsRead;
      };
      const short = await readsOf('short', null);
      expect(await readsOf('long', null)).to.equal(short);
      expect(await readsOf('long', await cursorAt('long', 50))).to.equal(short);
      expect(short, 'the page (up to 7 rows with its look-ahead) and the user').to.be.at.most(10);
    } finally {
      await svc.stop();
    }
  });
});

describe('API: one operation_id sent to two processes on one database at once (multi-process probe)', () => {
  /**
   * Both processes decide the grant on the same state; the first appends, the second finds the
   * same deterministic event ids already written by the first. The second must answer as a
   * repeat, 200 with the first call's grants, not 201 with a grant of its own that was never
   * recorded (its own `created_at`).
   */
  it('answers the second as a repeat: 200 with the grants the log holds', async () => {
    let decided = 0;
    let bothDecided!: () => void;
    const bothReady = new Promise<void>((resolve) => {
      bothDecided = resolve;
    });
    let firstDone!: () => void;
    const firstAppended = new Promise<void>((resolve) => {
      firstDone = resolve;
    });
    const raced = new Set<string>();
    /** The grant's first append in each process waits until both have decided; `first` appends, then the other. */
    const racing = (name: 'first' | 'second') => (backend: Backend) => {
      const append: EventStore['append'] = async (stream, events, expected) => {
        if (stream !== 'user-racer' || !events.some((event) => event.type === 'RewardGranted') || raced.has(name)) {
          return backend.eventStore.append(stream, events, expected);
        }
        raced.add(name);
        decided += 1;
        if (decided === 2) bothDecided();
        // Bounded, so a process that never gets here fails the test's assertions instead of hanging it.
        await Promise.race([bothReady, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (name === 'second') await firstAppended;
        const result = await backend.eventStore.append(stream, events, expected);
        if (name === 'first') firstDone();
        return result;
      };
      const eventStore = new Proxy(backend.eventStore, {
        get: (target, property) =>
          property === 'append' ? append : (Reflect.get(target, property) as unknown as (...args: unknown[]) => unknown)?.bind?.(target),
      });
      return { ...backend, eventStore };
    };
    const one = await startTestService({ backend: racing('first') });
    const two = await startTestService({ dataDir: one.dataDir, backend: racing('second') });
    try {
      await putReward(one, 'gems', { kind: 'credit', name: 'Gems', credits: 10 });
      await createUser(one, 'racer');
      // The second process has read what the first wrote (its read models follow the shared file).
      await eventually(async () => expect((await two.admin('GET', '/admin/users/racer')).status).to.equal(200), 30_000);
      const body = { key: 'gems', operation_id: 'op-raced' };
      const [first, raced] = await Promise.all([one.admin('POST', '/users/racer/rewards/grant', body), two.admin('POST', '/users/racer/rewards/grant', body)]);
      // A 503 (the second process's read models did not show the first's write within their wait,
      // as on a loaded machine) asks the client to retry: the retry is the repeat.
      let second = raced;
      for (let retries = 0; second.status === 503 && retries < 5; retries += 1) second = await two.admin('POST', '/users/racer/rewards/grant', body);
      expect([first.status, second.status]).to.deep.equal([201, 200]);
      expect(second.body.data.rewards_granted).to.deep.equal(first.body.data.rewards_granted);
      const ledger = (await one.admin('GET', '/admin/users/racer/credit-ledger')).body.data.entries;
      expect(ledger.map((row: { operation_id: string; at: string }) => row.operation_id)).to.deep.equal(['op-raced']);
      const [granted] = (await one.admin('GET', '/admin/events?stream=user-racer&type=RewardGranted')).body.data.events;
      expect(granted.data.granted_at).to.equal(first.body.data.rewards_granted.credit[0].created_at);
      // The second process remembers what the log holds: its next answer for the user agrees with the first's.
      expect((await getUser(two, 'racer')).rewards.active.credit).to.deep.equal((await getUser(one, 'racer')).rewards.active.credit);
    } finally {
      await two.stop();
      await one.stop();
    }
  });
});

describe('API: the unpaged credit ledger when the store cannot record the due expiries (review)', () => {
  /** An event store whose appends fail while `down` (the ledger records due expiries before it reads). */
  class FailingAppends extends ForwardingEventStore {
    down = false;

    override append(...args: Parameters<EventStore['append']>): ReturnType<EventStore['append']> {
      if (this.down) return Promise.reject(new StoreUnavailableError('appends are down'));
      return super.append(...args);
    }
  }

  it('is a 503 answer, as a page is, not a 200 cut short: the first page is read before anything is written', async () => {
    let store!: FailingAppends;
    const svc = await startTestService({
      backend: (backend) => {
        store = new FailingAppends(backend.eventStore);
        return { ...backend, eventStore: store };
      },
    });
    try {
      await putReward(svc, 'gems', { kind: 'credit', name: 'Gems', credits: 10 });
      await createUser(svc, 'lapsed');
      expect((await svc.admin('POST', '/users/lapsed/rewards/grant', { key: 'gems', deactivation: days(1) })).status).to.equal(201);
      svc.clock.advance(2 * DAY);
      store.down = true;
      for (const path of ['/admin/users/lapsed/credit-ledger?limit=10', '/admin/users/lapsed/credit-ledger']) {
        const answer = await svc.admin('GET', path);
        expect(answer.status, path).to.equal(503);
        expect(answer.body.errors[0].code, path).to.equal('SERVICE_UNAVAILABLE');
      }
      store.down = false;
      expect((await svc.admin('GET', '/admin/users/lapsed/credit-ledger')).body.data.entries.map((row: { kind: string }) => row.kind)).to.deep.equal([
        'grant',
        'expire',
      ]);
    } finally {
      await svc.stop();
    }
  });
});
