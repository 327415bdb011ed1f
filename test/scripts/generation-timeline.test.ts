import { expect } from 'chai';
import { type Action, Timeline } from '../../scripts/generate/timeline.js';

describe('generate-events: the timeline of simulated actions', () => {
  const action = (user: string): Action => ({ kind: 'grant', user });

  it('pops actions in time order, those at the same time in the order they were scheduled, with pushes between pops', () => {
    const timeline = new Timeline();
    const expected: { at: number; user: string }[] = [];
    let state = 12345;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state;
    };
    const popped: { at: number; user: string }[] = [];
    for (let index = 0; index < 5000; index += 1) {
      // Few distinct times, so many ties.
      const at = next() % 200;
      timeline.push(at, action(`u${index}`));
      expected.push({ at, user: `u${index}` });
      if (index % 3 === 2) {
        const item = timeline.pop()!;
        popped.push({ at: item.at, user: (item.action as { user: string }).user });
      }
    }
    expect(timeline.size).to.equal(5000 - popped.length);
    expect(timeline.peekAt()).to.be.at.least(0);
    for (let item = timeline.pop(); item !== undefined; item = timeline.pop()) popped.push({ at: item.at, user: (item.action as { user: string }).user });
    expect(timeline.peekAt()).to.equal(Number.POSITIVE_INFINITY);
    // Between pushes the heap pops its least item: check against a sort of what was in it then.
    const replayed = new Timeline();
    const reference: { at: number; seq: number; user: string }[] = [];
    const check: { at: number; user: string }[] = [];
    for (let index = 0; index < expected.length; index += 1) {
      replayed.push(expected[index]!.at, action(expected[index]!.user));
      reference.push({ ...expected[index]!, seq: index });
      if (index % 3 === 2) {
        reference.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const least = reference.shift()!;
        check.push({ at: least.at, user: least.user });
      }
    }
    reference.sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const rest of reference) check.push({ at: rest.at, user: rest.user });
    expect(popped).to.deep.equal(check);
  });

  it('answers undefined when empty', () => {
    const timeline = new Timeline();
    expect(timeline.pop()).to.equal(undefined);
    timeline.push(5, action('a'));
    expect(timeline.pop()?.at).to.equal(5);
    expect(timeline.pop()).to.equal(undefined);
  });
});
