import { expect } from 'chai';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';

describe('RandomIds', () => {
  const ids = new RandomIds();

  it('makes UUIDv7 ids: unique, and later ones sort after earlier ones (the log index is appended to, not scattered)', async () => {
    const made: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      for (let index = 0; index < 1000; index += 1) made.push(ids.uuid());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(new Set(made).size).to.equal(made.length);
    for (const id of made) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...made].sort()).to.deep.equal(made);
  });

  it('keeps sorting after the clock goes back', () => {
    const now = Date.now;
    try {
      const before = ids.uuid();
      Date.now = () => now() - 60_000;
      const after = [ids.uuid(), ids.uuid()];
      expect([before, ...after]).to.deep.equal([before, ...after].sort());
      expect(new Set([before, ...after]).size).to.equal(3);
    } finally {
      Date.now = now;
    }
  });

  it('derives the same UUIDv5 from the same parts, and another from other parts', () => {
    expect(ids.derived('user-ann', 'op-1')).to.equal(ids.derived('user-ann', 'op-1'));
    expect(ids.derived('user-ann', 'op-1')).to.not.equal(ids.derived('user-ann', 'op-2'));
    expect(ids.derived('a', 'b')).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
  });
});
