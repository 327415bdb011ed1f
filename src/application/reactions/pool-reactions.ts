import { inject, injectable } from 'tsyringe';
import { appUserIdOf } from '../../domain/events/index.js';
import type { LineChange } from '../../domain/pools/pool.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import type { CommandContext, LoggedEvent } from '../event-log.js';
import { PoolAssignments } from '../shared-resources/pool-assignments.js';
import { type Reaction, reactionContext } from './reaction-runner.js';

/**
 * Keeps pooled reward entries supplied: a pooled grant asks its pool for a code, every code the
 * pool assigns is delivered into the receiving user's stream, and a revoked grant leaves the line.
 */
@injectable()
export class PoolReactions implements Reaction {
  readonly name = 'pools';
  readonly eventTypes = ['RewardGranted', 'PoolCodeAssigned', 'RewardRevoked'] as const;

  constructor(@inject(PoolAssignments) private readonly pools: PoolAssignments) {}

  async handle(event: LoggedEvent): Promise<void> {
    await this.handleBatch([event]);
  }

  /**
   * A page's requests and withdrawals in one decision and one append per pool (a burst of claims
   * on a referrer with a pooled sender reward asks its pool hundreds of times a second), then the
   * page's assigned codes, delivered side by side (each user's stream takes its own in order).
   */
  async handleBatch(events: LoggedEvent[]): Promise<void> {
    const byPool = new Map<string, { change: LineChange; context: CommandContext }[]>();
    for (const event of events) {
      const change = lineChangeOf(event);
      if (change === null) continue;
      const changes = byPool.get(change.rewardKey) ?? [];
      changes.push({ change: change.change, context: reactionContext(event, this.name) });
      byPool.set(change.rewardKey, changes);
    }
    await Promise.all([...byPool].map(([rewardKey, changes]) => this.pools.changeLine(rewardKey, changes)));
    await Promise.all(
      events.map((event) =>
        event.type === 'PoolCodeAssigned'
          ? this.pools.deliver(event.data.app_user_id, event.data.grant_id, event.data.code, reactionContext(event, this.name))
          : undefined,
      ),
    );
  }
}

/** What a grant's event asks of its pool's line, if it is pooled. */
function lineChangeOf(event: LoggedEvent): { rewardKey: string; change: LineChange } | null {
  if ((event.type !== 'RewardGranted' && event.type !== 'RewardRevoked') || !POOLED_KINDS.includes(event.data.kind)) return null;
  const grant = { grant_id: event.data.grant_id, app_user_id: appUserIdOf(event.stream)! };
  if (event.type === 'RewardRevoked') return { rewardKey: event.data.reward_key, change: { kind: 'withdraw', ...grant } };
  return { rewardKey: event.data.reward_key, change: { kind: 'request', ...grant, expires_at: event.data.expires_at, position: event.position } };
}
