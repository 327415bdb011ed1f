import { REWARD_KINDS } from '../../domain/rewards/reward-kinds.js';
import { z } from './zod-openapi.js';

/** ISO 8601 date-time with offset; normalised to UTC with milliseconds. */
export const dateTime = z
  .string()
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
  .transform((value) => new Date(value).toISOString())
  .openapi({ type: 'string', format: 'date-time', example: '2026-01-02T03:04:05.678Z' });

export const outDateTime = z.string().openapi({ format: 'date-time', example: '2026-01-02T03:04:05.678Z' });

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export const appUserId = z
  .string()
  .min(1)
  .max(128)
  .refine((value) => !CONTROL.test(value), 'must not contain control characters')
  .openapi({ example: 'user-123' });

export const jsonObject = z.record(z.unknown()).openapi({ type: 'object', additionalProperties: true });

export const errorSchema = z
  .object({
    errors: z.array(
      z.object({
        code: z.string().openapi({ example: 'NOT_FOUND.USER' }),
        status: z.number().int(),
        message: z.string(),
        source: z.string().nullable().openapi({ example: '/amount' }),
      }),
    ),
  })
  .openapi('Errors');

/** An object with the six reward-kind arrays, each holding `item`. */
export function byKind<T extends z.ZodTypeAny>(item: T) {
  return z.object(Object.fromEntries(REWARD_KINDS.map((kind) => [kind, z.array(item)])) as Record<(typeof REWARD_KINDS)[number], z.ZodArray<T>>);
}
