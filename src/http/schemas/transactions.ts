import { TRANSACTION_PROVIDERS } from '../../domain/events/transaction-events.js';
import { z } from './zod-openapi.js';
import { chars, orNull, outDateTime, uuid } from './common.js';

/** Optional string fields the SDKs send only when they have a value: absent or null both mean "none". */
const optionalString = <T extends z.ZodTypeAny>(schema: T) => orNull(schema, 'string').optional();

export const appStoreTransactionBody = z
  .object({
    original_transaction_id: z
      .string()
      .regex(/^[0-9]{1,32}$/, 'must be 1 to 32 digits')
      .openapi({ description: "StoreKit's originalTransactionId", example: '2000000123456789' }),
    app_account_token: optionalString(uuid.openapi({ description: 'StoreKit 2 appAccountToken (recorded with the link)' })),
  })
  .openapi('AppStoreTransactionRequest');

export const googlePlayTransactionBody = z
  .object({
    purchase_token: chars(1, 4096).openapi({ description: "Google Play's purchaseToken" }),
    obfuscated_external_account_id: optionalString(
      chars(0, 4096).openapi({ description: 'What the app set with setObfuscatedAccountId (recorded with the link)' }),
    ),
  })
  .openapi('GooglePlayTransactionRequest');

const transactionOut = z
  .object({
    provider: z.enum(TRANSACTION_PROVIDERS),
    transaction_id: z.string().openapi({ description: 'originalTransactionId (App Store) or purchase token (Google Play)' }),
    app_account_token: z.string().nullable(),
    obfuscated_external_account_id: z.string().nullable(),
  })
  .strict();

export const transactionLinkOut = transactionOut.extend({ linked_at: outDateTime }).strict();
export const refusedAttemptOut = transactionOut.extend({ attempted_at: outDateTime }).strict();

export const userTransactionsOut = z
  .object({
    app_user_id: z.string(),
    links: z.array(transactionLinkOut).openapi({ description: 'Transactions linked to this user, oldest first' }),
    refused_attempts: z
      .array(refusedAttemptOut.extend({ linked_app_user_id: z.string().openapi({ description: 'The user the transaction stays linked to' }) }).strict())
      .openapi({ description: "This user's attempts to link a transaction already linked to another user, oldest first (each recorded once)" }),
  })
  .strict()
  .openapi('UserTransactions');
