import { STALL_MS } from '../../application/projections/projection-lag.js';
import { webhookHealthOut } from './webhooks.js';
import { z } from './zod-openapi.js';

export const healthResponse = z
  .object({ data: z.object({ status: z.literal('ok') }).strict() })
  .strict()
  .openapi('Health');

const failure = z
  .object({ position: z.string(), eventId: z.string(), error: z.string() })
  .strict()
  .nullable()
  .openapi({ description: 'The event a projection (or reaction) is held at, with its error; null when healthy.' });

export const readinessReport = z
  .object({
    ready: z.boolean(),
    head: z.string().nullable().openapi({ description: 'Position of the last event in the log (a 64-bit integer as a string); null for an empty log.' }),
    projections: z.array(
      z
        .object({
          name: z.string(),
          checkpoint: z.string().nullable(),
          lag: z.union([z.number().int().min(0), z.string().regex(/^>[0-9]+$/)]).openapi({ description: 'Events behind the log; ">N" past READY_MAX_LAG.' }),
          caught_up: z.boolean().openapi({
            description: `Within READY_MAX_LAG events of the log, and not stalled: behind the log with its checkpoint unmoved for ${STALL_MS / 1000} s as seen by this endpoint (no projector running on the store, or one hung)`,
          }),
          needs_replay: z.boolean(),
          failure,
        })
        .strict(),
    ),
    reactions: z.object({ checkpoint: z.string().nullable(), failure }).strict().nullable(),
    webhooks: webhookHealthOut.nullable(),
  })
  .strict()
  .openapi('Readiness');

export const readinessResponse = z.object({ data: readinessReport }).strict();

export const metricsText = z.string().openapi({ description: 'Prometheus text exposition format', example: '# HELP http_requests_total …' });

export const openApiDocument = z.object({ openapi: z.string() }).catchall(z.unknown()).openapi({ description: 'This document' });
