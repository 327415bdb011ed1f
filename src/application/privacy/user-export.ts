import { inject, injectable } from 'tsyringe';
import { INBOUND } from '../../../projections/revenue-index.js';
import { streams } from '../../domain/events/index.js';
import type { RevenueProvider } from '../../domain/revenue/revenue-notification.js';
import type { Clock } from '../../ports/clock.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { type ExportedEvent, exportedEvent } from '../export/event-export-format.js';
import { EventQueries } from '../queries/event-queries.js';
import { TransactionQueries } from '../queries/transaction-queries.js';
import { UserQueries } from '../queries/user-queries.js';

type UserTransactions = Awaited<ReturnType<TransactionQueries['ofUser']>>;

/** Everything the service holds about one user (SPEC §13, the data subject's access request). */
export interface UserDataExport {
  app_user_id: string;
  exported_at: string;
  /** The user as `GET /users/{app_user_id}` shows it (profile, program, code, referral, rewards, stats). */
  user: Record<string, unknown>;
  /** The affiliates linked to the user, whole as the admin API shows them (name, platforms, codes…). */
  affiliates: Record<string, unknown>[];
  /** Every credit movement (`GET /admin/users/{app_user_id}/credit-ledger`). */
  credit_ledger: Record<string, unknown>[];
  /** Every event of the user's stream, personal fields decrypted (erased ones `{"erased": true}`). */
  events: ExportedEvent[];
  /** The revenue notifications matched to the user, as recorded (personal fields decrypted likewise). */
  notifications: ExportedEvent[];
  /**
   * The store transactions linked to the user and its refused link attempts (as `GET
   * /admin/users/{app_user_id}/transactions` lists them), without the user each refused
   * transaction stays linked to: that is another person's id, not this user's data.
   */
  transactions: { links: UserTransactions['links']; refused_attempts: Omit<UserTransactions['refused_attempts'][number], 'linked_app_user_id'>[] };
}

@injectable()
export class UserExport {
  constructor(
    @inject(UserQueries) private readonly users: UserQueries,
    @inject(EventQueries) private readonly events: EventQueries,
    @inject(TransactionQueries) private readonly transactions: TransactionQueries,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** null when the user is unknown. */
  async export(appUserId: string, requestId: string): Promise<UserDataExport | null> {
    const user = await this.users.userView(appUserId);
    if (user === null) return null;
    const [affiliates, ledger, events, notifications, transactions] = await Promise.all([
      this.users.affiliateRecordsOfUser(appUserId),
      this.events.creditLedger(appUserId, null, requestId).then(({ rows }) => rows),
      this.store.readStream(streams.user(appUserId)),
      this.notifications(appUserId),
      this.transactions.ofUser(appUserId),
    ]);
    return {
      app_user_id: appUserId,
      exported_at: this.clock.now().toISOString(),
      user,
      affiliates,
      credit_ledger: ledger.map(({ seq: _seq, app_user_id: _user, request_id: _request, ...row }) => row),
      events: events.map(exportedEvent),
      notifications,
      transactions: {
        links: transactions.links,
        refused_attempts: transactions.refused_attempts.map(({ linked_app_user_id: _other, ...attempt }) => attempt),
      },
    };
  }

  private async notifications(appUserId: string): Promise<ExportedEvent[]> {
    const docs = await this.readStore.find<{ id: string | null; provider: RevenueProvider }>(INBOUND, { where: { app_user_id: appUserId } });
    const found: ExportedEvent[] = [];
    for (const doc of docs) {
      if (doc.id === null) continue;
      const recorded = await this.store.readStream(streams.inbound(doc.provider, doc.id));
      found.push(...recorded.map(exportedEvent));
    }
    return found.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
  }
}
