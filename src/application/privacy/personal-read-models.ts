import type { UserDoc } from '../../../projections/users.js';
import { PERSONAL_PROFILE_FIELDS } from '../../domain/privacy/personal-fields.js';
import { decryptValue, isEnvelope, keyIdOf, type PersonalDataCipher } from './personal-data-cipher.js';

/** A user's personal profile fields in the clear. */
export interface OpenedProfile {
  metadata: Record<string, unknown> | null;
  payment_customer_id: string | null;
}

/**
 * The personal fields of a user document opened (SPEC §13). The users read model keeps them
 * sealed as the log holds them (`storedValue`, src/domain/privacy/personal-fields.ts), so the
 * one copy in the clear is the answer being built. One key look-up for both fields. A value
 * whose key is gone (erased, the erasure not projected yet) reads as null; a clear value (a read
 * model built before personal fields were kept sealed, or a log written before encryption) reads
 * as it is.
 */
export async function openProfile(cipher: PersonalDataCipher, user: Pick<UserDoc, 'metadata' | 'payment_customer_id'>): Promise<OpenedProfile> {
  const sealed = PERSONAL_PROFILE_FIELDS.flatMap((field) => {
    const value = user[field];
    return isEnvelope(value) ? [{ field, envelope: value }] : [];
  });
  const opened = { metadata: user.metadata, payment_customer_id: user.payment_customer_id } as OpenedProfile;
  if (sealed.length === 0) return opened;
  const keys = await cipher.keys.keysById(sealed.map(({ envelope }) => keyIdOf(envelope)));
  for (const { field, envelope } of sealed) {
    // The label is the field's name, as the event's own value was sealed with.
    (opened as unknown as Record<string, unknown>)[field] = decryptValue(keys, field, envelope) ?? null;
  }
  return opened;
}
