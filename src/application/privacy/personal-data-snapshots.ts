import { appUserIdOf } from '../../domain/events/index.js';
import { PERSONAL_PROFILE_FIELDS } from '../../domain/privacy/personal-fields.js';
import type { SnapshotSealer } from '../stream-executor.js';
import { isEnvelope, type PersonalDataCipher, userSubject } from './personal-data-cipher.js';

/**
 * Snapshots of user streams keep the personal profile fields encrypted under the user's key
 * (SPEC §13), like the events they fold; after an erasure they open as null.
 */
export class PersonalDataSnapshots implements SnapshotSealer {
  constructor(private readonly cipher: PersonalDataCipher) {}

  async seal(stream: string, state: unknown): Promise<unknown> {
    const user = appUserIdOf(stream);
    if (user === null || state === null || typeof state !== 'object') return state;
    const sealed: Record<string, unknown> = { ...(state as Record<string, unknown>) };
    for (const field of PERSONAL_PROFILE_FIELDS) {
      const value = sealed[field];
      if (value === undefined || value === null || isEnvelope(value)) continue;
      // Never creates a key: none means the user was erased meanwhile.
      sealed[field] = await this.cipher.seal(userSubject(user), `snapshot.${field}`, value, false);
    }
    return sealed;
  }

  async open(stream: string, state: unknown): Promise<unknown> {
    if (appUserIdOf(stream) === null || state === null || typeof state !== 'object') return state;
    const opened: Record<string, unknown> = { ...(state as Record<string, unknown>) };
    for (const field of PERSONAL_PROFILE_FIELDS) {
      const value = opened[field];
      if (isEnvelope(value)) opened[field] = (await this.cipher.open(`snapshot.${field}`, value)) ?? null;
    }
    return opened;
  }
}
