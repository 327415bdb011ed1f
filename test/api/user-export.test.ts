import 'reflect-metadata';
import { expect } from 'chai';
import { EXPORT_PAGE, UserExport } from '../../src/application/privacy/user-export.js';
import { LEDGER_PAGE } from '../../src/application/queries/event-queries.js';
import { ForwardingEventStore, type ReadStreamOptions } from '../../src/ports/event-store.js';
import { CountingReadStore } from '../support/counting-read-store.js';
import { createUser, eventually, putReward } from '../support/fixtures.js';
import { REVENUECAT_AUTH, rcEvent, revenueCat } from '../support/revenue-senders.js';
import { SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

/** The event store the service runs on, counting the most events one stream read returns, with a hook on the head's read. */
class WatchedEventStore extends ForwardingEventStore {
  largestStreamRead = 0;
  afterHeadRead: (() => Promise<void>) | null = null;

  override async readStream(stream: string, options?: ReadStreamOptions) {
    const events = await super.readStream(stream, options);
    this.largestStreamRead = Math.max(this.largestStreamRead, events.length);
    return events;
  }

  override async headPosition() {
    const head = await super.headPosition();
    const hook = this.afterHeadRead;
    this.afterHeadRead = null;
    await hook?.();
    return head;
  }
}

/**
 * GET /admin/users/{id}/export for a user whose ledger and stream are longer than a page: the one
 * JSON document is written out a page at a time (never read whole), and lists what the admin
 * API's paged views list, as of the log's head when it started.
 */
describe('API: the export of a long history (GET /admin/users/{id}/export)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let readStore: CountingReadStore;
  let eventStore: WatchedEventStore;
  const GRANTS = EXPORT_PAGE + 20;

  const exportOf = async (user: string) => {
    const response = await fetch(`${svc.url}/admin/users/${user}/export`, { headers: { 'x-api-key': SECRET_KEY } });
    return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
  };
  const eventsOf = async (user: string) => {
    const found: unknown[] = [];
    for (let after = ''; ; ) {
      const page = (await svc.admin('GET', `/admin/events?stream=user-${user}&limit=200${after}`)).body.data;
      found.push(...page.events);
      if (page.events.length < 200) return found;
      after = `&after=${page.next_after}`;
    }
  };

  before(async () => {
    svc = await startTestService({
      env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH },
      backend: (backend) => {
        readStore = new CountingReadStore(backend.readStore);
        eventStore = new WatchedEventStore(backend.eventStore);
        return { ...backend, readStore, eventStore };
      },
    });
    await putReward(svc, 'gems', { kind: 'credit', name: 'Gems', credits: 3 });
    await createUser(svc, 'long');
    await createUser(svc, 'other');
    for (let i = 0; i < GRANTS; i++)
      expect((await svc.admin('POST', '/users/long/rewards/grant', { key: 'gems', operation_id: `g${i}` })).status).to.equal(201);
    expect((await svc.call('POST', '/users/long/rewards/withdraw-credits', { key: 'gems', amount: 7, operation_id: 'w1' })).status).to.equal(200);
    for (const [id, user] of [
      ['rc-1', 'long'],
      ['rc-2', 'other'],
      ['rc-3', 'long'],
    ] as const) {
      expect((await revenueCat(svc, rcEvent(id, 'INITIAL_PURCHASE', user))).status).to.equal(200);
    }
    expect((await svc.call('POST', '/users/long/transactions/app-store', { original_transaction_id: '9100000001' })).status).to.equal(204);
    expect((await svc.call('POST', '/users/other/transactions/app-store', { original_transaction_id: '9100000002' })).status).to.equal(204);
    expect((await svc.call('POST', '/users/long/transactions/app-store', { original_transaction_id: '9100000002' })).status).to.equal(204);
  });
  after(async () => svc?.stop());

  it('is written out a page at a time: no read of the stores returns more than a page, and the answer is chunked', async () => {
    readStore.resetCounts();
    eventStore.largestStreamRead = 0;
    const exported = await exportOf('long');
    expect(exported.status).to.equal(200);
    expect(exported.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(exported.headers.get('transfer-encoding')).to.equal('chunked');
    expect(exported.body.data.export.credit_ledger).to.have.length(GRANTS + 1);
    expect(exported.body.data.export.events.length).to.be.greaterThan(GRANTS);
    // The ledger page asks for its cursor row and one look-ahead besides (EventQueries#creditLedger).
    expect(readStore.largestRead).to.be.at.most(EXPORT_PAGE + 2);
    expect(eventStore.largestStreamRead).to.be.at.most(EXPORT_PAGE);
  });

  it('the unpaged credit ledger is written out the same way: a page of rows at a time, chunked, the same rows as the pages (scale probe)', async () => {
    readStore.resetCounts();
    const response = await fetch(`${svc.url}/admin/users/long/credit-ledger`, { headers: { 'x-api-key': SECRET_KEY } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(response.headers.get('transfer-encoding')).to.equal('chunked');
    const whole = JSON.parse(await response.text());
    expect(whole.data.entries).to.have.length(GRANTS + 1);
    expect(GRANTS + 1).to.be.greaterThan(LEDGER_PAGE);
    expect(readStore.largestRead).to.be.at.most(LEDGER_PAGE + 2);
    expect(whole.data.next_after).to.equal(null);
    const paged: unknown[] = [];
    for (let after = ''; ; ) {
      const page = (await svc.admin('GET', `/admin/users/long/credit-ledger?limit=300${after}`)).body.data;
      paged.push(...page.entries);
      if (page.next_after === null) break;
      after = `&after=${page.next_after}`;
    }
    expect(whole.data.entries).to.deep.equal(paged);
    // With `after` and no limit: every row after it, written alike.
    const afterFirst = (await svc.admin('GET', '/admin/users/long/credit-ledger?limit=1')).body.data.next_after;
    expect((await svc.admin('GET', `/admin/users/long/credit-ledger?after=${afterFirst}`)).body.data.entries).to.deep.equal(paged.slice(1));
    // `?key=` streams alike.
    expect((await svc.admin('GET', '/admin/users/long/credit-ledger?key=gems')).body.data.entries).to.deep.equal(paged);
  });

  it('lists every ledger row, event, matched notification and transaction of the user, as the admin API shows them', async () => {
    const { body } = await exportOf('long');
    const document = body.data.export;
    expect(Object.keys(document)).to.deep.equal([
      'app_user_id',
      'exported_at',
      'user',
      'affiliates',
      'credit_ledger',
      'events',
      'notifications',
      'transactions',
    ]);
    expect(document.user).to.deep.equal((await svc.call('GET', '/users/long')).body.data.user);
    expect(document.affiliates).to.deep.equal([]);
    const ledger = (await svc.admin('GET', '/admin/users/long/credit-ledger')).body.data.entries;
    expect(document.credit_ledger).to.deep.equal(ledger);
    expect(document.credit_ledger.at(-1)).to.include({ delta: -7 });
    expect(document.events).to.deep.equal(await eventsOf('long'));
    expect(document.notifications.map((event: { type: string; data: any }) => [event.type, event.data.notification.notification_id])).to.deep.equal([
      ['NotificationReceived', 'rc-1'],
      ['NotificationReceived', 'rc-3'],
    ]);
    const { links, refused_attempts } = (await svc.admin('GET', '/admin/users/long/transactions')).body.data;
    expect(document.transactions).to.deep.equal({
      links,
      refused_attempts: refused_attempts.map(({ linked_app_user_id: _other, ...attempt }: Record<string, unknown>) => attempt),
    });
    expect(document.transactions.links.map((link: { transaction_id: string }) => link.transaction_id)).to.deep.equal(['9100000001']);
    expect(document.transactions.refused_attempts.map((link: { transaction_id: string }) => link.transaction_id)).to.deep.equal(['9100000002']);
  });

  it('crosses page ends alike in every section: pages of one or two rows or events give the same document', async () => {
    const whole = (await exportOf('long')).body.data.export;
    for (const pageSize of [1, 2]) {
      const exports = svc.service.container.resolve(UserExport);
      exports.pageSize = pageSize;
      let text = '';
      for await (const piece of (await exports.open('long', `paged-${pageSize}`))!) text += piece;
      const { exported_at: _at, ...paged } = JSON.parse(text).data.export;
      const { exported_at: _wholeAt, ...expected } = whole;
      expect(paged, `pages of ${pageSize}`).to.deep.equal(expected);
    }
    expect(whole.notifications).to.have.length(2);
    expect(whole.transactions.links.length + whole.transactions.refused_attempts.length).to.equal(2);
  });

  it('is a picture of the moment it started: a grant, a notification or a transaction link committed while it is written is in none of its lists', async () => {
    const before = (await exportOf('long')).body.data.export;
    let written = false;
    eventStore.afterHeadRead = async () => {
      expect((await svc.admin('POST', '/users/long/rewards/grant', { key: 'gems', operation_id: 'during-export' })).status).to.equal(201);
      expect((await revenueCat(svc, rcEvent('rc-during-export', 'INITIAL_PURCHASE', 'long'))).body.data.status).to.equal('applied');
      expect((await svc.call('POST', '/users/long/transactions/app-store', { original_transaction_id: '9100000077' })).status).to.equal(204);
      written = true;
    };
    const document = (await exportOf('long')).body.data.export;
    expect(written).to.equal(true);
    const grants = (events: { type: string }[]) => events.filter((event) => event.type === 'RewardGranted').length;
    expect(grants(document.events)).to.equal(GRANTS);
    expect(document.credit_ledger).to.have.length(GRANTS + 1);
    expect(document.notifications).to.deep.equal(before.notifications);
    expect(document.transactions).to.deep.equal(before.transactions);
    // The next export lists it in both.
    const next = await eventually(async () => {
      const again = (await exportOf('long')).body.data.export;
      expect(again.credit_ledger).to.have.length(GRANTS + 2);
      return again;
    });
    expect(grants(next.events)).to.equal(GRANTS + 1);
    expect(next.notifications).to.have.length(before.notifications.length + 1);
    expect(next.transactions.links).to.have.length(before.transactions.links.length + 1);
  });
});
