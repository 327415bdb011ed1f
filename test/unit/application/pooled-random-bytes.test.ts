import { expect } from 'chai';
import { newDataKeyBytes, pooledRandomBytes } from '../../../src/application/pooled-random-bytes.js';

describe('pooledRandomBytes', () => {
  it('hands out each byte of the pool once: 3,000 slices of 16 bytes, across several refills, are all different', () => {
    const slices = Array.from({ length: 3000 }, () => pooledRandomBytes(16));
    for (const slice of slices) expect(slice.length).to.equal(16);
    expect(new Set(slices.map((slice) => slice.toString('hex'))).size).to.equal(3000);
  });

  it('keeps a slice unchanged after the pool is refilled', () => {
    const kept = pooledRandomBytes(12);
    const copy = Buffer.from(kept);
    for (let index = 0; index < 2000; index += 1) pooledRandomBytes(12);
    expect(kept.equals(copy)).to.equal(true);
  });

  it('serves sizes of any length, larger than the pool too', () => {
    expect(pooledRandomBytes(1).length).to.equal(1);
    expect(pooledRandomBytes(10_000).length).to.equal(10_000);
  });
});

describe('newDataKeyBytes', () => {
  it('makes 32 random bytes in memory of their own: zeroing a key touches nothing else', () => {
    const keys = Array.from({ length: 600 }, () => newDataKeyBytes());
    expect(new Set(keys.map((key) => key.toString('hex'))).size).to.equal(600);
    for (const key of keys) {
      expect(key.length).to.equal(32);
      expect(key.buffer.byteLength).to.equal(32);
    }
    const [first, second] = keys;
    const secondBefore = Buffer.from(second!);
    first!.fill(0);
    expect(second!.equals(secondBefore)).to.equal(true);
  });

  it('leaves no copy of a new key in the pool', () => {
    const key = newDataKeyBytes();
    const next = pooledRandomBytes(1);
    const pool = Buffer.from(next.buffer, 0, next.buffer.byteLength);
    expect(pool.indexOf(key)).to.equal(-1);
  });
});
