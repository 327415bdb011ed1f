import 'reflect-metadata';
import { expect } from 'chai';
import { fraudRulesProjection } from '../../../projections/fraud-rules.js';
import { FraudRuleQueries } from '../../../src/application/fraud/fraud-rule-queries.js';
import type { FraudRule } from '../../../src/domain/events/fraud-events.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { CountingReadStore } from '../../support/counting-read-store.js';
import { event, T0 } from '../../support/events.js';

const rule = (id: string, enabled: boolean, ids: string[] = ['mallory']): FraudRule => ({
  id,
  kind: 'blocked_users',
  params: { app_user_ids: ids },
  action: 'reject',
  enabled,
  created_at: T0.toISOString(),
  updated_at: null,
});

/** The rules in force are read on every claim; they are parsed again only when a rule changed. */
describe('FraudRuleQueries.enabled: the rules in force, cached behind their stamp', () => {
  let app: ApplicationSpec;
  let counting: CountingReadStore;
  let rules: FraudRuleQueries;

  beforeEach(async () => {
    app = await applicationSpec({ projections: [fraudRulesProjection] });
    counting = new CountingReadStore(app.readStore);
    rules = new FraudRuleQueries(counting);
  });
  afterEach(() => app.stop());

  it('no rule ever defined: one read of the (absent) stamp, nothing else', async () => {
    expect(await rules.enabled()).to.deep.equal([]);
    expect(counting.counts.documentsRead).to.equal(0);
  });

  it('unchanged rules are not read again: each later claim reads the stamp only', async () => {
    await app.given({
      'rule-a': [
        event('FraudRuleCreated', {
          rule: rule(
            'a',
            true,
            Array.from({ length: 500 }, (_, i) => `u${i}`),
          ),
        }),
      ],
    });
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['a']);
    counting.resetCounts();
    for (let claim = 0; claim < 10; claim += 1) await rules.enabled();
    expect(counting.counts.documentsRead).to.equal(10);
    expect(counting.counts.bytesRead).to.be.below(10 * 100);
    // Handed to claim after claim (and keyed on by the blocklist sets): nobody can change them.
    const [inForce] = await rules.enabled();
    expect(Object.isFrozen(inForce) && Object.isFrozen((inForce!.params as { app_user_ids: string[] }).app_user_ids)).to.equal(true);
  });

  it('rules written before the stamp existed (fraud_rules v1, not replayed yet) stay in force until a change stamps them', async () => {
    await app.readStore.commitBatches([
      { projector: 'v1-era', version: 1, position: 1n, after: null, changes: [{ op: 'put', collection: 'fraud_rules', id: 'old', doc: rule('old', true) }] },
    ]);
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['old']);
    await app.given({ 'rule-new': [event('FraudRuleCreated', { rule: rule('new', true) })] });
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['new', 'old']);
  });

  it('a rule created, disabled or changed is seen at the next read', async () => {
    await app.given({ 'rule-a': [event('FraudRuleCreated', { rule: rule('a', true) })] });
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['a']);
    await app.given({ 'rule-b': [event('FraudRuleCreated', { rule: rule('b', true) })] });
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['a', 'b']);
    await app.given({ 'rule-a': [event('FraudRuleUpdated', { rule: rule('a', false) })] });
    expect((await rules.enabled()).map((found) => found.id)).to.deep.equal(['b']);
    await app.given({ 'rule-b': [event('FraudRuleUpdated', { rule: rule('b', true, ['trudy']) })] });
    expect((await rules.enabled())[0]!.params).to.deep.equal({ app_user_ids: ['trudy'] });
  });
});
