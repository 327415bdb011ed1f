/** Alphabet of referral codes: no 0/O, 1/I to avoid misreading. */
export const REFERRAL_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const REFERRAL_CODE_LENGTH = 6;

/**
 * Codes are matched case-insensitively and stored upper case. Every code is ASCII, so only
 * ASCII letters change case: Unicode's upper-casing would turn look-alikes into real codes
 * (`straße` → `STRASSE`, the ligature `ﬆ` → `ST`).
 */
export function normalizeCode(code: string): string {
  return code.trim().replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

export function referralLink(base: string | null, code: string | null): string | null {
  if (base === null || code === null) return null;
  return `${base.replace(/\/+$/, '')}/${code}`;
}
