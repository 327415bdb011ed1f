import { z } from 'zod';
import { isoDateTime } from '../rewards/reward-schemas.js';

/** The stores whose transactions an app links to its user (SPEC §15). */
export const TRANSACTION_PROVIDERS = ['app-store', 'google-play'] as const;
export type TransactionProvider = (typeof TRANSACTION_PROVIDERS)[number];

const linkFields = {
  provider: z.enum(TRANSACTION_PROVIDERS),
  /** App Store originalTransactionId, or Google Play purchase token. */
  transaction_id: z.string(),
  /** The user the app asked to link it to. */
  app_user_id: z.string(),
  /** What the app sent besides: App Store appAccountToken, Play obfuscatedExternalAccountId (null when absent). */
  app_account_token: z.string().nullable(),
  obfuscated_external_account_id: z.string().nullable(),
};

/**
 * Events of `transaction-{provider}-{key}`: one store transaction and who it belongs to. The
 * stream's first event is the link, so the first link wins, however many race for it.
 */
export const transactionEvents = {
  /** The transaction now belongs to `app_user_id` (the first link; it never moves). */
  TransactionLinked: z.object({ ...linkFields, linked_at: isoDateTime }),
  /** Another user asked for a transaction already linked to `linked_app_user_id`: kept for review, once per user. */
  TransactionLinkRefused: z.object({ ...linkFields, linked_app_user_id: z.string(), attempted_at: isoDateTime }),
};
