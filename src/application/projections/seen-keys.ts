/**
 * A fixed-size set of strings that may answer "maybe" for a string it never saw (a Bloom
 * filter), never "no" for one it did. The replay remembers with it which documents it has
 * written, in 8 MiB however long the log: a false "maybe" only costs a read that finds nothing.
 */
export class SeenKeys {
  private readonly bits: Uint32Array;
  private readonly mask: number;

  /** `log2Bits`: 26 → 2^26 bits (8 MiB), about one false "maybe" in 100,000 lookups at 1M keys. */
  constructor(log2Bits = 26) {
    this.bits = new Uint32Array(2 ** (log2Bits - 5));
    this.mask = 2 ** log2Bits - 1;
  }

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < 3; i += 1) {
      const bit = (h1 + i * h2) & this.mask;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** False: certainly never added. True: added, or (rarely) not. */
  mightHave(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < 3; i += 1) {
      const bit = (h1 + i * h2) & this.mask;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a, and FNV-1a with another basis). */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let index = 0; index < key.length; index += 1) {
    const code = key.charCodeAt(index);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b >>> 0) | 1];
}
