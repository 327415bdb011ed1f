import type { Response } from 'express';
import type { CommandContext } from '../application/event-log.js';

/** Event metadata for a command issued by this HTTP request. */
export function commandContext(res: Response): CommandContext {
  return { correlation_id: res.locals.requestId, causation_id: res.locals.requestId, actor: res.locals.caller.actor };
}
