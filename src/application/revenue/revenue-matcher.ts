import { inject, injectable } from 'tsyringe';
import { INBOUND, linkKeys, links, REVENUE_INDEX, REVENUE_LINKS } from '../../../projections/revenue-index.js';
import { streams } from '../../domain/events/index.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { RevenueNotification } from '../../domain/revenue/revenue-notification.js';
import type { EventStore } from '../../ports/event-store.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { EventLog } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

/** Links to one payment customer read at a time, newest first. */
const CUSTOMER_LINKS_PAGE = 50;

/**
 * Finds a notification's user, first match wins (SPEC §11): an app_user_id it names (RevenueCat
 * app_user_id, original_app_user_id, aliases; Play obfuscatedExternalAccountId), the user whose
 * account token it carries (App Store appAccountToken), the user with its Stripe customer as
 * payment_customer_id, then a transaction already linked to a user. The index is read once it
 * has passed `position` (the log head on receipt; the notification's own position in the reaction).
 */
@injectable()
export class RevenueMatcher {
  constructor(
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
  ) {}

  /** Waits (bounded) until the revenue index has passed `position` (default: the log's head); false if it did not. */
  async indexPassed(position?: bigint | null): Promise<boolean> {
    const target = position === undefined ? await this.store.headPosition() : position;
    return target === null || this.consistency.waitFor(target, READ_MODELS_WAIT_MS, REVENUE_INDEX);
  }

  async match(notification: RevenueNotification, position?: bigint | null): Promise<string | null> {
    const { match } = notification;
    for (const candidate of match.app_user_ids) {
      if ((await this.log.first(streams.user(candidate)))?.type === 'UserRegistered') return candidate;
    }
    const keys = linkKeys(notification.provider, match);
    if (keys.length === 0) return null;
    // Behind: answer unmatched; the notification is kept and the reaction matches it again.
    if (!(await this.indexPassed(position))) return null;
    const found = await this.readStore.getMany<{ app_user_id: string }>(REVENUE_LINKS, keys);
    for (const key of keys) {
      const link = found.get(key) ?? (key.startsWith('customer:') ? await this.customerHolder(key, match.customer_id!) : undefined);
      if (link) return link.app_user_id;
    }
    return null;
  }

  /** The user a notification of this Stripe customer goes to now (read once the index has passed what it must see). */
  customerHolderOf(customerId: string): Promise<{ app_user_id: string } | undefined> {
    return this.customerHolder(links.customer(customerId), customerId);
  }

  private async holdsCustomer(appUserId: string, customerId: string): Promise<boolean> {
    return (await this.executor.load(streams.user(appUserId), userEvolver)).state.payment_customer_id === customerId;
  }

  /**
   * The user whose `payment_customer_id` is this customer now (SPEC §11), among the users linked
   * to it, newest link first (links are kept per user event: projections/revenue-index.ts). A
   * user who has since changed or cleared it no longer matches.
   */
  private async customerHolder(key: string, customerId: string): Promise<{ app_user_id: string } | undefined> {
    const looked = new Set<string>();
    let before: number | null = null;
    for (;;) {
      const page: { app_user_id: string; seq: number }[] = await this.readStore.find<{ app_user_id: string; seq: number }>(REVENUE_LINKS, {
        where: { customer: key },
        ...(before === null ? {} : { atMost: { field: 'seq', value: before - 1 } }),
        orderBy: { field: 'seq', direction: 'desc' },
        limit: CUSTOMER_LINKS_PAGE,
      });
      for (const link of page) {
        if (looked.has(link.app_user_id)) continue;
        looked.add(link.app_user_id);
        if (await this.holdsCustomer(link.app_user_id, customerId)) return link;
      }
      if (page.length < CUSTOMER_LINKS_PAGE) return undefined;
      before = page[page.length - 1]!.seq;
    }
  }

  /** The inbox document of a notification (status, app_user_id, event ids). */
  async inbound(key: string): Promise<{ status: string; app_user_id: string | null } | null> {
    return this.readStore.get(INBOUND, key);
  }
}
