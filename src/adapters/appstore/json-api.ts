import { z, type ZodTypeAny } from 'zod';

/** The parts of JSON:API (https://jsonapi.org) documents App Store Connect answers with. */

const identifierSchema = z.object({ type: z.string(), id: z.string() });
export type ResourceIdentifier = z.infer<typeof identifierSchema>;

const resourceSchema = z.object({
  type: z.string(),
  id: z.string(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  relationships: z
    .record(
      z.string(),
      z.object({
        data: z
          .union([identifierSchema, z.array(identifierSchema)])
          .nullable()
          .optional(),
      }),
    )
    .optional(),
});
export type Resource = z.infer<typeof resourceSchema>;

export const singleDocumentSchema = z.object({ data: resourceSchema, included: z.array(resourceSchema).optional() });
export const listDocumentSchema = z.object({
  data: z.array(resourceSchema),
  included: z.array(resourceSchema).optional(),
  links: z.object({ next: z.string().optional() }).optional(),
});

/** The upstream answered, but not with the document we asked for. */
export class MalformedDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedDocumentError';
  }
}

export function parseDocument<S extends ZodTypeAny>(schema: S, json: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(json);
  if (!result.success) throw new MalformedDocumentError(`${what}: ${describe(result.error)}`);
  return result.data;
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || '(document)'}: ${issue.message}`;
}

/** The attributes of `resource`, checked against `schema`. */
export function attributesOf<S extends ZodTypeAny>(resource: Resource, schema: S): z.infer<S> {
  return parseDocument(schema, resource.attributes ?? {}, `attributes of ${resource.type} ${resource.id}`);
}

/** The identifier a to-one relationship points at. */
export function relatedId(resource: Resource, relationship: string): ResourceIdentifier {
  const data = resource.relationships?.[relationship]?.data;
  if (!data || Array.isArray(data)) throw new MalformedDocumentError(`${resource.type} ${resource.id} has no ${relationship}`);
  return data;
}

/** Looks up `included` resources by type and id. */
export class IncludedResources {
  private readonly byKey = new Map<string, Resource>();

  constructor(included: Resource[] = []) {
    for (const resource of included) this.byKey.set(`${resource.type}/${resource.id}`, resource);
  }

  get(identifier: ResourceIdentifier): Resource {
    const found = this.byKey.get(`${identifier.type}/${identifier.id}`);
    if (!found) throw new MalformedDocumentError(`included lacks ${identifier.type} ${identifier.id}`);
    return found;
  }
}
