import 'reflect-metadata';
import { expect } from 'chai';
import { catalogProjection } from '../../../projections/catalog.js';
import { operationsProjection } from '../../../projections/operations.js';
import { WithdrawCreditsHandler, type WithdrawCreditsInput } from '../../../src/application/commands/withdraw-credits.js';
import { CatalogQueries } from '../../../src/application/queries/catalog-queries.js';
import { streams } from '../../../src/domain/events/index.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, registered, rewardGranted, T0 } from '../../support/events.js';

const ann = streams.user('ann');

/** The handler as the service builds it, on the in-memory stores and the real projection runner. */
function handlerOn(app: ApplicationSpec): WithdrawCreditsHandler {
  return new WithdrawCreditsHandler(app.commands, new CatalogQueries(app.readStore), app.clock);
}

const coins = event('RewardCreated', {
  reward: { key: 'coins', kind: 'credit', name: 'Coins', description: null, metadata: null, credits: 10, created_at: T0.toISOString(), updated_at: null },
});

function withdrawal(amount: number, operationId: string | null): WithdrawCreditsInput {
  return { key: 'coins', amount, operation_id: operationId };
}

describe('WithdrawCreditsHandler (in memory): operation_id makes a withdrawal idempotent', () => {
  let app: ApplicationSpec;
  let handler: WithdrawCreditsHandler;

  beforeEach(async () => {
    app = await applicationSpec({ projections: [catalogProjection, operationsProjection] });
    handler = handlerOn(app);
    await app.given({ [streams.reward('coins')]: [coins], [ann]: [registered('ann'), rewardGranted({ grant_id: 'wallet', credits: 10, balance_after: 10 })] });
  });

  afterEach(() => app.stop());

  const firstAnswer = { credits_available_at_start: 10, credits_available_at_end: 6, credits_requested_to_withdraw: 4, credits_withdrawn: 4 };

  it('a new operation_id withdraws and records it with the withdrawal', async () => {
    const outcome = await app.when(() => handler.handle('ann', withdrawal(4, 'order-1'), app.context));
    const { result } = outcome.thenAppended({
      [ann]: [
        event('CreditsWithdrawn', {
          operation_id: 'order-1',
          key: 'coins',
          withdrawn_at: T0.toISOString(),
          ...firstAnswer,
          debits: [{ grant_id: 'wallet', credits: 4 }],
        }),
      ],
    });
    expect(result).to.deep.equal(firstAnswer);
    expect(outcome.appended.get(ann)![0]!.metadata.operation_id).to.equal('order-1');
  });

  it('the same request again answers what the first one got and withdraws nothing', async () => {
    await handler.handle('ann', withdrawal(4, 'order-1'), app.context);
    const outcome = await app.when(() => handler.handle('ann', withdrawal(4, 'order-1'), app.context));
    expect(outcome.thenNothing().result).to.deep.equal(firstAnswer);
  });

  it('the same operation_id with another amount is WITHDRAW.OPERATION_ID_REUSED', async () => {
    await handler.handle('ann', withdrawal(4, 'order-1'), app.context);
    (await app.when(() => handler.handle('ann', withdrawal(5, 'order-1'), app.context))).thenError('WITHDRAW.OPERATION_ID_REUSED');
  });

  it('without an operation_id every request withdraws', async () => {
    await handler.handle('ann', withdrawal(4, null), app.context);
    const outcome = await app.when(() => handler.handle('ann', withdrawal(4, null), app.context));
    const { result } = outcome.thenAppended({
      [ann]: [
        event('CreditsWithdrawn', {
          operation_id: null,
          key: 'coins',
          withdrawn_at: T0.toISOString(),
          credits_available_at_start: 6,
          credits_available_at_end: 2,
          credits_requested_to_withdraw: 4,
          credits_withdrawn: 4,
          debits: [{ grant_id: 'wallet', credits: 4 }],
        }),
      ],
    });
    expect(result.credits_available_at_end).to.equal(2);
  });

  it('a key that names no credit reward is WITHDRAW.REWARD_NOT_FOUND', async () => {
    (await app.when(() => handler.handle('ann', { ...withdrawal(1, 'order-2'), key: 'gems' }, app.context))).thenError('WITHDRAW.REWARD_NOT_FOUND');
  });
});
