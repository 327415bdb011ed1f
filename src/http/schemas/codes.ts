import { CODE_TYPES } from '../../domain/events/code-events.js';
import { z } from './zod-openapi.js';
import { byKind } from './common.js';
import { programEntryOut } from './rewards.js';

const codeOut = z
  .object({
    type: z.enum(CODE_TYPES),
    code: z.string(),
    is_active: z.boolean(),
    entity: z
      .object({
        name: z.string(),
        logo_url: z.string().nullable(),
        platforms: z.array(z.object({ type: z.string(), handle: z.string(), verified: z.boolean() }).strict()),
      })
      .strict(),
    rewards: byKind(programEntryOut).strict(),
  })
  .strict()
  .openapi('Code');

export const codeResponse = z.object({ data: codeOut }).strict();
