import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ERROR_CODES } from '../../src/http/error-codes.js';

/**
 * Checks responses against the service's own /openapi.json (JSON Schema 2020-12 through ajv):
 * the test support runs every API-test response through it, so the suite fails when the
 * service answers anything the document does not describe.
 */

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: object }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: object;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export class OpenApiResponseValidator {
  private readonly ajv: Ajv2020;
  /** Responses are checked with every object closed: a field the document does not name is a problem (`closed`). */
  private readonly responseAjv: Ajv2020;
  private readonly routes: { pattern: RegExp; template: string; item: Record<string, Operation> }[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly anyError: ValidateFunction;

  constructor(readonly document: Document) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema({ $id: 'openapi', components: document.components ?? {} });
    this.responseAjv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.responseAjv);
    this.responseAjv.addSchema({ $id: 'openapi', components: closed(document.components ?? {}) });
    // Literal paths first, so /admin/store/offer-codes is not taken for /admin/{x}/… templates.
    this.routes = Object.entries(document.paths)
      .map(([template, item]) => ({
        template,
        item,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    this.anyError = this.ajv.compile({
      type: 'object',
      required: ['errors'],
      additionalProperties: false,
      properties: {
        errors: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['code', 'status', 'message', 'source'],
            properties: {
              code: { enum: Object.keys(ERROR_CODES) },
              status: { type: 'integer' },
              message: { type: 'string' },
              source: { type: ['string', 'null'] },
            },
          },
        },
      },
    });
  }

  /** The problems of one response; an empty list when the document describes it. */
  problems(method: string, pathname: string, status: number, contentType: string | null, body: unknown, requestId?: string | null): string[] {
    const lower = method.toLowerCase();
    const route = this.routes.find((candidate) => candidate.pattern.test(pathname));
    const operation = route && METHODS.includes(lower) ? route.item[lower] : undefined;
    if (!operation) {
      // Undocumented (unknown path, unsupported method, /docs): errors still have the documented shape.
      if (status < 400 || !contentType?.includes('json')) return [];
      return this.check(this.anyError, body, `${method} ${pathname} ${status} (undocumented operation)`);
    }
    const where = `${method} ${route!.template} → ${status}`;
    const response = operation.responses?.[String(status)] as (NonNullable<Operation['responses']>[string] & { headers?: object }) | undefined;
    if (!response) return [`${where}: status ${status} is not documented for this operation`];
    if (requestId !== undefined && response.headers && 'x-request-id' in response.headers && !/^[\x21-\x7e]{1,128}$/.test(requestId ?? '')) {
      return [`${where}: the documented x-request-id header is missing or malformed (${requestId})`];
    }
    if (!response.content) return body === null || body === '' ? [] : [`${where}: documented without a body, but one came`];
    const mediaType = Object.keys(response.content).find((type) => contentType?.startsWith(type));
    if (!mediaType) return [`${where}: content type ${contentType} is not documented (${Object.keys(response.content).join(', ')})`];
    const schema = response.content[mediaType]!.schema;
    if (!schema) return [];
    const key = `${lower} ${route!.template} ${status} ${mediaType}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.responseAjv.compile(closed(this.rebase(schema)));
      this.compiled.set(key, validate);
    }
    return this.check(validate, body, where);
  }

  /**
   * Whether the document describes this request as valid: its body and path parameters match
   * the operation's schemas. Null when the operation is not in the document.
   */
  describesRequest(method: string, template: string, pathParameters: Record<string, string>, body: unknown): boolean | null {
    const operation = this.document.paths[template]?.[method.toLowerCase()] as
      | (Operation & { parameters?: { name: string; in: string; schema: object }[]; requestBody?: { content: Record<string, { schema: object }> } })
      | undefined;
    if (!operation) return null;
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in !== 'path') continue;
      if (!this.compile(`param ${method} ${template} ${parameter.name}`, parameter.schema)(pathParameters[parameter.name])) return false;
    }
    const schema = operation.requestBody?.content['application/json']?.schema;
    if (!schema) return true;
    return this.compile(`body ${method} ${template}`, schema)(body) as boolean;
  }

  private compile(key: string, schema: object): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(this.rebase(schema));
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Validates every example in the document against the schema beside it. */
  exampleProblems(): string[] {
    const problems: string[] = [];
    for (const [template, item] of Object.entries(this.document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          for (const [type, media] of Object.entries(response.content ?? {})) {
            const example = (media as { example?: unknown }).example;
            if (example === undefined || !media.schema || !type.includes('json')) continue;
            problems.push(...this.check(this.ajv.compile(this.rebase(media.schema)), example, `example of ${method} ${template} ${status}`));
          }
        }
      }
    }
    return problems;
  }

  private check(validate: ValidateFunction, body: unknown, where: string): string[] {
    if (validate(body)) return [];
    return (validate.errors ?? []).slice(0, 5).map((error) => `${where}: ${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`);
  }

  /** Points `#/components/…` references at the registered document. */
  private rebase(schema: object): object {
    return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi#/'));
  }
}

/**
 * The schema with every object that names its properties and says nothing of others closed
 * (`unevaluatedProperties: false`): an answer carrying a field the document does not describe
 * fails, so the document lists every field clients can see. The branches of an `allOf` are
 * closed together at the `allOf` (each sees the others' properties as evaluated).
 */
function closed(schema: unknown, inAllOf = false): any {
  if (Array.isArray(schema)) return schema.map((item) => closed(item, inAllOf));
  if (typeof schema !== 'object' || schema === null) return schema;
  const node: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'allOf') node[key] = (value as unknown[]).map((branch) => closed(branch, true));
    else if (key === 'properties' || key === '$defs' || key === 'schemas' || key === 'components')
      node[key] = Object.fromEntries(Object.entries(value as object).map(([name, child]) => [name, closed(child)]));
    else if (key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default') node[key] = value;
    else node[key] = closed(value);
  }
  const open = !('additionalProperties' in node) && !('unevaluatedProperties' in node);
  if (open && !inAllOf && ('properties' in node || 'allOf' in node)) node.unevaluatedProperties = false;
  return node;
}

const cache = new Map<string, OpenApiResponseValidator>();

/** One validator per distinct document (compiling is the expensive part). */
export function validatorFor(document: Document): OpenApiResponseValidator {
  const key = JSON.stringify(document);
  let validator = cache.get(key);
  if (!validator) {
    validator = new OpenApiResponseValidator(document);
    cache.set(key, validator);
  }
  return validator;
}
