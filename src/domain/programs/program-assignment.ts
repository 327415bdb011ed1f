import { createHash } from 'node:crypto';

/** Bucket 0–99 of a user: first 4 bytes of SHA-256(app_user_id) as unsigned int, mod 100. */
export function bucketOf(appUserId: string): number {
  return createHash('sha256').update(appUserId, 'utf8').digest().readUInt32BE(0) % 100;
}

/**
 * The program covering the user's bucket: programs, oldest first, cover consecutive bucket
 * ranges of their distribution_percentage; past the sum there is no program.
 */
export function assignProgram<P extends { id: string; distribution_percentage: number; created_at: string }>(appUserId: string, programs: P[]): P | null {
  const bucket = bucketOf(appUserId);
  const ordered = [...programs].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  let upper = 0;
  for (const program of ordered) {
    upper += program.distribution_percentage;
    if (bucket < upper) return program;
  }
  return null;
}
