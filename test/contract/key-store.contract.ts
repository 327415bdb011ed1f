import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { KeyStore } from '../../src/ports/key-store.js';
import type { ContractOptions, OpenContractSubject } from './contract-subject.js';

/** What every KeyStore adapter must do: one key per subject, found by id, gone for good when destroyed. */
export function keyStoreContract(name: string, open: OpenContractSubject<KeyStore>, _options: ContractOptions): void {
  describe(`KeyStore contract: ${name}`, () => {
    let store: KeyStore;
    let dispose: () => Promise<void>;
    let subject: (label: string) => string;

    beforeEach(async () => {
      const opened = await open();
      store = opened.store;
      dispose = opened.dispose;
      const tag = randomUUID().slice(0, 8);
      subject = (label) => `user:${tag}-${label}`;
    });
    afterEach(() => dispose());

    it('creates a 32-byte key on first use and answers the same key afterwards', async () => {
      expect(await store.existingKey(subject('a'))).to.equal(null);
      const created = await store.keyFor(subject('a'));
      expect(created.subject).to.equal(subject('a'));
      expect(created.key).to.have.length(32);
      const again = await store.keyFor(subject('a'));
      expect(again.id).to.equal(created.id);
      expect(again.key.equals(created.key)).to.equal(true);
      expect((await store.existingKey(subject('a')))?.id).to.equal(created.id);
    });

    it('gives each subject its own key', async () => {
      const a = await store.keyFor(subject('a'));
      const b = await store.keyFor(subject('b'));
      expect(a.id).to.not.equal(b.id);
      expect(a.key.equals(b.key)).to.equal(false);
    });

    it('finds keys by id, leaving unknown ids out', async () => {
      const a = await store.keyFor(subject('a'));
      const b = await store.keyFor(subject('b'));
      const found = await store.keysById([a.id, b.id, a.id, randomUUID()]);
      expect([...found.keys()].sort()).to.deep.equal([a.id, b.id].sort());
      expect(found.get(b.id)!.key.equals(b.key)).to.equal(true);
      expect((await store.keysById([])).size).to.equal(0);
    });

    it('destroys a key for good: not found by id or subject; a second destroy finds nothing', async () => {
      const a = await store.keyFor(subject('a'));
      const b = await store.keyFor(subject('b'));
      expect(await store.destroy(subject('a'))).to.equal(1);
      expect((await store.keysById([a.id])).size).to.equal(0);
      expect(await store.existingKey(subject('a'))).to.equal(null);
      expect(await store.destroy(subject('a'))).to.equal(0);
      expect(await store.destroy(subject('never-had-one'))).to.equal(0);
      expect((await store.keysById([b.id])).size, 'other subjects keep their keys').to.equal(1);
    });

    it('makes a new, different key for a subject whose key was destroyed', async () => {
      const first = await store.keyFor(subject('a'));
      await store.destroy(subject('a'));
      const second = await store.keyFor(subject('a'));
      expect(second.id).to.not.equal(first.id);
      expect(second.key.equals(first.key)).to.equal(false);
      expect((await store.keysById([first.id, second.id])).size).to.equal(1);
    });

    it('makes a key from the material given when the subject has none, and keeps an existing key over new material', async () => {
      const material = Buffer.alloc(32, 7);
      const made = await store.keyFor(subject('given'), material);
      expect(made.key.equals(material)).to.equal(true);
      expect((await store.existingKey(subject('given')))?.key.equals(material)).to.equal(true);
      const kept = await store.keyFor(subject('given'), Buffer.alloc(32, 9));
      expect(kept).to.deep.equal(made);
      const [first, second] = await Promise.all([
        store.keyFor(subject('given-race'), Buffer.alloc(32, 1)),
        store.keyFor(subject('given-race'), Buffer.alloc(32, 2)),
      ]);
      expect(second).to.deep.equal(first);
    });

    it('answers one key to 20 concurrent first uses of a subject', async () => {
      const keys = await Promise.all(Array.from({ length: 20 }, () => store.keyFor(subject('race'))));
      expect(new Set(keys.map((key) => key.id)).size).to.equal(1);
    });

    it('gives 50 subjects asked for at once each its own key, and answers the same keys afterwards', async () => {
      const subjects = Array.from({ length: 50 }, (_, index) => subject(`crowd-${index}`));
      const keys = await Promise.all(subjects.map((name) => store.keyFor(name)));
      expect(keys.map((key) => key.subject)).to.deep.equal(subjects);
      expect(new Set(keys.map((key) => key.id)).size).to.equal(50);
      const again = await Promise.all(subjects.map((name) => store.existingKey(name)));
      expect(again.map((key) => key?.id)).to.deep.equal(keys.map((key) => key.id));
      expect((await store.keysById(keys.map((key) => key.id))).size).to.equal(50);
    });
  });
}
