import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { FeedCheckpointMovedError, type NewOutboxMessage, type WebhookOutbox } from '../../src/ports/webhook-outbox.js';
import type { ContractOptions, OpenContractSubject } from './contract-subject.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:10.000Z';
const T2 = '2026-01-01T00:01:00.000Z';

/** The outbox port's behaviour, the same on every adapter (SQLite here; MongoDB in the container suites). */
export function webhookOutboxContract(name: string, open: OpenContractSubject<WebhookOutbox>, _options: ContractOptions): void {
  describe(`Contract: WebhookOutbox on ${name}`, function () {
    let outbox: WebhookOutbox;
    let dispose: () => Promise<void>;
    // Unique names: the container suites share one server between tests.
    let endpoint: string;
    let feed: string;

    const message = (position: bigint, overrides: Partial<NewOutboxMessage> = {}): NewOutboxMessage => ({
      endpoint_id: endpoint,
      message_id: randomUUID(),
      event_id: randomUUID(),
      event_type: 'user.created',
      position,
      payload: JSON.stringify({ position: position.toString() }),
      enqueued_at: T0,
      ...overrides,
    });

    beforeEach(async () => {
      ({ store: outbox, dispose } = await open());
      endpoint = `ep-${randomUUID()}`;
      feed = `feed-${randomUUID()}`;
    });
    afterEach(async () => dispose());

    it('feeds messages and moves the checkpoint together; a stale checkpoint moves nothing', async () => {
      expect(await outbox.feedCheckpoint(feed)).to.equal(null);
      await outbox.feed(feed, [message(5n), message(7n)], null, 9n);
      expect(await outbox.feedCheckpoint(feed)).to.equal(9n);
      let thrown: unknown = null;
      try {
        await outbox.feed(feed, [], 3n, 12n);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.be.instanceOf(FeedCheckpointMovedError);
      expect(await outbox.feedCheckpoint(feed)).to.equal(9n);
      await outbox.feed(feed, [], 9n, 12n);
      expect(await outbox.feedCheckpoint(feed)).to.equal(12n);
    });

    it('a feed continuing a checkpoint that was never stored (or was reset) is stale too: nothing moves', async () => {
      let thrown: unknown = null;
      try {
        await outbox.feed(feed, [], 5n, 9n);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.be.instanceOf(FeedCheckpointMovedError);
      expect(await outbox.feedCheckpoint(feed)).to.equal(null);
    });

    it('a stale feed carrying messages adds none of them (a stale feeder must not bring messages back)', async () => {
      await outbox.feed(feed, [message(5n)], null, 9n);
      const stale = message(7n);
      let thrown: unknown = null;
      try {
        await outbox.feed(feed, [stale], 3n, 12n);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.be.instanceOf(FeedCheckpointMovedError);
      expect(await outbox.feedCheckpoint(feed)).to.equal(9n);
      expect((await outbox.list(endpoint, { limit: 10 })).map((row) => row.position)).to.deep.equal([5n]);
    });

    it('keeps a message fed twice as it is (same ids: at most one row)', async () => {
      const first = message(5n);
      await outbox.feed(feed, [first], null, 5n);
      await outbox.recordAttempt(endpoint, first.message_id, {
        due_at: T0,
        status: 'delivered',
        attempted_at: T1,
        next_attempt_at: T0,
        status_code: 200,
        error: null,
        latency_ms: 3,
      });
      await outbox.feed(feed, [first], 5n, 6n);
      const rows = await outbox.list(endpoint, { limit: 10 });
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ status: 'delivered', attempts: 1, delivered_at: T1 });
    });

    it('gives the oldest open message (log order) as the head, and says which endpoints are due', async () => {
      const [a, b] = [message(20n), message(10n)];
      await outbox.feed(feed, [a, b], null, 20n);
      expect((await outbox.head(endpoint))!.message_id).to.equal(b.message_id);
      expect(await outbox.dueEndpoints(T0)).to.include(endpoint);
      await outbox.recordAttempt(endpoint, b.message_id, {
        due_at: T0,
        status: 'failed',
        attempted_at: T0,
        next_attempt_at: T2,
        status_code: 500,
        error: 'HTTP 500',
        latency_ms: 4,
      });
      // The head waits for its next attempt: the endpoint is not due, the later message waits behind it.
      expect((await outbox.head(endpoint))!.message_id).to.equal(b.message_id);
      expect(await outbox.dueEndpoints(T1)).to.not.include(endpoint);
      expect(await outbox.dueEndpoints(T2)).to.include(endpoint);
      // Further ahead than any wait (a clock stepped back after the attempt): due now.
      const stepBack = new Date(Date.parse(T2) - 7 * 3_600_000).toISOString();
      expect(await outbox.dueEndpoints(stepBack)).to.include(endpoint);
      const failed = (await outbox.get(endpoint, b.message_id))!;
      expect(failed).to.include({
        status: 'failed',
        attempts: 1,
        first_attempt_at: T0,
        next_attempt_at: T2,
        last_status_code: 500,
        last_error: 'HTTP 500',
        last_latency_ms: 4,
        // Delivered at no time: `failed` is a delivery still to come.
        delivered_at: null,
      });
      expect(failed.position).to.equal(10n);
      await outbox.recordAttempt(endpoint, b.message_id, {
        due_at: T2,
        status: 'dead',
        attempted_at: T2,
        next_attempt_at: T2,
        status_code: 500,
        error: 'HTTP 500',
        latency_ms: 4,
      });
      expect((await outbox.head(endpoint))!.message_id).to.equal(a.message_id);
      expect((await outbox.get(endpoint, b.message_id))!).to.include({ status: 'dead', attempts: 2, first_attempt_at: T0, delivered_at: null });
    });

    it('lists by status and pages by position; counts depth and the oldest undelivered per endpoint', async () => {
      const rows = [message(1n, { enqueued_at: T1 }), message(2n, { enqueued_at: T0 }), message(3n, { enqueued_at: T2 })];
      await outbox.feed(feed, rows, null, 3n);
      await outbox.recordAttempt(endpoint, rows[0]!.message_id, {
        due_at: T1,
        status: 'delivered',
        attempted_at: T1,
        next_attempt_at: T1,
        status_code: 204,
        error: null,
        latency_ms: 1,
      });
      expect((await outbox.list(endpoint, { limit: 10 })).map((row) => row.position)).to.deep.equal([1n, 2n, 3n]);
      expect((await outbox.list(endpoint, { limit: 10, after: 1n })).map((row) => row.position)).to.deep.equal([2n, 3n]);
      expect((await outbox.list(endpoint, { limit: 1, after: 1n })).map((row) => row.position)).to.deep.equal([2n]);
      expect((await outbox.list(endpoint, { limit: 10, status: 'delivered' })).map((row) => row.delivered_at)).to.deep.equal([T1]);
      const stats = (await outbox.stats()).find((row) => row.endpoint_id === endpoint);
      expect(stats).to.deep.equal({ endpoint_id: endpoint, depth: 2, oldest_enqueued_at: T0 });
      // Another endpoint's queue, its next message enqueued after a later one (put back by a replay):
      // the age is that of the message next in line, which the others wait on.
      const other = `ep-${randomUUID()}`;
      await outbox.feed(feed, [message(4n, { endpoint_id: other, enqueued_at: T2 }), message(5n, { endpoint_id: other, enqueued_at: T0 })], 3n, 5n);
      const both = (await outbox.stats()).filter((row) => row.endpoint_id === endpoint || row.endpoint_id === other);
      expect(both).to.have.deep.members([
        { endpoint_id: endpoint, depth: 2, oldest_enqueued_at: T0 },
        { endpoint_id: other, depth: 2, oldest_enqueued_at: T2 },
      ]);
      expect(await outbox.dueEndpoints(T2)).to.include.members([endpoint, other]);
    });

    it('forgets messages delivered before a time, at most `limit` at once, and keeps open, dead and later ones', async () => {
      const rows = [1n, 2n, 3n, 4n, 5n].map((position) => message(position));
      await outbox.feed(feed, rows, null, 5n);
      const attempt = (status: 'delivered' | 'dead', at: string) => ({
        due_at: T0,
        status,
        attempted_at: at,
        next_attempt_at: at,
        status_code: 200,
        error: null,
        latency_ms: 1,
      });
      await outbox.recordAttempt(endpoint, rows[0]!.message_id, attempt('delivered', T0));
      await outbox.recordAttempt(endpoint, rows[1]!.message_id, attempt('delivered', T1));
      await outbox.recordAttempt(endpoint, rows[2]!.message_id, attempt('delivered', T2));
      await outbox.recordAttempt(endpoint, rows[3]!.message_id, attempt('dead', T0));
      expect(await outbox.removeDelivered(T2, 1)).to.equal(1);
      expect(await outbox.removeDelivered(T2, 10)).to.equal(1);
      expect(await outbox.removeDelivered(T2, 10)).to.equal(0);
      // Delivered at T2 (not before it), dead, and pending: kept.
      expect((await outbox.list(endpoint, { limit: 10 })).map((row) => [row.position, row.status])).to.deep.equal([
        [3n, 'delivered'],
        [4n, 'dead'],
        [5n, 'pending'],
      ]);
      expect(await outbox.get(endpoint, rows[0]!.message_id)).to.equal(null);
    });

    it('redelivers one message and requeues (replay) delivered and new ones from zero attempts', async () => {
      const [a, b] = [message(1n), message(2n)];
      await outbox.feed(feed, [a], null, 1n);
      await outbox.recordAttempt(endpoint, a.message_id, {
        due_at: T0,
        status: 'delivered',
        attempted_at: T0,
        next_attempt_at: T0,
        status_code: 200,
        error: null,
        latency_ms: 1,
      });
      expect(await outbox.redeliver(endpoint, a.message_id, T1)).to.equal(true);
      expect(await outbox.redeliver(endpoint, randomUUID(), T1)).to.equal(false);
      expect((await outbox.get(endpoint, a.message_id))!).to.include({
        status: 'pending',
        attempts: 0,
        first_attempt_at: null,
        next_attempt_at: T1,
        delivered_at: null,
      });
      await outbox.recordAttempt(endpoint, a.message_id, {
        due_at: T1,
        status: 'delivered',
        attempted_at: T1,
        next_attempt_at: T1,
        status_code: 200,
        error: null,
        latency_ms: 1,
      });
      expect(await outbox.requeue([{ ...a, enqueued_at: T2, payload: '{"again":true}' }, b], T2)).to.equal(2);
      const rows = await outbox.list(endpoint, { limit: 10 });
      expect(rows.map((row) => [row.status, row.attempts, row.next_attempt_at])).to.deep.equal([
        ['pending', 0, T2],
        ['pending', 0, T2],
      ]);
      // The message there keeps what it was enqueued as and how its last attempt went; its payload is the new one.
      expect(rows[0]).to.include({ enqueued_at: T0, last_status_code: 200, last_latency_ms: 1, payload: '{"again":true}' });
      expect(rows[1]).to.include({ enqueued_at: T0, last_status_code: null });
    });

    it('ignores an attempt whose message was redelivered or requeued while it was in flight: the message goes again', async () => {
      const [a, b] = [message(1n), message(2n)];
      await outbox.feed(feed, [a, b], null, 2n);
      const inFlight = { status: 'delivered', attempted_at: T1, next_attempt_at: T0, status_code: 200, error: null, latency_ms: 1 } as const;
      expect(await outbox.redeliver(endpoint, a.message_id, T1)).to.equal(true);
      await outbox.recordAttempt(endpoint, a.message_id, { ...inFlight, due_at: T0 });
      expect((await outbox.get(endpoint, a.message_id))!).to.include({ status: 'pending', attempts: 0, next_attempt_at: T1, delivered_at: null });
      expect(await outbox.requeue([b], T2)).to.equal(1);
      await outbox.recordAttempt(endpoint, b.message_id, { ...inFlight, status: 'failed', next_attempt_at: T2, due_at: T0 });
      expect((await outbox.get(endpoint, b.message_id))!).to.include({ status: 'pending', attempts: 0, next_attempt_at: T2 });
      // The attempt made for the redelivery is recorded.
      await outbox.recordAttempt(endpoint, a.message_id, { ...inFlight, attempted_at: T2, due_at: T1 });
      expect((await outbox.get(endpoint, a.message_id))!).to.include({ status: 'delivered', attempts: 1, delivered_at: T2 });
    });

    it('remembers since when an endpoint fails, and forgets a removed endpoint', async () => {
      expect(await outbox.failingSince(endpoint)).to.equal(null);
      await outbox.setFailingSince(endpoint, T1);
      expect(await outbox.failingSince(endpoint)).to.equal(T1);
      await outbox.setFailingSince(endpoint, null);
      expect(await outbox.failingSince(endpoint)).to.equal(null);
      await outbox.feed(feed, [message(1n)], null, 1n);
      await outbox.setFailingSince(endpoint, T1);
      await outbox.removeEndpoint(endpoint);
      expect(await outbox.list(endpoint, { limit: 10 })).to.deep.equal([]);
      expect(await outbox.head(endpoint)).to.equal(null);
      expect(await outbox.failingSince(endpoint)).to.equal(null);
    });

    it("removes every message of a removed endpoint however many it holds, and no other endpoint's", async () => {
      const other = `ep-${randomUUID()}`;
      const many = Array.from({ length: 12_345 }, (_, index) => message(BigInt(index + 1)));
      await outbox.feed(feed, [...many, message(1n, { endpoint_id: other })], null, 20_000n);
      await outbox.removeEndpoint(endpoint);
      expect(await outbox.head(endpoint)).to.equal(null);
      expect(await outbox.list(endpoint, { limit: 10 })).to.deep.equal([]);
      expect((await outbox.list(other, { limit: 10 })).map((row) => row.position)).to.deep.equal([1n]);
    });

    it('a removal under way leaves the messages fed meanwhile for an endpoint created again under the id', async () => {
      await outbox.feed(
        feed,
        Array.from({ length: 12_345 }, (_, index) => message(BigInt(index + 1))),
        null,
        20_000n,
      );
      const removing = outbox.removeEndpoint(endpoint);
      // The endpoint is deleted and created again while the removal goes on; the feed then queues its first message.
      await new Promise((resolve) => setImmediate(resolve));
      await outbox.feed(feed, [message(20_001n)], 20_000n, 20_001n);
      await removing;
      expect((await outbox.list(endpoint, { limit: 10 })).map((row) => row.position)).to.deep.equal([20_001n]);
    });
  });
}
