/** Alphabet of referral codes: no 0/O, 1/I to avoid misreading. */
export const REFERRAL_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const REFERRAL_CODE_LENGTH = 6;

/** Codes are matched case-insensitively and stored upper case. */
export function normalizeCode(code: string): string {
  return code.trim().toUpperCase();
}

export function referralLink(base: string | null, code: string | null): string | null {
  if (base === null || code === null) return null;
  return `${base.replace(/\/+$/, '')}/${code}`;
}
