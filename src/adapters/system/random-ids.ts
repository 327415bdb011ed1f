import { randomInt } from 'node:crypto';
import { parse as parseUuid, v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import { pooledRandomBytes } from '../../application/pooled-random-bytes.js';
import { REFERRAL_CODE_ALPHABET, REFERRAL_CODE_LENGTH } from '../../domain/codes/referral-code.js';
import type { Ids } from '../../ports/ids.js';

/**
 * Namespace of this service's deterministic (UUIDv5) event ids, parsed once: `uuid` parses a
 * namespace given as text twice on every call (about 40% of a derived id's cost).
 */
const NAMESPACE = parseUuid('3f0f5a0e-6c1e-4b39-9a51-7d1c2b7e4a10');

/**
 * The millisecond and counter of the last UUIDv7 made, kept here because `uuid` keeps its own
 * only when it also draws the random bytes itself, one system call per id (about 4 µs, a fifth
 * of `npm run generate-events`). The rule is `uuid`'s (RFC 9562 §6.2, method 1): a new
 * millisecond starts the counter at a random 31-bit value; within one millisecond, or when the
 * clock goes back, the counter goes up by one (32 bits in the id), and its wrap to 0 moves the
 * millisecond on, so ids made later sort later.
 */
let lastMsecs = Number.NEGATIVE_INFINITY;
let lastSeq = 0;

export class RandomIds implements Ids {
  /**
   * UUIDv7: 74 random bits after a millisecond timestamp, so ids made later sort later. Event ids
   * are the log's unique key: time-ordered ones land on the last page of its index instead of a
   * random page of it (which, once the index outgrows the page cache, is a page read per append).
   */
  uuid(): string {
    const random = pooledRandomBytes(16);
    const now = Date.now();
    if (now > lastMsecs) {
      lastMsecs = now;
      lastSeq = random.readUInt32BE(6) & 0x7fffffff;
    } else {
      lastSeq = (lastSeq + 1) | 0;
      if (lastSeq === 0) lastMsecs += 1;
    }
    return uuidv7({ random, msecs: lastMsecs, seq: lastSeq });
  }

  derived(...parts: string[]): string {
    return uuidv5(parts.join('\u001f'), NAMESPACE);
  }

  referralCode(): string {
    let code = '';
    for (let i = 0; i < REFERRAL_CODE_LENGTH; i += 1) code += REFERRAL_CODE_ALPHABET[randomInt(REFERRAL_CODE_ALPHABET.length)];
    return code;
  }
}
