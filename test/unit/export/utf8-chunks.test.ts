import { expect } from 'chai';
import { Utf8Chunks } from '../../../src/application/export/utf8-chunks.js';

const MIB = 1 << 20;

function added(texts: string[]): Buffer[] {
  const chunks = new Utf8Chunks();
  for (const text of texts) chunks.add(text);
  return chunks.take();
}

describe('export: UTF-8 chunks', () => {
  it('gives the bytes of the texts added, in order, as Buffer.from of their concatenation would', () => {
    const texts = ['{"a":1}\n', 'Zoë ✓\n', '😀 pair\n', '', 'plain'];
    expect(Buffer.concat(added(texts)).equals(Buffer.from(texts.join(''), 'utf8'))).to.equal(true);
  });

  it('starts a new buffer before a text that might not fit, so no character is split or lost', () => {
    // Each text may take 0.6 MiB (3 bytes a UTF-16 unit at worst): the second cannot be known to fit in the first MiB.
    const texts = ['✓'.repeat(200_000), 'a'.repeat(200_000), '✓😀'.repeat(66_000)];
    const chunks = added(texts);
    expect(chunks.length).to.be.greaterThan(1);
    for (const chunk of chunks) expect(chunk.length).to.be.at.most(MIB);
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(texts.join(''));
  });

  it('takes a text longer than a chunk whole, in a buffer large enough for it', () => {
    const long = 'x'.repeat(MIB + 10);
    const chunks = added(['head\n', long, 'tail\n']);
    expect(chunks.map((chunk) => chunk.length)).to.deep.equal([5, MIB + 15]);
    expect(Buffer.concat(chunks).toString('utf8')).to.equal(`head\n${long}tail\n`);
  });

  it('take() empties it: nothing twice, nothing from before, and no empty buffer', () => {
    const chunks = new Utf8Chunks();
    expect(chunks.take()).to.deep.equal([]);
    chunks.add('');
    expect(chunks.take()).to.deep.equal([]);
    chunks.add('first');
    expect(chunks.take().map(String)).to.deep.equal(['first']);
    expect(chunks.take()).to.deep.equal([]);
    chunks.add('second');
    chunks.add('');
    expect(chunks.take().map(String)).to.deep.equal(['second']);
  });
});
