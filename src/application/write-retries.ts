/**
 * The retry policy of every write, in one place. A write is retried when it lost a race it
 * can win by trying again: another writer moved the stream it decided on (a conflict on the
 * exact expected revision), a random referral code turned out to be taken, or a claim's slot
 * was released by the claim repair while the request stalled. Each retry re-reads what the
 * decision depends on; after `WRITE_ATTEMPTS` attempts the last failure is reported.
 */
export const WRITE_ATTEMPTS = 12;

/** Jittered, growing pause before attempt `attempt + 1`, so racing writers spread out. */
function pauseAfter(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
}

/**
 * Runs `attempt` (numbered from 1) until it succeeds, or fails with an error `retryable` does
 * not accept, or `WRITE_ATTEMPTS` attempts have failed.
 */
export async function withWriteRetries<T>(retryable: (error: unknown) => boolean, attempt: (attempt: number) => Promise<T>): Promise<T> {
  for (let number = 1; ; number += 1) {
    try {
      return await attempt(number);
    } catch (error) {
      if (!retryable(error) || number >= WRITE_ATTEMPTS) throw error;
      await pauseAfter(number);
    }
  }
}
