import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import type { ReferredByFact } from '../../domain/events/user-events.js';
import { decideCountReferral, type ReferralFigure, type SenderReward } from '../../domain/users/count-referral.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { LoggedEvent } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { StreamExecutor } from '../stream-executor.js';
import type { Reaction } from './reaction-runner.js';

/**
 * The referrer's side of a referral: counts each claim, conversion and churn of its claimers
 * in the referrer's stream and grants the sender rewards that become due. Event ids derive
 * from the causing event and the referrer remembers the last cause it counted, so handling
 * an event twice changes nothing.
 */
@injectable()
export class ReferralReactions implements Reaction {
  readonly name = 'referrals';
  readonly eventTypes = ['CodeClaimed', 'UserConverted', 'UserChurned'] as const;

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async handle(event: LoggedEvent): Promise<void> {
    const claimer = event.stream.slice('user-'.length);
    let figure: ReferralFigure;
    let referredBy: ReferredByFact;
    if (event.type === 'CodeClaimed') [figure, referredBy] = ['claim', event.data];
    else if (event.type === 'UserConverted') [figure, referredBy] = ['conversion', event.data.referred_by];
    else if (event.type === 'UserChurned') [figure, referredBy] = ['churn', event.data.referred_by];
    else return;
    if (referredBy.type !== 'referral') return;
    const referrer = referredBy.owner_id;
    const senderRewards = await this.senderRewards(referrer);
    await this.executor.execute(
      streams.user(referrer),
      userEvolver,
      (state) => {
        const decision = decideCountReferral(state, {
          figure,
          claimer,
          code: referredBy.code,
          program_id: state.program_id,
          senderRewards,
          cause_id: event.id,
          cause_position: event.position,
          now: this.clock.now(),
        });
        return { ...decision, events: decision.events.map((next, index) => ({ ...next, id: this.ids.derived(event.id, 'referral', String(index)) })) };
      },
      { correlation_id: String(event.metadata.correlation_id), causation_id: event.id, actor: 'process:referrals' },
    );
  }

  private async senderRewards(referrer: string): Promise<SenderReward[]> {
    const state = await this.catalog.user(referrer);
    const program = state?.program_id ? await this.catalog.program(state.program_id) : null;
    return program ? this.catalog.resolveEntries(program.rewards.sender) : [];
  }
}
