import { v5 as uuidv5 } from 'uuid';

/**
 * A user's account token (SPEC §11): UUIDv5 of its app_user_id in ACCOUNT_TOKEN_NAMESPACE. The
 * app passes it to StoreKit as `appAccountToken`, so App Store notifications name the user
 * without exposing its app_user_id.
 */
export function accountToken(appUserId: string, namespace: string): string {
  return uuidv5(appUserId, namespace);
}
