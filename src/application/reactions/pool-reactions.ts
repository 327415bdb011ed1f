import { inject, injectable } from 'tsyringe';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import { PoolAssignments } from '../shared-resources/pool-assignments.js';
import type { LoggedEvent } from '../event-log.js';
import { type Reaction, reactionContext } from './reaction-runner.js';
import { appUserIdOf } from '../../domain/events/index.js';

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
    const context = reactionContext(event, this.name);
    if (event.type === 'RewardGranted' && POOLED_KINDS.includes(event.data.kind)) {
      const grant = { grant_id: event.data.grant_id, app_user_id: appUserIdOf(event.stream)!, expires_at: event.data.expires_at, position: event.position };
      await this.pools.request(event.data.reward_key, grant, context);
    }
    if (event.type === 'RewardRevoked' && POOLED_KINDS.includes(event.data.kind)) {
      await this.pools.withdraw(event.data.reward_key, event.data.grant_id, appUserIdOf(event.stream)!, context);
    }
    if (event.type === 'PoolCodeAssigned') {
      await this.pools.deliver(event.data.app_user_id, event.data.grant_id, event.data.code, context);
    }
  }
}
