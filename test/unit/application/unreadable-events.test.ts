import { expect } from 'chai';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import { ReactionRunner } from '../../../src/application/reactions/reaction-runner.js';
import type { EventStore, PageOptions } from '../../../src/ports/event-store.js';
import type { Logger } from '../../../src/ports/logger.js';
import { COUNTS, counting } from '../../support/counting-projection.js';
import { registered } from '../../support/events.js';

const CONTEXT = { correlation_id: 'c', causation_id: 'c', actor: 'test' };

/** A logger that keeps the level and message of every line. */
function lines(): { logger: Logger; logged: { level: string; message: string }[] } {
  const logged: { level: string; message: string }[] = [];
  const at = (level: string) => (_object: Record<string, unknown>, message?: string) => void logged.push({ level, message: message ?? '' });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger } as unknown as Logger;
  return { logger, logged };
}

/**
 * A log whose second UserRegistered its schema refuses: written by hand, or by another version of
 * the service (an operator probe inserted one; every follower failed page after page, and
 * /readyz said ready).
 */
async function logWithUnreadableEvent(): Promise<{ log: EventLog; store: MemoryEventStore; bad: { id: string; position: bigint } }> {
  const store = new MemoryEventStore();
  const log = new EventLog(store, new RandomIds());
  await log.append('user-ann', [registered('ann')], 'no_stream', CONTEXT);
  const written = await store.append(
    'user-bad',
    [{ id: 'bad-event', type: 'UserRegistered', data: { app_user_id: 42 }, metadata: { ...CONTEXT, schema_version: 7 } }],
    'no_stream',
  );
  await log.append('user-bob', [registered('bob')], 'no_stream', CONTEXT);
  return { log, store, bad: { id: 'bad-event', position: written.position } };
}

/**
 * The same store with positions as EventStoreDB gives them (byte offsets: here every 317th number),
 * refusing a page from any other number, as EventStoreDB does (InvalidPosition).
 */
function withByteOffsets(store: MemoryEventStore, step = 317n): EventStore {
  const readPage = async (options: PageOptions) => {
    if (options.after !== null && options.after % step !== 0n) throw new Error(`InvalidPosition: ${options.after} is not the start of a log record`);
    const page = await store.readPage({ ...options, after: options.after === null ? null : options.after / step });
    const events = page.events.map((event) => ({ ...event, position: event.position * step }));
    return { ...page, events, through: page.through === null ? null : page.through * step };
  };
  return new Proxy(store, {
    get: (target, key) => (key === 'readPage' ? readPage : Reflect.get(target, key, target)),
  }) as EventStore;
}

describe('An event of the log its schema refuses (UnreadableEventError)', () => {
  it('holds the projections that read its type at it, as a poison event (in their status, logged once), the events before it applied', async () => {
    const { log, bad } = await logWithUnreadableEvent();
    const { logger, logged } = lines();
    const readStore = new MemoryReadStore();
    const runner = new ProjectionRunner(log, readStore, [counting], logger);
    await runner.init();
    for (let page = 0; page < 3; page++) expect(await runner.processPage()).to.equal(false);
    const [status] = runner.status();
    expect(status!.failure).to.deep.include({ position: bad.position.toString(), eventId: bad.id });
    expect(status!.failure!.error).to.contain('cannot be read');
    expect(status!.checkpoint).to.equal(bad.position - 1n);
    expect(await readStore.get(COUNTS, 'user-ann')).to.deep.equal({ count: 1 });
    expect(await readStore.get(COUNTS, 'user-bob')).to.equal(null);
    expect(logged.filter((line) => line.message.startsWith('POISON EVENT'))).to.have.length(1);
    expect(logged.filter((line) => line.message.includes('log follower failed'))).to.deep.equal([]);
  });

  it('holds the reactions that read its type at it (in their health, logged once), the events before it handled', async () => {
    const { log, bad } = await logWithUnreadableEvent();
    const { logger, logged } = lines();
    const handled: string[] = [];
    const runner = new ReactionRunner(
      log,
      new MemoryReadStore(),
      [{ name: 'greeter', eventTypes: ['UserRegistered'], handle: async (event) => void handled.push(event.stream) }],
      logger,
    );
    await runner.init();
    for (let page = 0; page < 3; page++) expect(await runner.processPage()).to.equal(false);
    expect(runner.health().failure).to.deep.include({ position: bad.position.toString(), eventId: bad.id });
    expect(runner.health().checkpoint).to.equal((bad.position - 1n).toString());
    expect(logged.filter((line) => line.level === 'error')).to.have.length(1);
    expect(handled).to.deep.equal(['user-ann']);
  });

  it('holds only the projections that read its type: one beside them in the same runner reads on past it', async () => {
    const { log, store } = await logWithUnreadableEvent();
    const readStore = new MemoryReadStore();
    const other = { ...counting, name: 'other', eventTypes: ['CodeClaimed'] as const };
    const runner = new ProjectionRunner(log, readStore, [counting, other], lines().logger);
    await runner.init();
    for (let page = 0; page < 3; page++) await runner.processPage();
    const byName = new Map(runner.status().map((status) => [status.name, status]));
    expect(byName.get('other')!.failure).to.equal(null);
    expect(byName.get('other')!.checkpoint).to.equal(await store.headPosition());
    expect(byName.get(counting.name)!.failure).to.not.equal(null);
  });

  it('holds a follower at the last event it read, a position the store can read from (EventStoreDB positions are byte offsets)', async () => {
    const { store, bad } = await logWithUnreadableEvent();
    const log = new EventLog(withByteOffsets(store), new RandomIds());
    const handled: string[] = [];
    const runner = new ReactionRunner(
      log,
      new MemoryReadStore(),
      [{ name: 'greeter', eventTypes: ['UserRegistered'], handle: async (event) => void handled.push(event.stream) }],
      lines().logger,
    );
    await runner.init();
    for (let page = 0; page < 3; page++) expect(await runner.processPage()).to.equal(false);
    expect(runner.health().checkpoint).to.equal(((bad.position - 1n) * 317n).toString());
    expect(runner.health().failure).to.deep.include({ position: (bad.position * 317n).toString(), eventId: bad.id });
    expect(handled).to.deep.equal(['user-ann']);
  });

  it('reads nothing past `after` when the first event of the page is the one refused', async () => {
    const { store, bad } = await logWithUnreadableEvent();
    const log = new EventLog(withByteOffsets(store), new RandomIds());
    const after = (bad.position - 1n) * 317n;
    const page = await log.readPage(after, 10, ['UserRegistered']);
    expect(page).to.deep.include({ events: [], through: after, more: false });
    expect(page.unreadable!.event.id).to.equal(bad.id);
    expect((await log.readPage(null, 10, ['UserRegistered'])).through).to.equal(after);
  });
});
