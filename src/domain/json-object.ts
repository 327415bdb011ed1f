/** Whether a parsed JSON value is an object (not an array, not null): the one test for "a JSON object". */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
