/**
 * The secret key, for the tab's life only (SPEC §14): sessionStorage, never a URL, cookie,
 * localStorage or log. Signing out removes it.
 */
const KEY = 'referrals-console.api-key';

/** Who wants to know when a key is given again after the service refused the last one (to load again what failed). */
const signedInAgainListeners = new Set<() => void>();

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
  /** A key was given again after the service refused the last one: what failed meanwhile loads again. */
  signedInAgain(): void {
    for (const listener of [...signedInAgainListeners]) listener();
  },
  /** Calls `listener` at each `signedInAgain`; returns what stops it. */
  whenSignedInAgain(listener: () => void): () => void {
    signedInAgainListeners.add(listener);
    return () => signedInAgainListeners.delete(listener);
  },
};
