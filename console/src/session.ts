/**
 * The secret key, for the tab's life only (SPEC §14): sessionStorage, never a URL, cookie,
 * localStorage or log. Signing out removes it.
 */
const KEY = 'referrals-console.api-key';

export const session = {
  key(): string | null {
    return window.sessionStorage.getItem(KEY);
  },
  signIn(key: string): void {
    window.sessionStorage.setItem(KEY, key);
  },
  signOut(): void {
    window.sessionStorage.removeItem(KEY);
  },
};
