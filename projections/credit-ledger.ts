import type { LoggedEvent } from '../src/application/event-log.js';
import type { GrantCause } from '../src/domain/events/user-events.js';
import { type Doc, type Projection, sortablePosition } from './projection.js';
import { appUserIdOf } from '../src/domain/events/index.js';

export const CREDIT_LEDGER = 'credit_ledger';

/**
 * A ledger row's order (`seq`): its event's position (sortablePosition), and for the second row
 * of a clawback's event (`shortfall`) the same with this suffix.
 */
const SECOND_ROW = '.1';

/** The last `seq` an event at `position` can give a row: every row up to that event is at or before it. */
export function lastLedgerSeqAt(position: bigint): string {
  return `${sortablePosition(position)}${SECOND_ROW}`;
}

function grantCause(cause: GrantCause, appUserId: string): Doc {
  switch (cause.type) {
    case 'claim':
      return { type: 'claim', description: `claim of code ${cause.code} by ${appUserId}`, code: cause.code, claim_id: cause.claim_id };
    case 'conversion':
      return { type: 'conversion', description: `conversion of ${appUserId} after claiming code ${cause.code}`, code: cause.code };
    case 'referrals':
      return {
        type: 'referrals',
        description: `${cause.variant} number ${cause.count} of a referred user (latest: ${cause.claimer}) in program ${cause.program_id}`,
        variant: cause.variant,
        count: cause.count,
        claimer: cause.claimer,
        program_id: cause.program_id,
      };
    case 'manual':
      return { type: 'manual', description: 'manual grant', operation_id: cause.operation_id };
  }
}

/**
 * Every credit movement of every user: one row per credit grant, withdrawal and expiry, with
 * the running balance the event itself recorded (so auditors can check the chain).
 */
export const creditLedgerProjection: Projection = {
  name: 'credit_ledger',
  version: 2,
  // A user's rows in order, and of one key (`?key=`) without walking the other keys' rows.
  collections: [
    {
      name: CREDIT_LEDGER,
      indexes: [
        ['app_user_id', 'seq'],
        ['app_user_id', 'key', 'seq'],
      ],
    },
  ],
  eventTypes: ['RewardGranted', 'CreditsWithdrawn', 'RewardExpired', 'RewardRevoked'],
  targets: (event) => {
    if (event.type === 'RewardRevoked') {
      if (event.data.kind !== 'credit') return [];
      // The credits taken back, and (when some were already spent) the unrecoverable shortfall.
      const refs = [{ collection: CREDIT_LEDGER, id: event.id }];
      if ((event.data.shortfall ?? 0) > 0) refs.push({ collection: CREDIT_LEDGER, id: `${event.id}:shortfall` });
      return refs;
    }
    const credit = event.type === 'CreditsWithdrawn' || ((event.type === 'RewardGranted' || event.type === 'RewardExpired') && event.data.kind === 'credit');
    return credit ? [{ collection: CREDIT_LEDGER, id: event.id }] : [];
  },
  evolve: (ref, _doc, event) => (event.type === 'RewardRevoked' ? revocationRow(ref.id.endsWith(':shortfall'), event) : ledgerRow(event)),
};

/** A clawback (SPEC §11): `clawback` debits what was unspent; `shortfall` (delta 0) records what was already spent. */
function revocationRow(shortfall: boolean, event: LoggedEvent): Doc | null {
  if (event.type !== 'RewardRevoked') return null;
  const { data } = event;
  const debited = data.debits.reduce((sum, debit) => sum + debit.credits, 0);
  const refund = `${data.refund.provider} notification ${data.refund.notification_id}`;
  return {
    app_user_id: appUserIdOf(event.stream),
    seq: `${sortablePosition(event.position)}${shortfall ? SECOND_ROW : ''}`,
    at: event.recordedAt.toISOString(),
    event_id: event.id,
    position: event.position.toString(),
    request_id: event.metadata.correlation_id ?? null,
    kind: shortfall ? 'shortfall' : 'clawback',
    key: data.reward_key,
    delta: shortfall ? 0 : -debited,
    balance_after: data.balance_after ?? 0,
    operation_id: null,
    grant_id: data.grant_id,
    ...(shortfall ? { shortfall: data.shortfall } : { debits: data.debits }),
    cause: {
      type: 'refund',
      description: shortfall
        ? `${data.shortfall} of the ${data.credits_granted} credits of grant ${data.grant_id} were already spent when ${data.claimer}'s purchase was refunded (${refund})`
        : `grant ${data.grant_id} revoked: ${data.claimer}'s converting purchase was refunded (${refund})`,
      claimer: data.claimer,
      refund: data.refund,
    },
  };
}

function ledgerRow(event: LoggedEvent): Doc | null {
  const appUserId = appUserIdOf(event.stream)!;
  const base = {
    app_user_id: appUserId,
    seq: sortablePosition(event.position),
    at: event.recordedAt.toISOString(),
    event_id: event.id,
    position: event.position.toString(),
    request_id: event.metadata.correlation_id ?? null,
  };
  switch (event.type) {
    case 'RewardGranted':
      return {
        ...base,
        kind: 'grant',
        key: event.data.reward_key,
        delta: event.data.credits ?? 0,
        balance_after: event.data.balance_after ?? 0,
        operation_id: event.data.cause.type === 'manual' ? event.data.cause.operation_id : null,
        grant_id: event.data.grant_id,
        // The entry the grant opened or added to (SPEC §5.3); debits and expiries name entries.
        entry_id: event.data.entry_id,
        cause: grantCause(event.data.cause, appUserId),
      };
    case 'CreditsWithdrawn':
      return {
        ...base,
        kind: 'withdraw',
        key: event.data.key,
        delta: -event.data.credits_withdrawn,
        balance_after: event.data.credits_available_at_end,
        operation_id: event.data.operation_id,
        debits: event.data.debits,
        cause: {
          type: 'withdrawal',
          description: `withdrawal request ${String(event.metadata.correlation_id)}: ${event.data.credits_requested_to_withdraw} requested`,
          requested: event.data.credits_requested_to_withdraw,
        },
      };
    case 'RewardExpired':
      return {
        ...base,
        kind: 'expire',
        key: event.data.reward_key,
        delta: -(event.data.credits_forfeited ?? 0),
        balance_after: event.data.balance_after ?? 0,
        operation_id: null,
        grant_id: event.data.grant_id,
        cause: { type: 'expiry', description: `grant ${event.data.grant_id} expired at ${event.data.expired_at}` },
      };
    default:
      return null;
  }
}
