import ipaddr from 'ipaddr.js';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config.js';
import type { Clock } from '../../ports/clock.js';
import type { RateLimitStore } from '../../ports/rate-limit-store.js';
import { WINWINKIT_MOUNT } from '../compat/winwinkit-wire.js';
import { ApiError, toApiError } from '../errors.js';
import { FAILED_CLAIM_COST } from './claim-cost.js';
import { StoreRateLimiter } from './store-rate-limiter.js';

const FAILED_CLAIM_STATUSES = new Set([404, 422]);

/** The same routes under the WinWinKit-compatible mount share the native budgets (SPEC §15). */
const ON_MOUNT = `(?:${WINWINKIT_MOUNT})?`;
const CLAIM_PATH = new RegExp(`^${ON_MOUNT}/users/[^/]+/claim-code/?$`);
const USER_PATH = new RegExp(`^${ON_MOUNT}/users/([^/]+)`);
const USERS_PATH = new RegExp(`^${ON_MOUNT}/users/?$`);

/**
 * The budgets of SPEC §13, each a fixed window in the shared store. Reads and other commands
 * count per caller (client key + IP) and per `app_user_id`; claims count per `app_user_id`
 * (RATE_LIMIT_CLAIMS) and, as commands, per caller; a failed claim costs FAILED_CLAIM_COST on both.
 *
 * A request refused by any budget gives back what it took from the user's: only requests served
 * count against a user, so a caller over its budget cannot use up another user's. A body refused
 * before the limiter (not JSON, too large, another media type) still costs the caller its point
 * and carries the headers (`bodyRefusals`).
 */
type PolicyName = 'reads-caller' | 'reads-user' | 'commands-caller' | 'commands-user' | 'claims-user';

interface Policy {
  name: PolicyName;
  points: number;
  seconds: number;
  limiter: StoreRateLimiter;
}

interface Charge {
  policy: Policy;
  key: string;
  /** Points taken beyond what the request costs if it does not fail as a claim (given back by `settle`). */
  held: number;
  /** Ends this claim's hold in RateLimits' `holds` (once its outcome is known, or its response closes). */
  release?: () => void;
  /** Whether the response's close already ends this charge's current hold (`hold`). */
  releasedOnClose?: boolean;
  /** The counter as the headers show it. */
  outcome?: Outcome;
}

interface Outcome {
  policy: Policy;
  result: RateLimiterRes;
  limited: boolean;
}

declare global {
  namespace Express {
    interface Locals {
      /** The rate-limit counters this request was charged to, with what a claim holds until its outcome. */
      rateLimitCharges?: Charge[];
      /** Work to finish before the answer is written (src/http/route.ts): a claim's held points come back. */
      beforeReply?: () => Promise<void>;
    }
  }
}

/** A structured-field string (RFC 9651): the policy names are plain tokens, quoted as strings. */
const quoted = (name: string) => `"${name}"`;

/** How long a request over budget waits for the claims holding points on its counter (RateLimits, afterHolds). */
const HOLD_WAIT_MS = 1_000;

const holdKey = (charge: Charge) => `${charge.policy.name}|${charge.key}`;

export class RateLimits {
  private readonly policies: Record<PolicyName, Policy>;
  /** Claims of this process in flight that hold points on a counter (`policy|key`), each settled when its outcome is known. */
  private readonly holds = new Map<string, Set<Promise<void>>>();

  constructor(
    private readonly config: Config,
    store: RateLimitStore,
    clock: Clock,
  ) {
    const policy = (name: PolicyName, budget: { points: number; seconds: number }): Policy => ({
      name,
      points: budget.points,
      seconds: budget.seconds,
      limiter: new StoreRateLimiter({ keyPrefix: `rl:${name}`, points: budget.points, duration: budget.seconds, store, clock }),
    });
    this.policies = {
      'reads-caller': policy('reads-caller', config.RATE_LIMIT_READS),
      'reads-user': policy('reads-user', config.RATE_LIMIT_READS),
      'commands-caller': policy('commands-caller', config.RATE_LIMIT_COMMANDS),
      'commands-user': policy('commands-user', config.RATE_LIMIT_COMMANDS),
      'claims-user': policy('claims-user', config.RATE_LIMIT_CLAIMS),
    };
  }

