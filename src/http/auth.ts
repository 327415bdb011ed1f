import { scryptSync, timingSafeEqual } from 'node:crypto';
import { secretDigest as digest } from '../adapters/system/same-secret.js';
import type { RequestHandler } from 'express';
import { ApiError } from './errors.js';

export type KeyKind = 'client' | 'secret';

export interface Caller {
  kind: KeyKind;
  /** `client:<label>` (keyLabel): names the key in event metadata without revealing it. */
  actor: string;
}

/** Labels already derived, by key: a process derives each once, however many apps it builds. */
const labels = new Map<string, string>();

/**
 * What names a key in event metadata (docs/events.md): 12 hex digits of a slow hash of it, so
 * that a reader of the log or an export pays tens of milliseconds for each guess of a key tested
 * against it (a plain SHA-256 prefix cost nanoseconds), while an operator can still tell which of
 * its keys it was. A weak key stays weak: generate keys (README, Configuration).
 */
export function keyLabel(key: string): string {
  let label = labels.get(key);
  if (label === undefined) {
    label = scryptSync(key, 'referral-rewards actor', 6, { N: 16_384, r: 8, p: 1 }).toString('hex');
    labels.set(key, label);
  }
  return label;
}

/** Checks `x-api-key` against configured keys in constant time (hashes have equal length). */
export class ApiKeys {
  private readonly keys: { kind: KeyKind; digest: Buffer; actor: string }[];

  constructor(clientKeys: string[], secretKeys: string[]) {
    const entry = (kind: KeyKind) => (key: string) => ({ kind, digest: digest(key), actor: `${kind}:${keyLabel(key)}` });
    this.keys = [...secretKeys.map(entry('secret')), ...clientKeys.map(entry('client'))];
  }

  identify(key: string): Caller | null {
    const presented = digest(key);
    let found: Caller | null = null;
    for (const candidate of this.keys) {
      // Compare against every key so timing does not reveal which one matched.
      if (timingSafeEqual(candidate.digest, presented) && found === null) found = { kind: candidate.kind, actor: candidate.actor };
    }
    return found;
  }
}

declare global {
  namespace Express {
    interface Locals {
      caller: Caller;
      requestId: string;
      /** The JSON body's bytes are not UTF-8 (src/http/app.ts, jsonBody): refused by storableBody. */
      bodyNotUtf8?: boolean;
      /** Where the JSON body holds a number too small for a double (src/http/body-guard.ts, underflowingNumber): refused by storableBody. */
      underflowAt?: string | null;
    }
  }
}

export function requireKey(keys: ApiKeys): RequestHandler {
  return (req, res, next) => {
    const header = req.header('x-api-key');
    const caller = header ? keys.identify(header) : null;
    if (!caller) throw new ApiError('UNAUTHORIZED', header ? 'The API key is not valid' : 'The x-api-key header is required', 'header:x-api-key');
    res.locals.caller = caller;
    next();
  };
}

export const requireSecretKey: RequestHandler = (_req, res, next) => {
  if (res.locals.caller?.kind !== 'secret') throw new ApiError('FORBIDDEN', 'This operation needs a secret key', 'header:x-api-key');
  next();
};
