import type { Decision, Evolver, NewDomainEvent } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { PoolCode } from '../events/pool-events.js';

/** A reward's pool of one-time codes: which are free, which grants wait, who got what. */
export interface PoolState {
  codes: PoolCode[];
  /** value → the grant it went to (`poolGrantKey`). */
  assigned: Record<string, string>;
  /** grant (`poolGrantKey`) → code value. */
  byGrant: Record<string, string>;
  /** Grants waiting for a code, in grant order, with when their entry expires (null: never). */
  waiting: { grant_id: string; app_user_id: string; expires_at: string | null }[];
  /** Grants revoked while they waited (`poolGrantKey`): a repeated request of one gets nothing. */
  withdrawn: Record<string, true>;
}

type Waiting = PoolState['waiting'][number];

/** A waiting grant whose entry has expired gets no code: the user could never see it. */
function stillWaiting(waiting: Waiting, now: Date): boolean {
  return waiting.expires_at === null || Date.parse(waiting.expires_at) > now.getTime();
}

/**
 * A grant as the pool knows it: grant ids are unique within one user's stream only (a manual
 * grant's is `manual:<operation_id>/n`, and two users may use one operation id), so the pool
 * tells grants apart by user and grant id together.
 */
export function poolGrantKey(appUserId: string, grantId: string): string {
  return `${appUserId}\u0000${grantId}`;
}

const keyOf = (waiting: Waiting) => poolGrantKey(waiting.app_user_id, waiting.grant_id);

export function initialPoolState(): PoolState {
  return { codes: [], assigned: {}, byGrant: {}, waiting: [], withdrawn: {} };
}

export function evolvePool(state: PoolState, event: DomainEvent): PoolState {
  switch (event.type) {
    case 'PoolCodesAdded':
      return { ...state, codes: [...state.codes, ...event.data.codes] };
    case 'PoolCodeRequested': {
      const { grant_id, app_user_id, expires_at } = event.data;
      return { ...state, waiting: [...state.waiting, { grant_id, app_user_id, expires_at }] };
    }
    case 'PoolCodeAssigned': {
      const grant = poolGrantKey(event.data.app_user_id, event.data.grant_id);
      return {
        ...state,
        assigned: { ...state.assigned, [event.data.code.value]: grant },
        byGrant: { ...state.byGrant, [grant]: event.data.code.value },
        waiting: state.waiting.filter((waiting) => keyOf(waiting) !== grant),
      };
    }
    case 'PoolRequestWithdrawn': {
      const grant = poolGrantKey(event.data.app_user_id, event.data.grant_id);
      return { ...state, waiting: state.waiting.filter((waiting) => keyOf(waiting) !== grant), withdrawn: { ...state.withdrawn, [grant]: true } };
    }
    default:
      return state;
  }
}

// 3: grants are keyed by user and grant id (poolGrantKey), and waiting ones keep their expiry.
// 4: revoked waiting grants are remembered (a reaction repeating the grant's request gets nothing).
export const poolEvolver: Evolver<PoolState> = { name: 'pool', version: 4, initialState: initialPoolState, evolve: evolvePool };

/** Oldest unused code that is still valid at `now`. */
function nextFreeCode(state: PoolState, now: Date, taken: Set<string>): PoolCode | undefined {
  return state.codes.find((code) => state.assigned[code.value] === undefined && !taken.has(code.value) && Date.parse(code.expires_at) > now.getTime());
}

/** Adds codes not already in the pool, then serves waiting grants in grant order. */
export function decideAddPoolCodes(state: PoolState, codes: PoolCode[], now: Date): Decision<{ added: number; skipped: number }> {
  const known = new Set(state.codes.map((code) => code.value));
  const fresh: PoolCode[] = [];
  for (const code of codes) {
    if (known.has(code.value)) continue;
    known.add(code.value);
    fresh.push(code);
  }
  const events: NewDomainEvent[] = [];
  if (fresh.length > 0) events.push({ type: 'PoolCodesAdded', data: { codes: fresh } });
  const withCodes = events.reduce(evolvePool, state);
  events.push(...serveWaiting(withCodes, now));
  return { events, result: { added: fresh.length, skipped: codes.length - fresh.length } };
}

function serveWaiting(state: PoolState, now: Date): NewDomainEvent[] {
  const events: NewDomainEvent[] = [];
  const taken = new Set<string>();
  for (const { grant_id, app_user_id } of state.waiting.filter((waiting) => stillWaiting(waiting, now))) {
    const code = nextFreeCode(state, now, taken);
    if (!code) break;
    taken.add(code.value);
    events.push({ type: 'PoolCodeAssigned', data: { grant_id, app_user_id, code } });
  }
  return events;
}

/**
 * A grant asks for a code: it gets the oldest usable one, or waits in line. Idempotent per grant,
 * and a grant revoked while it waited asks no more (reactions repeat requests after a failure).
 */
export function decideRequestPoolCode(state: PoolState, grantId: string, appUserId: string, expiresAt: string | null, now: Date): Decision<null> {
  const grant = poolGrantKey(appUserId, grantId);
  if (state.byGrant[grant] !== undefined || state.withdrawn[grant] || state.waiting.some((waiting) => keyOf(waiting) === grant)) {
    return { events: [], result: null };
  }
  const waiting: Waiting = { grant_id: grantId, app_user_id: appUserId, expires_at: expiresAt };
  if (!stillWaiting(waiting, now)) return { events: [], result: null };
  const code = state.waiting.some((earlier) => stillWaiting(earlier, now)) ? undefined : nextFreeCode(state, now, new Set());
  if (code) return { events: [{ type: 'PoolCodeAssigned', data: { grant_id: grantId, app_user_id: appUserId, code } }], result: null };
  return { events: [{ type: 'PoolCodeRequested', data: waiting }], result: null };
}

/**
 * A grant was revoked: if it has no code yet, it gets none (a one-time code is not spent on an
 * entry its user has lost): it leaves the line, or, not asked for yet (the pools reaction can
 * trail the clawback), its request will find it withdrawn. A grant that has its code keeps it.
 */
export function decideWithdrawPoolRequest(state: PoolState, grantId: string, appUserId: string, now: Date): Decision<null> {
  const grant = poolGrantKey(appUserId, grantId);
  if (state.byGrant[grant] !== undefined || state.withdrawn[grant]) return { events: [], result: null };
  return { events: [{ type: 'PoolRequestWithdrawn', data: { grant_id: grantId, app_user_id: appUserId, withdrawn_at: now.toISOString() } }], result: null };
}

/** What an operator sees of a pool: codes left, handed out, expired unused, and grants waiting. */
export interface PoolFigures {
  available: number;
  used: number;
  expired: number;
  waiting: number;
}

export function poolFigures(state: PoolState, now: Date): PoolFigures {
  const available = availableCodes(state, now);
  const used = Object.keys(state.assigned).length;
  return { available, used, expired: state.codes.length - available - used, waiting: state.waiting.filter((waiting) => stillWaiting(waiting, now)).length };
}

export function availableCodes(state: PoolState, now: Date): number {
  return state.codes.filter((code) => state.assigned[code.value] === undefined && Date.parse(code.expires_at) > now.getTime()).length;
}
