import { z } from 'zod';

/** Events of `code-{CODE}`: a code's place in the shared namespace and its claim slots. */
/** The kinds of code (SPEC §2): one list for the events, the answers and the filters. */
export const CODE_TYPES = ['referral', 'promo', 'affiliate'] as const;
export const codeTypeSchema = z.enum(CODE_TYPES);
export type CodeType = z.infer<typeof codeTypeSchema>;

/**
 * Claims of the code in the current UTC clock hour and day, carried by every slot event so the
 * latest event alone tells them (the fraud rules `referrer_claims_per_hour` / `_per_day`; a
 * referral code belongs to one referrer). Absent on events written before fraud rules.
 */
const claimWindowSchema = z.object({ hour: z.string(), hour_claims: z.number().int(), day: z.string(), day_claims: z.number().int() });
export type ClaimWindow = z.infer<typeof claimWindowSchema>;

export const codeEvents = {
  CodeReserved: z.object({ code: z.string(), type: codeTypeSchema, owner_id: z.string() }),
  /** `taken` = slots held after this event, so the latest event alone tells the count. */
  ClaimSlotTaken: z.object({ claim_id: z.string(), claimer: z.string(), taken: z.number().int(), window: claimWindowSchema.optional() }),
  ClaimSlotReleased: z.object({ claim_id: z.string(), claimer: z.string(), taken: z.number().int(), window: claimWindowSchema.optional() }),
};
