/**
 * Freezes a JSON-like value and everything in it, so an object handed to several callers (a
 * user view shared by simultaneous answers) cannot be changed by one of them under the others: an
 * attempt throws a TypeError (modules run in strict mode) instead of corrupting the others.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
