import { randomUUID } from 'node:crypto';
import { newDataKeyBytes } from '../../application/pooled-random-bytes.js';
import type { DataKey, KeyStore } from '../../ports/key-store.js';

/** Data keys in process memory (tests, application specs): gone with the process. */
export class MemoryKeyStore implements KeyStore {
  private readonly bySubject = new Map<string, DataKey>();
  private readonly byId = new Map<string, DataKey>();

  async keyFor(subject: string, material?: Buffer): Promise<DataKey> {
    const existing = this.bySubject.get(subject);
    if (existing) return copy(existing);
    const created: DataKey = { id: randomUUID(), subject, key: material ? Buffer.from(material) : newDataKeyBytes() };
    this.bySubject.set(subject, created);
    this.byId.set(created.id, created);
    return copy(created);
  }

  async existingKey(subject: string): Promise<DataKey | null> {
    const existing = this.bySubject.get(subject);
    return existing ? copy(existing) : null;
  }

  async keysById(ids: readonly string[]): Promise<Map<string, DataKey>> {
    const found = new Map<string, DataKey>();
    for (const id of ids) {
      const key = this.byId.get(id);
      if (key) found.set(id, copy(key));
    }
    return found;
  }

  async destroy(subject: string): Promise<number> {
    const existing = this.bySubject.get(subject);
    if (!existing) return 0;
    existing.key.fill(0);
    this.bySubject.delete(subject);
    this.byId.delete(existing.id);
    return 1;
  }

  async close(): Promise<void> {}
}

function copy(key: DataKey): DataKey {
  return { id: key.id, subject: key.subject, key: Buffer.from(key.key) };
}
