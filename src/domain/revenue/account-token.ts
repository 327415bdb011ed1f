import { v5 as uuidv5 } from 'uuid';

/**
 * A user's account token (SPEC §11): UUIDv5 of its app_user_id in ACCOUNT_TOKEN_NAMESPACE. The
 * app passes it to StoreKit as `appAccountToken`, so App Store notifications name the user
 * without exposing its app_user_id.
 */
export function accountToken(appUserId: string, namespace: string): string {
  return uuidv5(appUserId, namespace);
}

let namespaceInUse: string | null = null;

/**
 * The namespace the revenue index (projections/revenue-index.ts) computes tokens in: set once
 * at start from the configuration; scripts that fold the log read the same environment variable.
 * Changing it needs a replay of that read model.
 */
export function useAccountTokenNamespace(namespace: string): void {
  namespaceInUse = namespace.toLowerCase();
}

export function accountTokenNamespace(fallback: string): string {
  return namespaceInUse ?? process.env.ACCOUNT_TOKEN_NAMESPACE?.toLowerCase() ?? fallback;
}
