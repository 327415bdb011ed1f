import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { assignProgram, bucketOf } from '../../../src/domain/programs/program-assignment.js';

/** Computed here independently: the first 4 bytes of SHA-256 as a big-endian unsigned int, mod 100. */
function expectedBucket(appUserId: string): number {
  const digest = createHash('sha256').update(Buffer.from(appUserId, 'utf8')).digest();
  const first4 = ((digest[0]! << 24) >>> 0) + (digest[1]! << 16) + (digest[2]! << 8) + digest[3]!;
  return first4 % 100;
}

/** A user id whose bucket is `bucket`. */
function userInBucket(bucket: number): string {
  for (let i = 0; ; i += 1) {
    const id = `user-${i}`;
    if (expectedBucket(id) === bucket) return id;
  }
}

interface P {
  id: string;
  distribution_percentage: number;
  created_at: string;
}

const program = (id: string, percentage: number, createdAt: string): P => ({ id, distribution_percentage: percentage, created_at: createdAt });

describe('program assignment (SPEC §4)', () => {
  describe('bucketOf', () => {
    it('matches an independent computation for many ids (ASCII, unicode, long)', () => {
      const ids = [
        'a',
        'ann',
        'user-1',
        '$RCAnonymousID:8a2f0e1c4b5d6e7f',
        'Zoë-ünïcödé',
        '🙂 emoji',
        'x'.repeat(128),
        ...Array.from({ length: 200 }, (_, i) => `u${i}`),
      ];
      for (const id of ids) expect(bucketOf(id), id).to.equal(expectedBucket(id));
    });

    it('uses the digest as unsigned: ids whose first byte has the high bit set', () => {
      const high = Array.from({ length: 500 }, (_, i) => `h${i}`).filter((id) => createHash('sha256').update(id).digest()[0]! >= 0x80);
      expect(high.length).to.be.greaterThan(0);
      for (const id of high) {
        expect(bucketOf(id), id).to.equal(expectedBucket(id));
        expect(bucketOf(id)).to.be.within(0, 99);
      }
    });

    it('a known vector: sha256("abc") starts with ba7816bf → 3128432319 mod 100 = 19', () => {
      expect(bucketOf('abc')).to.equal(19);
    });

    it('is stable and spreads ids over 0–99', () => {
      const buckets = new Set(Array.from({ length: 3000 }, (_, i) => bucketOf(`spread-${i}`)));
      expect(buckets.size).to.equal(100);
      expect(bucketOf('ann')).to.equal(bucketOf('ann'));
    });
  });

  describe('assignProgram', () => {
    const first = program('first', 30, '2026-01-01T00:00:00.000Z');
    const second = program('second', 20, '2026-01-02T00:00:00.000Z');
    const third = program('third', 10, '2026-01-03T00:00:00.000Z');

    it('covers consecutive ranges in creation order: [0,30) first, [30,50) second, [50,60) third', () => {
      const programs = [third, first, second]; // given out of order on purpose
      const cases: [number, string | null][] = [
        [0, 'first'],
        [29, 'first'],
        [30, 'second'],
        [49, 'second'],
        [50, 'third'],
        [59, 'third'],
        [60, null],
        [99, null],
      ];
      for (const [bucket, expected] of cases) {
        const id = userInBucket(bucket);
        expect(assignProgram(id, programs)?.id ?? null, `bucket ${bucket}`).to.equal(expected);
      }
    });

    it('no program past the sum, and none without programs', () => {
      expect(assignProgram(userInBucket(0), [])).to.equal(null);
      expect(assignProgram(userInBucket(10), [program('p', 10, '2026-01-01T00:00:00.000Z')])).to.equal(null);
      expect(assignProgram(userInBucket(9), [program('p', 10, '2026-01-01T00:00:00.000Z')])?.id).to.equal('p');
    });

    it('a 0% program takes no bucket', () => {
      const programs = [program('zero', 0, '2026-01-01T00:00:00.000Z'), program('all', 100, '2026-01-02T00:00:00.000Z')];
      expect(assignProgram(userInBucket(0), programs)?.id).to.equal('all');
      expect(assignProgram(userInBucket(99), programs)?.id).to.equal('all');
    });

    it('100% covers every bucket', () => {
      const programs = [program('all', 100, '2026-01-01T00:00:00.000Z')];
      for (const bucket of [0, 50, 99]) expect(assignProgram(userInBucket(bucket), programs)?.id).to.equal('all');
    });

    it('returns the program object it was given', () => {
      const programs = [first];
      expect(assignProgram(userInBucket(0), programs)).to.equal(first);
    });
  });
});
