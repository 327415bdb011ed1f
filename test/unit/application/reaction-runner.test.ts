import { expect } from 'chai';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { ReactionRunner } from '../../../src/application/reactions/reaction-runner.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';
import type { Logger } from '../../../src/ports/logger.js';
import { registered } from '../../support/events.js';

/** A logger that keeps the level of every line. */
function levels(): { logger: Logger; lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (_object: Record<string, unknown>, message?: string) => void lines.push({ level, message: message ?? '' });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger } as unknown as Logger;
  return { logger, lines };
}

describe('ReactionRunner', () => {
  for (const [failure, level] of [
    [new StoreUnavailableError('The revenue index is behind; retry'), 'warn'],
    [new Error('a bug'), 'error'],
  ] as const) {
    it(`a page that fails with ${failure.name} is kept for the next try and logged as ${level}`, async () => {
      const log = new EventLog(new MemoryEventStore(), new RandomIds());
      await log.append('user-ann', [registered('ann')], 'no_stream', { correlation_id: 'c', causation_id: 'c', actor: 'test' });
      const { logger, lines } = levels();
      const runner = new ReactionRunner(
        log,
        new MemoryReadStore(),
        [
          {
            name: 'failing',
            eventTypes: ['UserRegistered'],
            handle: async () => {
              throw failure;
            },
          },
        ],
        logger,
      );
      await runner.init();
      expect(await runner.processPage()).to.equal(false);
      expect(lines.filter((line) => line.message.startsWith('reaction failed'))).to.deep.equal([
        { level, message: 'reaction failed; it will be retried from this page' },
      ]);
      expect(runner.health().failure).to.not.equal(null);
    });
  }

  it('a store that stays out of reach for more than a minute is logged as an error from then on', async () => {
    const log = new EventLog(new MemoryEventStore(), new RandomIds());
    await log.append('user-ann', [registered('ann')], 'no_stream', { correlation_id: 'c', causation_id: 'c', actor: 'test' });
    const { logger, lines } = levels();
    const failing = {
      name: 'failing',
      eventTypes: ['UserRegistered'] as const,
      handle: async () => {
        throw new StoreUnavailableError('The disk failed to sync the event log; restart the service');
      },
    };
    const runner = new ReactionRunner(log, new MemoryReadStore(), [failing], logger);
    await runner.init();
    const realNow = Date.now;
    try {
      await runner.processPage();
      Date.now = () => realNow() + 61_000;
      await runner.processPage();
    } finally {
      Date.now = realNow;
    }
    expect(lines.filter((line) => line.message.startsWith('reaction failed')).map((line) => line.level)).to.deep.equal(['warn', 'error']);
  });
});
