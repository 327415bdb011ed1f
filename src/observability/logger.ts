import { pino } from 'pino';
import type { Logger } from '../ports/logger.js';

/** Structured JSON logs on stdout. */
export function createLogger(level: string): Logger & pino.Logger {
  return pino({ level, base: { service: 'referral-rewards' }, timestamp: pino.stdTimeFunctions.isoTime });
}
