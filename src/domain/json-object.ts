/** Whether a parsed JSON value is an object (not an array, not null): the one test for "a JSON object". */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` of parsed JSON, or undefined when a step is missing (JSON has no undefined: nothing was there). */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current = data;
  for (const step of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, step)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[step];
  }
  return current;
}
