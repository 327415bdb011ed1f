import type { Decision, Evolver, NewDomainEvent } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { PoolCode } from '../events/pool-events.js';
import { isActiveAt } from '../rewards/expiry.js';

/**
 * A reward's pool of one-time codes, as far as its decisions need: the codes still free and the
 * grants waiting, bounded by what is live, not by how many codes went out (SPEC §7.5; issue #10).
 * What it remembers for ever (every value it was given, what each grant got) is in the pool
 * index (projections/pool-index.ts), which its commands look up: `known` below.
 */
export interface PoolState {
  /**
   * Codes not handed out yet, in the order added. One passed over as expired when a later code
   * was handed out stays too, up to EXPIRED_KEPT of them (the oldest added dropped first): it was
   * expired by the clock of that decision, and a clock that was ahead would otherwise have thrown
   * away codes still valid for good. Handed out oldest usable first, so a truly expired one is
   * only passed over again.
   */
  free: PoolCode[];
  /** Codes handed out, ever. */
  used: number;
  /** Codes that expired unused and left `free`. */
  expired: number;
  /**
   * Grants waiting for a code, in grant order (their grants' log positions; a request without
   * one where it arrived), with when their entry expires (null: never).
   */
  waiting: { grant_id: string; app_user_id: string; expires_at: string | null; grant_position: string | null }[];
}

/** What the pool index knows of a grant; null when the pool never heard of it. */
export interface KnownGrant {
  code: PoolCode | null;
  withdrawn: boolean;
}

type Waiting = PoolState['waiting'][number];

