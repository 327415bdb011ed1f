import { z } from './zod-openapi.js';
import { chars, jsonObject, outDateTime } from './common.js';

/** The largest position a store can hold; a cursor past it simply has nothing after it. */
const LAST_POSITION = 2n ** 63n - 1n;
const position = z
  .string()
  .regex(/^\d{1,20}$/, 'must be a log position (digits)')
  .transform((value) => (BigInt(value) > LAST_POSITION ? LAST_POSITION : BigInt(value)));

export const eventsQuery = z.object({
  after: position.optional().openapi({
    type: 'string',
    pattern: '^\\d{1,20}$',
    description: 'Exclusive: events after this position (`next_after` of the previous page)',
    example: '1200',
  }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  stream: chars(1, 300).optional().openapi({ description: 'Exact stream name, e.g. user-alice' }),
  stream_prefix: chars(1, 300).optional().openapi({ description: 'Stream name prefix, e.g. user- (all users)' }),
  type: chars(1, 100).optional(),
});

export const eventPageOut = z
  .object({
    events: z.array(
      z.object({
        position: z.string(),
        stream: z.string(),
        revision: z.number().int(),
        id: z.string(),
        type: z.string(),
        data: jsonObject,
        metadata: jsonObject,
        recorded_at: outDateTime,
      }),
    ),
    next_after: z.string().nullable(),
  })
  .openapi('EventPage');

export const ledgerQuery = z.object({ key: chars(1, 64).optional() });

export const creditLedgerOut = z
  .object({
    app_user_id: z.string(),
    entries: z.array(
      z.object({
        at: outDateTime,
        event_id: z.string(),
        position: z.string(),
        kind: z.enum(['grant', 'withdraw', 'expire', 'clawback', 'shortfall']),
        key: z.string(),
        delta: z.number().int(),
        balance_after: z.number().int(),
        operation_id: z.string().nullable(),
        cause: jsonObject,
      }),
    ),
  })
  .openapi('CreditLedger');