  /**
   * The counters a request is charged to, the caller's first; none when it is not limited. The
   * limited paths are those that need a key (src/http/app.ts): only those have a caller.
   */
  private charges(req: Request, res: Response): Charge[] {
    const caller = res.locals.caller as Express.Locals['caller'] | undefined;
    if (!caller || (caller.kind === 'secret' && !this.config.RATE_LIMIT_SECRET)) return [];
    const read = req.method === 'GET' || req.method === 'HEAD';
    const claim = req.method === 'POST' && CLAIM_PATH.test(req.path);
    const held = claim ? FAILED_CLAIM_COST - 1 : 0;
    const charges: Charge[] = [{ policy: this.policies[read ? 'reads-caller' : 'commands-caller'], key: `${caller.actor}|${clientAddress(req)}`, held }];
    const userId = requestedUserOf(req);
    if (userId !== null) charges.push({ policy: this.policies[read ? 'reads-user' : claim ? 'claims-user' : 'commands-user'], key: userId, held });
    return charges;
  }

  /**
   * Charges the request one point per counter, a claim FAILED_CLAIM_COST (one store round trip);
   * over any budget → 429 RATE_LIMITED with Retry-After.
   */
  middleware(): RequestHandler {
    return async (req, res, next) => {
      const charges = this.charges(req, res);
      if (charges.length === 0) return next();
      const costs = charges.map((charge) => 1 + charge.held);
      res.locals.rateLimitCharges = charges;
      for (const charge of charges) this.hold(charge, res);
      let outcomes = await Promise.all(charges.map(({ policy, key, held }) => outcomeOf(policy, policy.limiter.consume(key, 1 + held))));
      outcomes = await Promise.all(outcomes.map((outcome, index) => (outcome.limited ? this.afterHolds(charges[index]!, outcome, res) : outcome)));
      let shown = outcomes;
      if (outcomes.some((outcome) => outcome.limited)) {
        // Refused, by any budget: the user's counters get all its points back (and the headers say
        // so). Only requests served count against a user, so neither a caller over its budget nor
        // callers refused while others' points were on the counter use up that user's budget.
        const refunded = await Promise.all(
          charges.slice(1).map((charge) => {
            const points = 1 + charge.held;
            charge.held = 0;
            return outcomeOf(charge.policy, charge.policy.limiter.reward(charge.key, points));
          }),
        );
        shown = [outcomes[0]!, ...refunded];
      }
      shown.forEach((outcome, index) => {
        charges[index]!.outcome = outcome;
      });
      setHeaders(res, shown);
      // The claim is done by then: a refund the store fails to take must not turn its answer into an error.
      res.locals.beforeReply = () => this.settle(res, false).catch(() => undefined);
      // Retry-After from the counters that refused, and from the others as the refund left them.
      refuseOver(
        res,
        outcomes.map((outcome, index) => (outcome.limited ? outcome : shown[index]!)),
        costs,
      );
      next();
    };
  }

