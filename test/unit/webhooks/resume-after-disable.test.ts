import 'reflect-metadata';
import fs from 'node:fs';
import { expect } from 'chai';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteWebhookOutbox } from '../../../src/adapters/sqlite/sqlite-webhook-outbox.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { endpointMessagesBetween, WEBHOOK_FEED, WebhookFeeder } from '../../../src/application/webhooks/webhook-feeder.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { NewOutboxMessage, WebhookOutbox } from '../../../src/ports/webhook-outbox.js';
import { event, registered } from '../../support/events.js';
import { tempDir } from '../../support/temp-dir.js';
import { ManualClock } from '../../support/test-service.js';

const CONTEXT = { correlation_id: 'c', causation_id: 'c', actor: 'test' };
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as unknown as Logger;
const endpoint = (enabled: boolean) => ({
  id: 'e',
  url: 'https://example.com/hook',
  events: ['user.created'],
  description: null,
  enabled,
  created_at: '2026-11-25T00:00:00.000Z',
  updated_at: null,
});

/** An outbox whose first requeue fails, as a process killed while queuing would. */
function crashingOnFirstRequeue(outbox: WebhookOutbox): WebhookOutbox {
  let crashed = false;
  return new Proxy(outbox, {
    get(target, key) {
      if (key === 'requeue' && !crashed)
        return async (_messages: NewOutboxMessage[]) => {
          crashed = true;
          throw new Error('killed while queuing');
        };
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('webhooks: an endpoint the delivery engine disabled, switched on again (WebhookFeeder)', () => {
  let dir: string;
  let db: ReturnType<typeof openSqlite>;
  let outbox: SqliteWebhookOutbox;
  let log: EventLog;

  beforeEach(async () => {
    dir = tempDir('resume-after-disable');
    db = openSqlite(dir);
    outbox = new SqliteWebhookOutbox(db);
    log = new EventLog(new MemoryEventStore(), new RandomIds());
    await log.append('user-before', [registered('before')], 'no_stream', CONTEXT);
  });

  afterEach(async () => {
    await outbox.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const feeder = (store: WebhookOutbox) => new WebhookFeeder(log, store, new RandomIds(), new ManualClock(), false, () => {}, quiet);
  const feedAll = async (running: WebhookFeeder) => {
    for (let page = 0; page < 20 && (await running.processPage()); page++);
  };
  const queuedUsers = async () => (await outbox.list('e', { limit: 100 })).map((message) => JSON.parse(message.payload).data.app_user_id);

  it('queues the messages of the events it missed while off, even when the process stops midway (the feed stays before the switch)', async () => {
    const first = feeder(crashingOnFirstRequeue(outbox));
    await first.init();
    await log.append('webhook-e', [event('WebhookEndpointCreated', { webhook: endpoint(true), secret: 'whsec_x' })], 'no_stream', CONTEXT);
    await log.append('user-a', [registered('a')], 'no_stream', CONTEXT);
    await log.append('webhook-e', [event('WebhookEndpointDisabled', { id: 'e', disabled_at: '2026-11-25T01:00:00.000Z', reason: '410 Gone' })], 0, CONTEXT);
    await log.append('user-b', [registered('b')], 'no_stream', CONTEXT);
    await log.append('user-c', [registered('c')], 'no_stream', CONTEXT);
    const switchedOn = await log.append('webhook-e', [event('WebhookEndpointUpdated', { webhook: endpoint(true) })], 1, CONTEXT);
    await log.append('user-d', [registered('d')], 'no_stream', CONTEXT);

    let stopped: unknown = null;
    try {
      await feedAll(first);
    } catch (error) {
      stopped = error;
    }
    expect(stopped).to.be.instanceOf(Error);
    expect(await queuedUsers()).to.deep.equal(['a']);
    expect((await outbox.feedCheckpoint(WEBHOOK_FEED))! < switchedOn.position).to.equal(true);

    // The next start queues what the first did not, and goes on.
    const second = feeder(outbox);
    await second.init();
    await feedAll(second);
    expect(await queuedUsers()).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(await outbox.feedCheckpoint(WEBHOOK_FEED)).to.equal(await log.store.headPosition());
  });

  it('queues nothing it missed after an operator pause', async () => {
    const running = feeder(outbox);
    await running.init();
    await log.append('webhook-e', [event('WebhookEndpointCreated', { webhook: endpoint(true), secret: 'whsec_x' })], 'no_stream', CONTEXT);
    await log.append('webhook-e', [event('WebhookEndpointUpdated', { webhook: endpoint(false) })], 0, CONTEXT);
    await log.append('user-b', [registered('b')], 'no_stream', CONTEXT);
    await log.append('webhook-e', [event('WebhookEndpointUpdated', { webhook: endpoint(true) })], 1, CONTEXT);
    await log.append('user-d', [registered('d')], 'no_stream', CONTEXT);
    await feedAll(running);
    expect(await queuedUsers()).to.deep.equal(['d']);
  });

  it("reads a range of the log by the event types the endpoint's messages come from: the others are not read", async () => {
    for (const user of ['a', 'b', 'c']) await log.append(`user-${user}`, [registered(user)], 'no_stream', CONTEXT);
    const head = (await log.store.headPosition())!;
    let read = 0;
    const readAll = log.store.readAll.bind(log.store);
    log.store.readAll = async (options) => {
      const page = await readAll(options);
      read += page.length;
      return page;
    };
    const messages = async (events: string[]) => {
      const found: string[] = [];
      for await (const rows of endpointMessagesBetween(log, new RandomIds(), { id: 'e', events }, { after: null, until: head }, 'now'))
        found.push(...rows.map((row) => JSON.parse(row.payload).data.app_user_id));
      return found;
    };
    expect(await messages(['code.claimed', 'credits.withdrawn'])).to.deep.equal([]);
    expect(read).to.equal(0);
    expect(await messages(['user.created'])).to.deep.equal(['before', 'a', 'b', 'c']);
    expect(read).to.equal(4);
  });
});
