/** Seeded randomness, so a seed reproduces the same choices (event ids stay random UUIDs). */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32 */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, maxInclusive: number): number {
    return Math.floor(this.between(min, maxInclusive + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 30) {
      const gaussian = Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
      return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian));
    }
    const limit = Math.exp(-mean);
    let count = 0;
    let product = this.next();
    while (product > limit) {
      count += 1;
      product *= this.next();
    }
    return count;
  }
}
