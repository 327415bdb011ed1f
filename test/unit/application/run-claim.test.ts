import 'reflect-metadata';
import { expect } from 'chai';
import { type ClaimSteps, runClaim } from '../../../src/application/commands/claim-code.js';
import type { ClaimFraudSteps } from '../../../src/application/fraud/claim-fraud-checks.js';
import { DomainError } from '../../../src/domain/domain-error.js';
import type { FraudRule } from '../../../src/domain/events/fraud-events.js';
import { RejectedByRule, type RuleHit } from '../../../src/domain/fraud/claim-rules.js';
import type { ClaimTarget } from '../../../src/domain/users/claim-code.js';
import { foldUserEvents, initialUserState, type UserState } from '../../../src/domain/users/user-state.js';
import { registered, T0 } from '../../support/events.js';

const target: ClaimTarget = {
  code: 'BOB1',
  type: 'referral',
  owner_id: 'bob',
  program_id: 'p',
  owner_app_user_id: 'bob',
  is_active: true,
  claimRewards: [],
  conversionRewards: [],
};
const rule = { id: 'r1', kind: 'blocked_users' } as FraudRule;
/** The code's slots are all taken. */
const limit = new DomainError('CLAIM.LIMIT_REACHED', 'full', '/code');
const hit = (action: 'reject' | 'hold'): RuleHit => ({ rule_id: 'r1', kind: 'blocked_users', action });

/**
 * The claim sequence with every step journaled: the handler (POST /users/{id}/claim-code) and
 * the event generator both run `runClaim`, so what happens on claim is decided here once.
 */
function stepsOf(options: {
  fraud?: Partial<ClaimFraudSteps>;
  takeSlot?: (attempt: number) => Promise<RuleHit | null>;
  record?: (attempt: number) => void;
  /** The claimer's earlier claims holding a slot of the code (a request that died half-way). */
  stale?: string[];
}) {
  const journal: string[] = [];
  let claims = 0;
  let records = 0;
  let takes = 0;
  let stale = options.stale ?? [];
  const ann: UserState = foldUserEvents(initialUserState(), [registered('ann')]);
  const fraud: ClaimFraudSteps | null = options.fraud
    ? {
        rules: [rule],
        judgeParties: async () => {
          journal.push('judge parties');
          return { reject: null, hold: null };
        },
        countPaymentCustomer: async () => {
          journal.push('count payment customer');
          return { hold: null, stream: 'payment-customer-x' };
        },
        releasePaymentCustomer: async (stream) => void journal.push(`release ${stream}`),
        holdOf: (found, claimId) => (found ? { rule_id: found.rule_id, kind: found.kind, review_id: `review-of-${claimId}` } : null),
        recordRejection: async (rejected) => void journal.push(`record rejection by ${rejected.rule_id}`),
        ...options.fraud,
      }
    : null;
  const steps: ClaimSteps<string[]> = {
    now: () => T0,
    claimId: () => `claim-${++claims}`,
    claimer: async () => {
      journal.push('load claimer');
      return ann;
    },
    takeSlot: async (claimId, guard) => {
      const replacing = guard.replacing?.length ? ` replacing ${guard.replacing.join(',')}` : '';
      journal.push(`take slot ${claimId}${guard.rules ? ' with rules' : ''}${replacing}`);
      takes += 1;
      return options.takeSlot ? options.takeSlot(takes) : null;
    },
    record: async (decide) => {
      records += 1;
      options.record?.(records);
      const decision = decide(ann);
      journal.push(`record ${decision.events.map((event) => event.type).join(',')}`);
      return decision.events.map((event) => JSON.stringify(event.data));
    },
    giveBack: async (claimId) => void journal.push(`give back ${claimId}`),
    abandonStale: async () => {
      journal.push(`abandon stale [${stale.join(',')}]`);
      const abandoned = stale;
      stale = [];
      return abandoned;
    },
    fraud,
  };
  return { steps, journal };
}

const request = { code: 'BOB1', target, windowDays: 7 };