/** A waiting grant whose entry has expired gets no code: the user could never see it. */
function stillWaiting(waiting: Waiting, now: Date): boolean {
  return isActiveAt(waiting.expires_at, now);
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

/**
 * Codes passed over as expired that the state keeps (`PoolState.free`): a bound, so the state
 * never grows with history, and small, since every decision looks past them again.
 */
const EXPIRED_KEPT = 100;

function initialPoolState(): PoolState {
  return { free: [], used: 0, expired: 0, waiting: [] };
}

function evolvePool(state: PoolState, event: DomainEvent): PoolState {
  switch (event.type) {
    case 'PoolCodesAdded':
      return { ...state, free: [...state.free, ...event.data.codes] };
    case 'PoolCodeRequested': {
      const { grant_id, app_user_id, expires_at, grant_position } = event.data;
      return { ...state, waiting: inGrantOrder(state.waiting, { grant_id, app_user_id, expires_at, grant_position }) };
    }
    case 'PoolCodeAssigned': {
      const grant = poolGrantKey(event.data.app_user_id, event.data.grant_id);
      // It was the oldest usable code: the free ones before it were expired by the decision's clock.
      const at = state.free.findIndex((code) => code.value === event.data.code.value);
      const passedOver = at < 0 ? [] : state.free.slice(0, at);
      const dropped = Math.max(0, passedOver.length - EXPIRED_KEPT);
      return {
        free: at < 0 ? state.free : [...passedOver.slice(dropped), ...state.free.slice(at + 1)],
        used: state.used + 1,
        expired: state.expired + dropped,
        waiting: state.waiting.filter((waiting) => keyOf(waiting) !== grant),
      };
    }
    case 'PoolRequestWithdrawn': {
      const grant = poolGrantKey(event.data.app_user_id, event.data.grant_id);
      return { ...state, waiting: state.waiting.filter((waiting) => keyOf(waiting) !== grant) };
    }
    default:
      return state;
  }
}

/**
 * `line` with `waiting` in its place: after every grant made before it or at the same position
 * (and those without a position: asked before positions were kept, or by a retry that could not
 * tell), before the ones made later. A request can reach the pool after the request of a later
 * grant (a sender grant's is made by the pools reaction, a manual grant's before its answer):
 * the line stays in grant order all the same (SPEC §5.3). Looked for from the end: requests
 * almost always come in order, so a long line costs one comparison.
 */
function inGrantOrder(line: readonly Waiting[], waiting: Waiting): Waiting[] {
  if (waiting.grant_position === null) return [...line, waiting];
  const position = BigInt(waiting.grant_position);
  let at = line.length;
  while (at > 0) {
    const earlier = line[at - 1]!.grant_position;
    if (earlier === null || BigInt(earlier) <= position) break;
    at -= 1;
  }
  return [...line.slice(0, at), waiting, ...line.slice(at)];
}

// 3: grants are keyed by user and grant id (poolGrantKey), and waiting ones keep their expiry.
// 4: revoked waiting grants are remembered (a reaction repeating the grant's request gets nothing).
// 5: only free codes and waiting grants; what the pool remembers for ever is in the pool index.
// 6: the line is in grant order (grant_position), not in the order requests arrived.
// 7: codes passed over as expired stay free (up to EXPIRED_KEPT): a clock that was ahead discards fewer still valid.
export const poolEvolver: Evolver<PoolState> = { name: 'pool', version: 7, initialState: initialPoolState, evolve: evolvePool };

/** Oldest free code that is still valid at `now`. */
function nextFreeCode(state: PoolState, now: Date): PoolCode | undefined {
  return state.free.find((code) => isActiveAt(code.expires_at, now));
}

/**
 * Adds codes whose values the pool was never given (`known`: those it was, from the pool index)
 * nor repeated in the call, then serves waiting grants in grant order.
 */
export function decideAddPoolCodes(state: PoolState, codes: PoolCode[], known: ReadonlySet<string>, now: Date): Decision<{ added: number; skipped: number }> {
  const seen = new Set(known);
  const fresh: PoolCode[] = [];
  for (const code of codes) {
    if (seen.has(code.value)) continue;
    seen.add(code.value);
    fresh.push(code);
  }
  const events: NewDomainEvent[] = [];
  if (fresh.length > 0) events.push({ type: 'PoolCodesAdded', data: { codes: fresh } });
  const withCodes = events.reduce(evolvePool, state);
  events.push(...serveWaiting(withCodes, now));
  return { events, result: { added: fresh.length, skipped: codes.length - fresh.length } };
}

function serveWaiting(state: PoolState, now: Date): NewDomainEvent[] {
  // The usable codes once, oldest first, each handed to the next grant in line: one pass however
  // many codes were passed over as expired or grants wait.
  const usable = state.free.filter((code) => isActiveAt(code.expires_at, now));
  const line = state.waiting.filter((waiting) => stillWaiting(waiting, now));
  return line.slice(0, usable.length).map(({ grant_id, app_user_id }, index) => ({
    type: 'PoolCodeAssigned',
    data: { grant_id, app_user_id, code: usable[index]! },
  }));
}

/**
 * A grant asks for a code: it gets the oldest usable one, or waits in line. Idempotent per grant
 * (`known`: what the pool index has of it), and a grant revoked while it waited asks no more
 * (reactions repeat requests after a failure). The result is the grant's code, when it has one.
 */
export function decideRequestPoolCode(state: PoolState, grant: PoolRequest, now: Date, known: KnownGrant | null): Decision<PoolCode | null> {
  const { grant_id: grantId, app_user_id: appUserId } = grant;
  const key = poolGrantKey(appUserId, grantId);
  if (known?.code) return { events: [], result: known.code };
  if (known?.withdrawn || state.waiting.some((waiting) => keyOf(waiting) === key)) return { events: [], result: null };
  const waiting: Waiting = {
    grant_id: grantId,
    app_user_id: appUserId,
    expires_at: grant.expires_at,
    grant_position: grant.position === null ? null : grant.position.toString(),
  };
  if (!stillWaiting(waiting, now)) return { events: [], result: null };
  const code = state.waiting.some((earlier) => stillWaiting(earlier, now)) ? undefined : nextFreeCode(state, now);
  if (code) return { events: [{ type: 'PoolCodeAssigned', data: { grant_id: grantId, app_user_id: appUserId, code } }], result: code };
  return { events: [{ type: 'PoolCodeRequested', data: waiting }], result: null };
}

/**
 * A grant was revoked: if it has no code yet, it gets none (a one-time code is not spent on an
 * entry its user has lost): it leaves the line, or, not asked for yet (the pools reaction can
 * trail the clawback), its request will find it withdrawn. A grant that has its code keeps it.
 */
export function decideWithdrawPoolRequest(grantId: string, appUserId: string, now: Date, known: KnownGrant | null): Decision<null> {
  if (known?.code || known?.withdrawn) return { events: [], result: null };
  return { events: [{ type: 'PoolRequestWithdrawn', data: { grant_id: grantId, app_user_id: appUserId, withdrawn_at: now.toISOString() } }], result: null };
}

/**
 * A grant's request for a code: when its entry expires (null: never), and the log position of
 * its grant (null when unknown: a retry of a command that wrote nothing; it goes to the end of
 * the line).
 */
export interface PoolRequest {
  grant_id: string;
  app_user_id: string;
  expires_at: string | null;
  position: bigint | null;
}

/** What a grant's life asks of its pool's line: a code once granted, to leave it once revoked. */
export type LineChange = ({ kind: 'request' } & PoolRequest) | { kind: 'withdraw'; grant_id: string; app_user_id: string };

/**
 * Grants' requests and withdrawals for one pool, in log order (a page of the pools reaction),
 * each decided on the state the ones before it left, as one command each would be, in one
 * decision: one append per pool, not one per grant. `known`: the pool index's record of these
 * grants (by `poolGrantKey`); what an earlier change did to a grant counts for a later one, so a
 * grant asked for twice gets one code. `codes[i]`: change i's code, when it has one;
 * `causes[j]`: the change whose event j is.
 */
export function decideLineChanges(
  state: PoolState,
  changes: readonly LineChange[],
  now: Date,
  known: ReadonlyMap<string, KnownGrant>,
): Decision<{ codes: (PoolCode | null)[]; causes: number[] }> {
  const record = new Map(known);
  const events: NewDomainEvent[] = [];
  const codes: (PoolCode | null)[] = [];
  const causes: number[] = [];
  let current = state;
  for (const [index, change] of changes.entries()) {
    const key = poolGrantKey(change.app_user_id, change.grant_id);
    const before = record.get(key) ?? null;
    const decision =
      change.kind === 'request'
        ? decideRequestPoolCode(current, change, now, before)
        : decideWithdrawPoolRequest(change.grant_id, change.app_user_id, now, before);
    for (const event of decision.events) {
      events.push(event);
      causes.push(index);
      current = evolvePool(current, event);
    }
    codes.push(decision.result);
    if (decision.result) record.set(key, { code: decision.result, withdrawn: false });
    else if (change.kind === 'withdraw' && decision.events.length > 0) record.set(key, { code: null, withdrawn: true });
  }
  return { events, result: { codes, causes } };
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
  return {
    available,
    used: state.used,
    expired: state.expired + state.free.length - available,
    waiting: state.waiting.filter((waiting) => stillWaiting(waiting, now)).length,
  };
}

export function availableCodes(state: PoolState, now: Date): number {
  return state.free.filter((code) => isActiveAt(code.expires_at, now)).length;
}
