import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { MemoryKeyStore } from '../../src/adapters/memory/memory-key-store.js';
import { MemoryReadStore } from '../../src/adapters/memory/memory-read-store.js';
import type { ContractSubject } from './contract-subject.js';
import { analyticsReadModelContract } from './analytics-read-model.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { keyStoreContract } from './key-store.contract.js';
import { readStoreContract } from './read-store.contract.js';

/** A new, empty store for every test. */
function fresh<S extends { close(): Promise<void> }>(make: () => S) {
  return async (): Promise<ContractSubject<S>> => {
    const store = make();
    return { store, dispose: () => store.close() };
  };
}

eventStoreContract(
  'in memory',
  fresh(() => new MemoryEventStore()),
  { freshStorePerTest: true },
);
readStoreContract(
  'in memory',
  fresh(() => new MemoryReadStore()),
  { freshStorePerTest: true },
);
keyStoreContract(
  'in memory',
  fresh(() => new MemoryKeyStore()),
  { freshStorePerTest: true },
);
analyticsReadModelContract(
  'in memory',
  fresh(() => new MemoryReadStore()),
);