  /**
   * A counter over budget while claims of this process hold points on it (FAILED_CLAIM_COST, taken
   * up front): those that succeed give 4 of their 5 back within milliseconds. The request waits
   * for them and is checked again, as often as it is over budget while others hold points (for at
   * most HOLD_WAIT_MS in all), so a burst of claims from one caller (many users behind one address)
   * is refused by what its claims cost, not by what they held while running: waiters checked
   * again together take 5 each and may overflow once more, then wait for those that passed.
   * Failed claims keep what they held: a burst of guesses is refused as before. A request refused
   * so gives back all it took while it waits (claims refused together must not wait for one
   * another, nor fill the budget with the point each would keep: 36 of 40 claims waiting on 23
   * points left kept 36, and only 4 passed), and takes it again when checked again.
   */
  private async afterHolds(charge: Charge, outcome: Outcome, res: Response): Promise<Outcome> {
    const held = charge.held;
    const deadline = Date.now() + HOLD_WAIT_MS;
    let current = outcome;
    while (current.limited) {
      charge.release?.();
      const others = [...(this.holds.get(holdKey(charge)) ?? [])];
      const waitMs = deadline - Date.now();
      if (others.length === 0 || waitMs <= 0) return current;
      await charge.policy.limiter.reward(charge.key, 1 + held);
      charge.held = 0;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      });
      await Promise.race([Promise.all(others), timeout]);
      clearTimeout(timer);
      charge.held = held;
      this.hold(charge, res);
      current = await outcomeOf(charge.policy, charge.policy.limiter.consume(charge.key, 1 + held));
    }
    return current;
  }

  /** Records a claim's hold on its counter until its outcome is known (or its response closes). */
  private hold(charge: Charge, res: Response): void {
    if (charge.held === 0) return;
    const id = holdKey(charge);
    const pending = this.holds.get(id) ?? new Set<Promise<void>>();
    this.holds.set(id, pending);
    let settled!: () => void;
    const hold = new Promise<void>((resolve) => {
      settled = resolve;
    });
    pending.add(hold);
    charge.release = () => {
      charge.release = undefined;
      pending.delete(hold);
      if (pending.size === 0 && this.holds.get(id) === pending) this.holds.delete(id);
      settled();
    };
    if (!charge.releasedOnClose) {
      // One listener per charge, however often it holds again: it ends whichever hold is current.
      charge.releasedOnClose = true;
      res.once('close', () => charge.release?.());
    }
  }

  /**
   * A claim's outcome: one that failed as a claim keeps what it held; any other answer gives it
   * back before it is written, and its headers show the counters after that.
   */
  private async settle(res: Response, failedClaim: boolean): Promise<void> {
    const charges = res.locals.rateLimitCharges ?? [];
    try {
      await this.giveBack(res, charges, failedClaim);
    } finally {
      for (const charge of charges) charge.release?.();
    }
  }

  private async giveBack(res: Response, charges: Charge[], failedClaim: boolean): Promise<void> {
    if (failedClaim || !charges.some((charge) => charge.held > 0) || res.headersSent) return;
    await Promise.all(
      charges.map(async (charge) => {
        if (charge.held === 0) return;
        const points = charge.held;
        charge.held = 0;
        charge.outcome = await outcomeOf(charge.policy, charge.policy.limiter.reward(charge.key, points));
      }),
    );
    if (!res.headersSent)
      setHeaders(
        res,
        charges.flatMap((charge) => (charge.outcome ? [charge.outcome] : [])),
      );
  }

  /**
   * A body refused before the limiter ran (400 BODY_INVALID, 413, 415, or a body that cannot be
   * stored): it costs the caller its point like any request, with the headers, and is 429 over budget.
   */
  bodyRefusals(): ErrorRequestHandler {
    return async (error, req, res, next) => {
      const status = toApiError(error)?.status;
      const refused = status !== undefined && BODY_REFUSALS.has(status) && res.locals.rateLimitCharges === undefined && !res.headersSent;
      const [caller] = refused ? this.charges(req, res) : [];
      if (!caller) return next(error);
      try {
        const outcome = await outcomeOf(caller.policy, caller.policy.limiter.consume(caller.key, 1));
        setHeaders(res, [outcome]);
        refuseOver(res, [outcome]);
      } catch (limited) {
        return next(limited);
      }
      next(error);
    };
  }

  /** An error answer settles the claim before the error handler writes it: a 404 or 422 keeps FAILED_CLAIM_COST. */
  claimOutcomes(): ErrorRequestHandler {
    return async (error, req, res, next) => {
      const status = toApiError(error)?.status ?? null;
      const failedClaim = req.method === 'POST' && CLAIM_PATH.test(req.path) && status !== null && FAILED_CLAIM_STATUSES.has(status);
      try {
        await this.settle(res, failedClaim);
      } catch {
        // The claim's own answer matters more than the refund; the store's failure shows on the next request.
      }
      next(error);
    };
  }
}

