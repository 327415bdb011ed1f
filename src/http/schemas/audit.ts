import { isKnownEventType } from '../../domain/events/index.js';
import { z } from './zod-openapi.js';
import { chars, jsonObject, logPosition, logPositionDoc, optionalPageLimit, outDateTime, pageLimit, rewardKeyLookup } from './common.js';

export const eventsQuery = z.object({
  after: logPosition.optional().openapi({
    ...logPositionDoc,
    description: 'Exclusive: events after this position (`next_after` of the previous page); with `order=desc`, events before it',
  }),
  limit: pageLimit(1000, 100),
  stream: chars(1, 300).optional().openapi({ description: 'Exact stream name, e.g. user-alice' }),
  order: z
    .enum(['asc', 'desc'])
    .default('asc')
    .openapi({ description: '`asc`: commit order (the default). `desc`: newest first, only with `stream` (400 `BAD_REQUEST` otherwise)' }),
  stream_prefix: chars(1, 300).optional().openapi({ description: 'Stream name prefix, e.g. user- (all users); not with `stream` (400 `BAD_REQUEST`)' }),
  type: chars(1, 2000)
    .transform((value) => value.split(','))
    .pipe(
      z.array(chars(1, 100).refine(isKnownEventType, { error: (issue) => `no event type ${issue.input} (the types are listed in docs/events.md)` })).max(50),
    )
    .optional()
    .openapi({
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      pattern: '^[^,]{1,100}(,[^,]{1,100}){0,49}$',
      description:
        'An event type, or a comma-separated list of up to 50 (any of them), each one of the types docs/events.md lists (400 `BAD_REQUEST` for another, as `npm run export-events --type`)',
    }),
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

export const ledgerQuery = z.object({
  key: rewardKeyLookup.optional(),
  limit: optionalPageLimit(1000).openapi({ description: 'At most this many rows, with `next_after` to read on; without it, every row' }),
  after: z
    .string()
    .regex(/^[0-9]{20}(\.1)?$/, 'must be the next_after of a previous page')
    .optional()
    .openapi({ description: 'Exclusive: rows after this cursor (`next_after` of the previous page)' }),
});

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
        grant_id: z
          .string()
          .optional()
          .openapi({ description: 'grant, expire, clawback and shortfall rows: the grant (an expiry: the entry it forfeited; a clawback: the grant revoked)' }),
        entry_id: z.string().optional().openapi({ description: 'grant rows: the entry the grant opened or added to (SPEC §5.3)' }),
        debits: z
          .array(z.object({ grant_id: z.string(), credits: z.number().int() }))
          .optional()
          .openapi({ description: 'withdraw and clawback rows: the entries drained (`grant_id` names an entry) and how many credits each gave' }),
        shortfall: z
          .number()
          .int()
          .optional()
          .openapi({ description: 'shortfall rows: the credits of the revoked grant already spent (the row’s delta is 0)' }),
        cause: jsonObject,
      }),
    ),
    next_after: z
      .string()
      .nullable()
      .openapi({ description: 'With `limit`: pass it as `after` to read the next page; null on the last page (and always without `limit`)' }),
  })
  .openapi('CreditLedger');
