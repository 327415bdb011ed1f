import { expect } from 'chai';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import type { Logger } from '../../../src/ports/logger.js';
import { counting } from '../../support/counting-projection.js';

describe('ProjectionRunner: a read model built by another version of its projection', () => {
  it('is logged with the replay command that rebuilds it, its name filled in', async () => {
    const readStore = new MemoryReadStore();
    await readStore.commitBatches([{ projector: counting.name, version: 1, changes: [], position: 1n, after: null }]);
    const messages: string[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (_object: unknown, message: string) => void messages.push(message),
      child: () => logger,
    } as unknown as Logger;
    const runner = new ProjectionRunner(new EventLog(new MemoryEventStore(), new RandomIds()), readStore, [{ ...counting, version: 2 }], logger);
    await runner.init();
    expect(messages).to.deep.equal(['read model was built by another version of its projection: run `npm run replay -- --projection event_counts`']);
  });
});
