/**
 * Years of traffic for one entity, written straight into the event log in large appends (not
 * over HTTP, which would take as long as the traffic itself). Every event is decided by the
 * service's own pure deciders and appended through EventLog (schemas checked), with the ids
 * the service would have given it, so the service reads this history as its own.
 */
import type { CommandContext, EventLog } from '../../src/application/event-log.js';
import { decideTakeSlot } from '../../src/domain/codes/claim-slots.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { streams } from '../../src/domain/events/index.js';
import { operationEventIdParts } from '../../src/domain/idempotency.js';
import { decideCountReferral } from '../../src/domain/users/count-referral.js';
import { foldUserEvents, initialUserState, type UserState } from '../../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../../src/domain/users/withdraw-credits.js';
import type { Ids } from '../../src/ports/ids.js';

const BATCH = 2_000;

async function userState(log: EventLog, appUserId: string): Promise<{ state: UserState; revision: number }> {
  const events = await log.readStream(streams.user(appUserId));
  if (events.length === 0) throw new Error(`user ${appUserId} does not exist`);
  return { state: foldUserEvents(initialUserState(), events), revision: events[events.length - 1]!.revision };
}

/**
 * Gives an existing referrer `claims` past claims by (unregistered) claimers: its code's slots
 * as the claim command takes them, and its counts as the referral reaction writes them.
 */
export async function seedReferrerClaims(log: EventLog, referrer: string, claims: number): Promise<void> {
  let { state, revision: userRevision } = await userState(log, referrer);
  const code = state.referral_code;
  if (code === null) throw new Error(`${referrer} has no referral code`);
  let codeRevision = (await log.last(streams.code(code)))!.revision;
  let taken = 0;
  // Causes must grow (the reaction ignores a cause at or before the last one counted) and stay
  // below the positions of later real claims: the head before seeding plus one per claim is,
  // since seeding appends two events per claim.
  const head = (await log.store.headPosition()) ?? 0n;
  const now = new Date();
  const request: CommandContext = { correlation_id: 'bench-seed', causation_id: 'bench-seed', actor: 'process:bench-seed' };
  for (let start = 0; start < claims; start += BATCH) {
    const slots: NewDomainEvent[] = [];
    const counted: NewDomainEvent[] = [];
    for (let index = start; index < Math.min(claims, start + BATCH); index += 1) {
      const claimer = `seeded-claimer-${index}`;
      const slot = decideTakeSlot(taken, 0, `seeded-claim-${index}`, claimer);
      taken = slot.result;
      slots.push(...slot.events);
      const count = decideCountReferral(state, {
        figure: 'claim',
        claimer,
        code,
        program_id: state.program_id,
        senderRewards: [],
        cause_id: `seeded-claim-${index}`,
        cause_position: head + BigInt(index + 1),
        now,
      });
      counted.push(...count.events);
      state = foldUserEvents(state, count.events);
    }
    codeRevision = (await log.append(streams.code(code), slots, codeRevision, request)).nextExpectedRevision;
    userRevision = (await log.append(streams.user(referrer), counted, userRevision, { ...request, actor: 'process:referrals' })).nextExpectedRevision;
  }
}

/**
 * Gives an existing user `withdrawals` past withdrawals of 1 credit of `key`, each with its own
 * operation_id, as the withdraw command decides them (the user must hold enough credits).
 */
export async function seedWithdrawals(log: EventLog, ids: Ids, appUserId: string, key: string, withdrawals: number): Promise<void> {
  let { state, revision } = await userState(log, appUserId);
  const stream = streams.user(appUserId);
  const now = new Date();
  for (let start = 0; start < withdrawals; start += BATCH) {
    const events: NewDomainEvent[] = [];
    const contexts: CommandContext[] = [];
    for (let index = start; index < Math.min(withdrawals, start + BATCH); index += 1) {
      const operationId = `seeded-op-${index}`;
      // A new operation_id: nothing earlier to repeat.
      const decision = decideWithdrawCredits(state, { key, amount: 1, operation_id: operationId, earlier: null, isCreditReward: true, now });
      // One request each: the id the service derives from the operation_id, its own metadata.
      decision.events.forEach((event, position) => {
        events.push({ ...event, id: ids.derived(...operationEventIdParts(stream, { id: operationId, kind: 'withdraw' }, position)) });
        contexts.push({
          correlation_id: `bench-seed-${index}`,
          causation_id: `bench-seed-${index}`,
          actor: 'client:bench-seed',
          operation: { id: operationId, kind: 'withdraw' },
        });
      });
      state = foldUserEvents(state, decision.events);
    }
    revision = (await log.append(stream, events, revision, contexts)).nextExpectedRevision;
  }
}
