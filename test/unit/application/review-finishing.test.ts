import 'reflect-metadata';
import { expect } from 'chai';
import { pino } from 'pino';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { ReviewDecisions } from '../../../src/application/fraud/review-decisions.js';
import { FraudRuleQueries } from '../../../src/application/fraud/fraud-rule-queries.js';
import { CatalogQueries } from '../../../src/application/queries/catalog-queries.js';
import { ReferralReactions } from '../../../src/application/reactions/referral-reactions.js';
import { ReadYourWrites } from '../../../src/application/read-your-writes.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, programAssigned, registered, T0 } from '../../support/events.js';

describe('referral reaction: finishing a review approval after a crash between its two appends', () => {
  let app: ApplicationSpec;
  let reaction: ReferralReactions;
  const hold = { rule_id: 'blocked', kind: 'blocked_users' as const, review_id: 'review-1' };

  beforeEach(async () => {
    app = await applicationSpec();
    const ids = new RandomIds();
    const decisions = new ReviewDecisions(
      app.executor,
      new ReadYourWrites(app.consistency, app.store, pino({ level: 'silent' })),
      app.readStore,
      app.clock,
      ids,
    );
    reaction = new ReferralReactions(app.executor, new CatalogQueries(app.readStore), new FraudRuleQueries(app.readStore), app.clock, ids, decisions);
    await app.given({
      'user-bob': [
        registered('bob'),
        programAssigned('prog', 'BOB234'),
        event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '1' }),
        event('SenderRewardsHeld', {
          ...hold,
          claimer: 'ann',
          code: 'BOB234',
          variant: 'claim',
          count: 1,
          program_id: 'prog',
          rewards: [{ reward: { key: 'coins', kind: 'credit', credits: 5 }, deactivation: { variant: 'never' } }],
        }),
      ],
      // The request appended the decision and died before the referrer's stream.
      'review-review-1': [
        event('ReviewOpened', { ...hold, referrer: 'bob', claimer: 'ann', code: 'BOB234', variant: 'claim', opened_at: T0.toISOString() }),
        event('ReviewApproved', { ...hold, referrer: 'bob', decided_at: T0.toISOString(), opened_position: '5' }),
      ],
    });
  });
  afterEach(async () => app.stop());

  it('grants the held rewards once, however often the decision is handled', async () => {
    const approved = (await app.events('review-review-1')).find((one) => one.type === 'ReviewApproved')!;
    const outcome = await app.when(() => reaction.handle(approved));
    const appended = outcome.appended.get('user-bob')!;
    expect(appended.map((one) => one.type)).to.deep.equal(['HeldRewardsReleased', 'RewardGranted']);
    expect(appended[1]!.data).to.deep.include({ reward_key: 'coins', credits: 5 });
    (await app.when(() => reaction.handle(approved))).thenNothing();
  });
});
