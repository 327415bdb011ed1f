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

/** A binary min-heap on (at, seq). */
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
    heap.push(item);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  pop(): Scheduled | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && this.before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && this.before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === index) break;
      [heap[index], heap[smallest]] = [heap[smallest]!, heap[index]!];
      index = smallest;
    }
    return top;
  }

  private before(a: Scheduled, b: Scheduled): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
}
