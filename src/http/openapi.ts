import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ZodTypeAny } from 'zod';
import { errorSchema } from './schemas/common.js';

export interface OperationDoc {
  method: RouteConfig['method'];
  /** OpenAPI path, e.g. /users/{app_user_id}. */
  path: string;
  summary: string;
  tags: string[];
  body?: ZodTypeAny;
  params?: RouteConfig['request'] extends infer R ? (R extends { params?: infer P } ? P : never) : never;
  query?: RouteConfig['request'] extends infer R ? (R extends { query?: infer Q } ? Q : never) : never;
  responses: Record<number, { description: string; schema?: ZodTypeAny }>;
  errors: number[];
  auth?: 'client' | 'secret' | 'none';
}

/** Routes describe themselves here with the same zod schemas that validate their requests. */
export class ApiDescription {
  private readonly registry = new OpenAPIRegistry();

  constructor() {
    this.registry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'x-api-key' });
  }

  operation(doc: OperationDoc): void {
    const responses: RouteConfig['responses'] = {};
    for (const [status, response] of Object.entries(doc.responses)) {
      responses[status] = response.schema
        ? { description: response.description, content: { 'application/json': { schema: response.schema } } }
        : { description: response.description };
    }
    for (const status of doc.errors) {
      responses[String(status)] = { description: `Error (${status})`, content: { 'application/json': { schema: errorSchema } } };
    }
    this.registry.registerPath({
      method: doc.method,
      path: doc.path,
      summary: doc.summary,
      tags: doc.tags,
      security: doc.auth === 'none' ? [] : [{ apiKey: [] }],
      request: {
        ...(doc.body ? { body: { content: { 'application/json': { schema: doc.body } }, required: true } } : {}),
        ...(doc.params ? { params: doc.params } : {}),
        ...(doc.query ? { query: doc.query } : {}),
      },
      responses,
    });
  }

  document(): object {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Referral & Rewards Service',
        version: '1.0.0',
        description: 'Self-hosted referral, affiliate and promo-code backend. Errors use stable codes; see SPEC §9.',
      },
      servers: [{ url: '/' }],
    });
  }
}