describe('runClaim: what happens on claim, with and without fraud rules', () => {
  it('without rules: load, take a slot, record the claim', async () => {
    const { steps, journal } = stepsOf({});
    await runClaim(steps, request);
    expect(journal).to.deep.equal(['load claimer', 'take slot claim-1', 'record CodeClaimed']);
  });

  it('with rules: the parties are judged, the slot judges the rates, the payment customer is counted, a hold is recorded on the claim', async () => {
    const { steps, journal } = stepsOf({ fraud: {}, takeSlot: async () => hit('hold') });
    const recorded = await runClaim(steps, request);
    expect(journal).to.deep.equal(['load claimer', 'judge parties', 'take slot claim-1 with rules', 'count payment customer', 'record CodeClaimed']);
    expect(JSON.parse(recorded[0]!).hold).to.deep.equal({ rule_id: 'r1', kind: 'blocked_users', review_id: 'review-of-claim-1' });
  });

  it('a refusal by a rule at the slot gives back the count taken with it, then records the refusal in the claimer stream', async () => {
    const { steps, journal } = stepsOf({ fraud: {}, takeSlot: () => Promise.reject(new RejectedByRule(hit('reject'))) });
    const refused = await runClaim(steps, request).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(RejectedByRule);
    expect(journal).to.deep.equal([
      'load claimer',
      'judge parties',
      'take slot claim-1 with rules',
      'count payment customer',
      'release payment-customer-x',
      'record rejection by r1',
    ]);
  });

  it('when slot and counter both refuse, the refusal of the slot is the one answered and nothing is left taken', async () => {
    const { steps, journal } = stepsOf({
      fraud: { countPaymentCustomer: () => Promise.reject(new RejectedByRule(hit('reject'))) },
      takeSlot: () => Promise.reject(limit),
    });
    const refused = await runClaim(steps, request).catch((error: unknown) => error);
    expect(refused).to.equal(limit);
    expect(journal).to.deep.equal(['load claimer', 'judge parties', 'take slot claim-1 with rules', 'abandon stale []']);
  });

  it('a refusal by the payment customer counter gives the slot back, then records the refusal', async () => {
    const { steps, journal } = stepsOf({ fraud: { countPaymentCustomer: () => Promise.reject(new RejectedByRule(hit('reject'))) } });
    const refused = await runClaim(steps, request).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(RejectedByRule);
    expect(journal).to.deep.equal(['load claimer', 'judge parties', 'take slot claim-1 with rules', 'give back claim-1', 'record rejection by r1']);
  });

  it('the count is asked before the slot answers: both ride one group commit', async () => {
    let countedBeforeSlotAnswered = false;
    let counted = false;
    const { steps } = stepsOf({
      fraud: {
        countPaymentCustomer: async () => {
          counted = true;
          return { hold: null, stream: null };
        },
      },
      takeSlot: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        countedBeforeSlotAnswered = counted;
        return null;
      },
    });
    await runClaim(steps, request);
    expect(countedBeforeSlotAnswered).to.equal(true);
  });

  it('a slot lost before the claim is recorded gives back slot and count, then starts again with a new claim id', async () => {
    const { steps, journal } = stepsOf({
      fraud: {},
      record: (attempt) => {
        if (attempt === 1) throw new DomainError('CLAIM.SLOT_LOST', 'lost', '/code');
      },
    });
    await runClaim(steps, request);
    expect(journal).to.deep.equal([
      'load claimer',
      'judge parties',
      'take slot claim-1 with rules',
      'count payment customer',
      'give back claim-1',
      'release payment-customer-x',
      'load claimer',
      'judge parties',
      'take slot claim-2 with rules',
      'count payment customer',
      'record CodeClaimed',
    ]);
  });

  it("a code full with the claimer's own stale slot abandons that claim and takes a slot again, once, releasing it in the same request", async () => {
    const { steps, journal } = stepsOf({ stale: ['claim-0'], takeSlot: (attempt) => (attempt === 1 ? Promise.reject(limit) : Promise.resolve(null)) });
    await runClaim(steps, request);
    expect(journal).to.deep.equal([
      'load claimer',
      'take slot claim-1',
      'abandon stale [claim-0]',
      'load claimer',
      'take slot claim-2 replacing claim-0',
      'record CodeClaimed',
    ]);
  });

  it('a code full of other claimers answers CLAIM.LIMIT_REACHED: nothing of the claimer to abandon', async () => {
    const { steps, journal } = stepsOf({ takeSlot: () => Promise.reject(limit) });
    expect(await runClaim(steps, request).catch((error: unknown) => error)).to.equal(limit);
    expect(journal).to.deep.equal(['load claimer', 'take slot claim-1', 'abandon stale []']);
  });

  it('a code still full once the stale slot is released answers CLAIM.LIMIT_REACHED without looking again', async () => {
    const { steps, journal } = stepsOf({ stale: ['claim-0'], takeSlot: () => Promise.reject(limit) });
    expect(await runClaim(steps, request).catch((error: unknown) => error)).to.equal(limit);
    expect(journal).to.deep.equal(['load claimer', 'take slot claim-1', 'abandon stale [claim-0]', 'load claimer', 'take slot claim-2 replacing claim-0']);
  });

  it('a slot lost after replacing a stale one starts again without releasing it twice', async () => {
    const { steps, journal } = stepsOf({
      stale: ['claim-0'],
      takeSlot: (attempt) => (attempt === 1 ? Promise.reject(limit) : Promise.resolve(null)),
      record: (attempt) => {
        if (attempt === 1) throw new DomainError('CLAIM.SLOT_LOST', 'lost', '/code');
      },
    });
    await runClaim(steps, request);
    expect(journal.filter((line) => line.startsWith('take slot'))).to.deep.equal([
      'take slot claim-1',
      'take slot claim-2 replacing claim-0',
      'take slot claim-3',
    ]);
  });
});
