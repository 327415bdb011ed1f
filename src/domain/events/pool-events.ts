import { z } from 'zod';
import { LOG_POSITION_TEXT } from '../../ports/event-store.js';
import { isoDateTime } from '../rewards/reward-schemas.js';

/** Events of `pool-{reward_key}`: one-time codes of an offer_code / store_promo_code reward. */
const poolCodeSchema = z.object({ value: z.string(), link: z.string().nullable(), expires_at: isoDateTime });
export type PoolCode = z.infer<typeof poolCodeSchema>;

export const poolEvents = {
  PoolCodesAdded: z.object({ codes: z.array(poolCodeSchema) }),
  /**
   * A grant waits for a code: the pool had none usable. `expires_at`: when the grant's entry
   * expires (null: never), after which no code is handed to it. `grant_position`: the log
   * position of the grant (a request can reach the pool after one for a later grant: a sender
   * grant's comes from a reaction), which orders the line. Events recorded before either was
   * kept lack it: upcast to null (src/application/upcasters.ts); such requests came first.
   */
  PoolCodeRequested: z.object({
    grant_id: z.string(),
    app_user_id: z.string(),
    expires_at: isoDateTime.nullable(),
    grant_position: z.string().regex(LOG_POSITION_TEXT).nullable(),
  }),
  PoolCodeAssigned: z.object({ grant_id: z.string(), app_user_id: z.string(), code: poolCodeSchema }),
  /** A grant was revoked (refund clawback) before it got a code: it gets none (it leaves the line, or is never served). */
  PoolRequestWithdrawn: z.object({ grant_id: z.string(), app_user_id: z.string(), withdrawn_at: isoDateTime }),
};
