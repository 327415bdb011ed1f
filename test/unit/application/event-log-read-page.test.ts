import { expect } from 'chai';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';

const context = { correlation_id: 'c', causation_id: 'c', actor: 'test' };
const counted = (claimers: number) => ({ type: 'PaymentCustomerClaimCounted' as const, data: { claimers } });
const released = (claimers: number) => ({ type: 'PaymentCustomerClaimReleased' as const, data: { claimers } });

/**
 * A follower's page (EventLog#readPage): only the event types it handles, and how far the log
 * was read, so its checkpoint moves over the events it does not handle without decoding them.
 */
describe('EventLog#readPage: a follower reads only its event types', () => {
  let log: EventLog;
  let positions: bigint[];

  beforeEach(async () => {
    log = new EventLog(new MemoryEventStore(), new RandomIds());
    positions = [];
    // counted, released, counted, released, released: positions 1..5
    for (const [index, event] of [counted(1), released(0), counted(1), released(0), released(0)].entries()) {
      positions.push((await log.append(`payment-customer-${index}`, [event], 'no_stream', context)).position);
    }
  });

  it('a short page holds only those types and was read through the head, past the others after it', async () => {
    const page = await log.readPage(null, 10, ['PaymentCustomerClaimCounted']);
    expect(page.events.map((event) => event.position)).to.deep.equal([positions[0], positions[2]]);
    expect(page.through).to.equal(positions[4]);
  });

  it('a full page was read through its last event only', async () => {
    const page = await log.readPage(null, 2, ['PaymentCustomerClaimReleased']);
    expect(page.events.map((event) => event.position)).to.deep.equal([positions[1], positions[3]]);
    expect(page.through).to.equal(positions[3]);
    const next = await log.readPage(page.through, 2, ['PaymentCustomerClaimReleased']);
    expect(next.events.map((event) => event.position)).to.deep.equal([positions[4]]);
    expect(next.through).to.equal(positions[4]);
  });

  it('nothing of its types after the checkpoint: no events, and the log read through the head', async () => {
    const page = await log.readPage(positions[2]!, 10, ['PaymentCustomerClaimCounted']);
    expect(page.events).to.deep.equal([]);
    expect(page.through).to.equal(positions[4]);
  });

  it('no types at all reads nothing and still moves through the head; an empty log leaves it where it was', async () => {
    expect(await log.readPage(null, 10, [])).to.deep.equal({ events: [], through: positions[4], more: false, unreadable: null });
    const empty = new EventLog(new MemoryEventStore(), new RandomIds());
    expect(await empty.readPage(null, 10, ['PaymentCustomerClaimCounted'])).to.deep.equal({ events: [], through: null, more: false, unreadable: null });
  });

  it('a checkpoint already at the head stays there', async () => {
    expect(await log.readPage(positions[4]!, 10, ['PaymentCustomerClaimCounted'])).to.deep.equal({
      events: [],
      through: positions[4],
      more: false,
      unreadable: null,
    });
  });
});

describe('EventLog#readStreamPages: a long stream a page at a time', () => {
  it('gives every event once, in order, and lets the event loop take turns between pages', async () => {
    const log = new EventLog(new MemoryEventStore(), new RandomIds());
    await log.append(
      'payment-customer-long',
      Array.from({ length: 25 }, (_, index) => counted(index + 1)),
      'no_stream',
      context,
    );
    const turns: string[] = [];
    const readStream = log.store.readStream.bind(log.store);
    log.store.readStream = async (stream, options) => {
      turns.push('read');
      setImmediate(() => turns.push('other request'));
      return readStream(stream, options);
    };
    const pages: number[][] = [];
    for await (const page of log.readStreamPages('payment-customer-long', 10)) pages.push(page.map((event) => event.revision));
    expect(pages.map((page) => page.length)).to.deep.equal([10, 10, 5]);
    expect(pages.flat()).to.deep.equal(Array.from({ length: 25 }, (_, index) => index));
    expect(turns.join(' ')).to.not.contain('read read');
  });
});
