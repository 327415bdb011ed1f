import { isEnvelope } from '../../application/privacy/personal-data-cipher.js';
import { CODE_TYPES } from '../../domain/events/code-events.js';
import { MAX_JSON_DEPTH } from '../body-guard.js';
import { sizeText } from '../body-limits.js';
import { z } from './zod-openapi.js';
import { appUserId, byKind, chars, codeLookup, dateTime, nullableJsonObject, operationId, orNull, outDateTime, rewardKeyToSpend } from './common.js';
import { activeEntryOut, deactivationBody, expiredEntryOut, referralProgramOut, rewardsGrantedOut } from './rewards.js';

const METADATA_MAX_BYTES = 16 * 1024;

export const upsertUserBody = z
  .object({
    app_user_id: appUserId,
    is_trial: z.boolean().nullable().optional(),
    is_premium: z.boolean().nullable().optional(),
    first_seen_at: orNull(dateTime, 'string').optional(),
    last_seen_at: orNull(dateTime, 'string').optional().openapi({ deprecated: true, description: 'Accepted and ignored; always returned as null.' }),
    metadata: nullableJsonObject
      .optional()
      .refine(
        (value) => value == null || Buffer.byteLength(JSON.stringify(value)) <= METADATA_MAX_BYTES,
        `must be at most ${sizeText(METADATA_MAX_BYTES)} serialized`,
      )
      // The shape the log stores an encrypted value in: taken as one, it would skip encryption and erasure.
      .refine((value) => !isEnvelope(value), 'must not be shaped like an encrypted value (a lone "$encrypted" key holding "pd1.…")')
      .openapi({
        type: ['object', 'null'],
        additionalProperties: true,
        description: `Any JSON object, kept as sent, at most ${sizeText(METADATA_MAX_BYTES)} serialized; numbers finite, integers within ±(2^53 − 1); nested less than ${MAX_JSON_DEPTH} levels deep, counted from the request body; not a lone \`"$encrypted"\` key holding a string starting \`pd1.\` (the form encrypted values take)`,
      }),
    payment_customer_id: orNull(chars(0, 255), 'string').optional(),
  })
  .openapi('UpsertUserRequest');

export const claimCodeBody = z.object({ code: codeLookup }).openapi('ClaimCodeRequest');

export const withdrawCreditsBody = z
  .object({
    key: rewardKeyToSpend,
    amount: z.number().int().min(1).max(2_147_483_647),
    operation_id: orNull(operationId, 'string').optional(),
  })
  .openapi('WithdrawCreditsRequest');

export const grantRewardBody = z
  .object({
    key: rewardKeyToSpend,
    operation_id: orNull(operationId, 'string').optional(),
    deactivation: deactivationBody.optional(),
  })
  .openapi('GrantRewardRequest');

export const userOut = z
  .object({
    app_user_id: z.string(),
    referral_code: z.string().nullable(),
    referral_code_link: z.string().nullable(),
    is_trial: z.boolean().nullable(),
    is_premium: z.boolean().nullable(),
    first_seen_at: outDateTime.nullable(),
    last_seen_at: z.null().openapi({ deprecated: true }),
    metadata: nullableJsonObject,
    payment_customer_id: z.string().nullable(),
    claim_code_eligibility: z.object({ eligible: z.boolean(), eligible_until: outDateTime.nullable() }).strict(),
    referred_by: z
      .object({ code: z.string().nullable(), type: z.enum(CODE_TYPES), claimed_at: outDateTime })
      .strict()
      .nullable(),
    stats: z.object({ claims: z.number().int(), conversions: z.number().int(), churns: z.number().int() }).strict(),
    rewards: z.object({ active: byKind(activeEntryOut).strict(), expired: byKind(expiredEntryOut).strict() }).strict(),
    // A union, not .nullable(): that would make the registered ReferralProgram itself nullable.
    referral_program: z.union([referralProgramOut, z.null()]),
  })
  .strict()
  .openapi('User');

export const affiliateOut = z
  .object({
    id: z.string(),
    status: z.string(),
    codes: z.array(z.object({ code: z.string(), code_link: z.string().nullable() }).strict()),
    stats: z.object({ claims: z.number().int(), conversions: z.number().int(), earnings: z.number() }).strict(),
  })
  .strict()
  .openapi('Affiliate');

export const withdrawResultOut = z
  .object({
    credits_available_at_start: z.number().int(),
    credits_available_at_end: z.number().int(),
    credits_requested_to_withdraw: z.number().int(),
    credits_withdrawn: z.number().int(),
  })
  .strict()
  .openapi('WithdrawResult');

export const userResponse = z.object({ data: z.object({ user: userOut }).strict() }).strict();
export const getUserResponse = z.object({ data: z.object({ user: userOut, affiliate: z.union([affiliateOut, z.null()]) }).strict() }).strict();
/** `GET /admin/users/{id}`: the same, the user's stats with `refunds` (SPEC §11: admin views only). */
export const operatorUserResponse = z
  .object({
    data: z
      .object({
        // The User's fields, stated again rather than extended: an extension of a strict schema
        // becomes an allOf whose parts each refuse the other's fields.
        user: z
          .object({
            ...userOut.shape,
            stats: z
              .object({
                claims: z.number().int(),
                conversions: z.number().int(),
                churns: z.number().int(),
                refunds: z.number().int().openapi({ description: "Refunds of conversions made through the user's referral code" }),
              })
              .strict(),
          })
          .strict()
          .openapi('OperatorUser'),
        affiliate: z.union([affiliateOut, z.null()]),
      })
      .strict(),
  })
  .strict();
export const claimResponse = z.object({ data: z.object({ rewards_granted: rewardsGrantedOut, user: userOut }).strict() }).strict();
export const withdrawResponse = z.object({ data: z.object({ withdraw_result: withdrawResultOut, user: userOut }).strict() }).strict();

/** The shapes the view builders produce, from these schemas. */
export type UserOut = z.input<typeof userOut>;
