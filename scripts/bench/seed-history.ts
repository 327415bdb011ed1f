import type { EventLog } from '../../src/application/event-log.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { streams } from '../../src/domain/events/index.js';

const BATCH = 1_000;

/**
 * Gives a referrer `claims` past claims straight in the log (its code's slot count and its
 * own claim counter), as years of traffic would have — so the bench can show that claim cost
 * does not grow with history.
 */
export async function seedReferralHistory(log: EventLog, referrer: string, code: string, claims: number): Promise<void> {
  const context = { correlation_id: 'bench-seed', causation_id: 'bench-seed', actor: 'process:bench-seed' };
  let codeRevision = (await log.last(streams.code(code)))!.revision;
  let userRevision = (await log.last(streams.user(referrer)))!.revision;
  for (let start = 0; start < claims; start += BATCH) {
    const count = Math.min(BATCH, claims - start);
    const slots: NewDomainEvent[] = [];
    const counted: NewDomainEvent[] = [];
    for (let index = 0; index < count; index += 1) {
      const claimer = `seeded-${start + index}`;
      slots.push({ type: 'ClaimSlotTaken', data: { claim_id: `seed-${start + index}`, claimer, taken: start + index + 1 } });
      counted.push({ type: 'ReferralClaimCounted', data: { claimer, code, claims: start + index + 1, cause_position: '0' } });
    }
    codeRevision = (await log.append(streams.code(code), slots, codeRevision, context)).nextExpectedRevision;
    userRevision = (await log.append(streams.user(referrer), counted, userRevision, context)).nextExpectedRevision;
  }
}
