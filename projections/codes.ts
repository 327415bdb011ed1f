import type { CodeType } from '../src/domain/events/code-events.js';
import type { Projection } from './projection.js';
import { streams } from '../src/domain/events/index.js';

export const CODES = 'codes';

export interface CodeDoc {
  [key: string]: unknown;
  code: string;
  type: CodeType;
  owner_id: string;
  /** Claim slots held: the number of users who claimed this code. */
  taken: number;
}

/** The shared code namespace: who owns each code and how many claims it has. */
export const codesProjection: Projection = {
  name: 'codes',
  version: 1,
  collections: [{ name: CODES, indexes: ['owner_id'] }],
  eventTypes: ['CodeReserved', 'ClaimSlotTaken', 'ClaimSlotReleased'],
  targets: (event) => {
    const code = streams.idOf('code', event.stream);
    return code === null ? [] : [{ collection: CODES, id: code }];
  },
  evolve: (_ref, doc, event) => {
    switch (event.type) {
      case 'CodeReserved':
        return { code: event.data.code, type: event.data.type, owner_id: event.data.owner_id, taken: 0 } satisfies CodeDoc;
      case 'ClaimSlotTaken':
      case 'ClaimSlotReleased':
        return doc ? { ...doc, taken: event.data.taken } : doc;
      default:
        return doc;
    }
  },
};
