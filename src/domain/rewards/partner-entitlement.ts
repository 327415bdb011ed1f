import { isActiveAt } from './expiry.js';

/** A user's live reward entry that grants a partner entitlement (a `partner_entitlement` reward). */
export interface EntitlementEntry {
  entry_id: string;
  /** The entitlement its reward grants (null: the reward names none). */
  entitlement_id: string | null;
  /** When the entry ends; null = never. */
  expires_at: string | null;
}

/**
 * Until when the user still holds `entitlementId` once the entry `endedEntryId` has ended: the
 * latest end among its other active entries of that entitlement (`{ endsAt: null }` = lifetime),
 * or null when no other entry grants it.
 *
 * A partner's revoke ends every promotional grant of the entitlement (RevenueCat's
 * `revoke_promotionals`), so after revoking one entry's grant, the entitlement is granted again
 * until this end: two rewards granting one entitlement keep it until the later one ends.
 */
export function entitlementStillHeld(
  entries: readonly EntitlementEntry[],
  entitlementId: string,
  endedEntryId: string,
  now: Date,
): { endsAt: string | null } | null {
  let held: { endsAt: string | null } | null = null;
  for (const entry of entries) {
    if (entry.entry_id === endedEntryId || entry.entitlement_id !== entitlementId || !isActiveAt(entry.expires_at, now)) continue;
    if (entry.expires_at === null) return { endsAt: null };
    if (held === null || Date.parse(entry.expires_at) > Date.parse(held.endsAt!)) held = { endsAt: entry.expires_at };
  }
  return held;
}
