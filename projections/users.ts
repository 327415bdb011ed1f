import {
  evolveUserDocument as evolveUser,
  initialUserDocument as initialUserState,
  type UserDocument as UserState,
} from '../src/application/queries/legacy-user-document.js';
import { userEvents } from '../src/domain/events/user-events.js';
import type { EventType } from '../src/domain/events/index.js';
import type { Doc, Projection } from './projection.js';

export const USERS = 'users';

/** One document per user: the user stream folded with the same `evolve` the command side uses. */
export const usersProjection: Projection = {
  name: 'users',
  version: 2,
  collections: [{ name: USERS, indexes: ['referral_code'] }],
  eventTypes: Object.keys(userEvents) as EventType[],
  targets: (event) => (event.stream.startsWith('user-') ? [{ collection: USERS, id: event.stream.slice('user-'.length) }] : []),
  evolve: (_ref, doc, event) => evolveUser((doc as UserState | null) ?? initialUserState(), event) as unknown as Doc,
};