/** The user a request is about: the path's `app_user_id`, or the body's on POST /users. */
function requestedUserOf(req: Request): string | null {
  const match = USER_PATH.exec(req.path);
  if (match) {
    try {
      return decodeURIComponent(match[1]!);
    } catch {
      return null;
    }
  }
  if (req.method === 'POST' && USERS_PATH.test(req.path)) {
    const body = req.body as { app_user_id?: unknown } | undefined;
    return typeof body?.app_user_id === 'string' && body.app_user_id.length > 0 ? body.app_user_id : null;
  }
  return null;
}

/** Statuses of a body refused before the limiter runs (src/http/app.ts, jsonBody). */
const BODY_REFUSALS = new Set([400, 413, 415]);

/**
 * Over any budget: 429 RATE_LIMITED, with Retry-After the longest wait of every counter the
 * request cannot pass now: those over, and those left with less room than the request takes
 * (`costs`, one per outcome; a user's claim budget spent while the caller's is over): a retry
 * before they reset would be refused again.
 */
function refuseOver(res: Response, outcomes: Outcome[], costs: number[] = outcomes.map(() => 1)): void {
  if (!outcomes.some((outcome) => outcome.limited)) return;
  const blocking = outcomes.filter((outcome, index) => outcome.limited || outcome.result.remainingPoints < costs[index]!);
  const waitMs = Math.max(...blocking.map((outcome) => outcome.result.msBeforeNext));
  res.setHeader('retry-after', String(Math.max(Math.ceil(waitMs / 1000), 1)));
  throw new ApiError('RATE_LIMITED', 'Too many requests; retry after the seconds in Retry-After (RateLimit names the budget)', null);
}

/** rate-limiter-flexible rejects with a RateLimiterRes when over budget, with an Error when the store failed. */
async function outcomeOf(policy: Policy, attempt: Promise<RateLimiterRes>): Promise<Outcome> {
  try {
    const result = await attempt;
    return { policy, result, limited: result.consumedPoints > policy.points };
  } catch (error) {
    if (error instanceof RateLimiterRes) return { policy, result: error, limited: true };
    throw error;
  }
}

/** The IETF draft's `RateLimit-Policy` (quota, window) and `RateLimit` (remaining, seconds to reset) per counter. */
function setHeaders(res: Response, outcomes: Outcome[]): void {
  res.setHeader('ratelimit-policy', outcomes.map(({ policy }) => `${quoted(policy.name)};q=${policy.points};w=${policy.seconds}`).join(', '));
  res.setHeader(
    'ratelimit',
    outcomes.map(({ policy, result }) => `${quoted(policy.name)};r=${result.remainingPoints};t=${Math.ceil(result.msBeforeNext / 1000)}`).join(', '),
  );
}

/**
 * The client's address as one caller, so that no spelling of it is a second budget: an IPv4
 * address written IPv4-mapped (`::ffff:10.0.0.2`, as a dual-stack socket or a proxy may give it)
 * is the same client as `10.0.0.2`; an IPv6 address counts by its /64, the network one subscriber
 * is given (SLAAC picks any address in it), written one way (`2001:db8:0:5::/64`, its four first groups in hex). Else, with
 * 2^64 addresses to pick from, one client would have a fresh budget per request.
 */
function clientAddress(req: Pick<Request, 'ip'>): string {
  const ip = req.ip ?? 'unknown';
  // IPv4, the common case, as it comes (0.05 µs; a parse of every address took 2 µs).
  if (IPV4.test(ip)) return ip;
  const mapped = IPV4_MAPPED.exec(ip)?.[1];
  if (mapped !== undefined) return mapped;
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  return `${ipaddr.IPv6.parse(ip)
    .parts.slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
