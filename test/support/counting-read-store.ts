import type { FindQuery, ProjectorBatch, ReadStore, Scalar } from '../../src/ports/read-store.js';

/** Counts the documents and bytes a projection run reads and writes (not time). */
export class CountingReadStore implements ReadStore {
  counts = { documentsRead: 0, bytesRead: 0, documentsWritten: 0, bytesWritten: 0 };
  /** The most documents one call returned (since the last reset). */
  largestRead = 0;

  constructor(private readonly inner: ReadStore) {}

  resetCounts() {
    this.counts = { documentsRead: 0, bytesRead: 0, documentsWritten: 0, bytesWritten: 0 };
    this.largestRead = 0;
  }

  private read<T>(docs: T[]): void {
    this.counts.documentsRead += docs.length;
    this.largestRead = Math.max(this.largestRead, docs.length);
    for (const doc of docs) this.counts.bytesRead += JSON.stringify(doc).length;
  }

  ensureIndexes(collection: string, indexes: Parameters<ReadStore['ensureIndexes']>[1]) {
    return this.inner.ensureIndexes(collection, indexes);
  }
  async get<T extends Record<string, unknown>>(collection: string, id: string) {
    const doc = await this.inner.get<T>(collection, id);
    this.read(doc ? [doc] : []);
    return doc;
  }
  async getMany<T extends Record<string, unknown>>(collection: string, ids: string[]) {
    const docs = await this.inner.getMany<T>(collection, ids);
    this.read([...docs.values()]);
    return docs;
  }
  async find<T extends Record<string, unknown>>(collection: string, query?: FindQuery) {
    const docs = await this.inner.find<T>(collection, query);
    this.read(docs);
    return docs;
  }
  count(collection: string, where?: Record<string, Scalar>) {
    return this.inner.count(collection, where);
  }
  async commitBatches(batches: ProjectorBatch[]) {
    for (const batch of batches) {
      for (const change of batch.changes) {
        this.counts.documentsWritten += 1;
        if (change.op === 'put') this.counts.bytesWritten += JSON.stringify(change.doc).length;
      }
    }
    return this.inner.commitBatches(batches);
  }
  checkpoint(projector: string) {
    return this.inner.checkpoint(projector);
  }
  swapIn(...args: Parameters<ReadStore['swapIn']>) {
    return this.inner.swapIn(...args);
  }
  reset(...args: Parameters<ReadStore['reset']>) {
    return this.inner.reset(...args);
  }
  putAux(collection: string, id: string, doc: Record<string, unknown>) {
    return this.inner.putAux(collection, id, doc);
  }
  close() {
    return this.inner.close();
  }
}
