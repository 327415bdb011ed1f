/** The parts of JSON Schema (and of an OpenAPI document) the reference pages read. */
export interface JsonSchema {
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}
