import { z } from 'zod';

/** Events of `code-{CODE}`: a code's place in the shared namespace and its claim slots. */
export const codeTypeSchema = z.enum(['referral', 'promo', 'affiliate']);
export type CodeType = z.infer<typeof codeTypeSchema>;

export const codeEvents = {
  CodeReserved: z.object({ code: z.string(), type: codeTypeSchema, owner_id: z.string() }),
  /** `taken` = slots held after this event, so the latest event alone tells the count. */
  ClaimSlotTaken: z.object({ claim_id: z.string(), claimer: z.string(), taken: z.number().int() }),
  ClaimSlotReleased: z.object({ claim_id: z.string(), claimer: z.string(), taken: z.number().int() }),
};
