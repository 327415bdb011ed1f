import type { CodeType } from '../../src/domain/events/code-events.js';

/** The simulated actions, processed in time order. */
export type ProfileChange = 'convert' | 'churn' | 'trial-end' | 'activity';

export type Action =
  | { kind: 'claim'; user: string; codeType: CodeType }
  | { kind: 'profile'; user: string; change: ProfileChange }
  | { kind: 'withdraw'; user: string; key: string; amount: number }
  | { kind: 'grant'; user: string }
  | { kind: 'sweep'; user: string };

export interface Scheduled {
  at: number;
  seq: number;
  action: Action;
}

/** A binary min-heap on (at, seq): actions in time order, those at the same time in the order scheduled. */
export class Timeline {
  private readonly heap: Scheduled[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  peekAt(): number {
    return this.heap[0]?.at ?? Number.POSITIVE_INFINITY;
  }

  push(at: number, action: Action): void {
    this.seq += 1;
    const item = { at, seq: this.seq, action };
    const heap = this.heap;
    // Sift up with a hole: parents move down into it, the item is written once where it stops.
    let index = heap.length;
    heap.push(item);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent]!;
      if (!this.before(item, above)) break;
      heap[index] = above;
      index = parent;
    }
    heap[index] = item;
  }

  pop(): Scheduled | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    // Sift the last item down from the root with a hole, as push does upwards.
    const size = heap.length;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= size) break;
      if (child + 1 < size && this.before(heap[child + 1]!, heap[child]!)) child += 1;
      const below = heap[child]!;
      if (!this.before(below, last)) break;
      heap[index] = below;
      index = child;
    }
    heap[index] = last;
    return top;
  }

  private before(a: Scheduled, b: Scheduled): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
}
