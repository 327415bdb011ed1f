import type { Projection } from './projection.js';

export const FRAUD_RULES = 'fraud_rules';

/** The fraud rules as the admin API defined them last (SPEC §13); their history is the `rule-{id}` streams. */
export const fraudRulesProjection: Projection = {
  name: 'fraud_rules',
  version: 1,
  collections: [{ name: FRAUD_RULES, indexes: ['enabled'] }],
  eventTypes: ['FraudRuleCreated', 'FraudRuleUpdated'],
  targets: (event) => (event.type === 'FraudRuleCreated' || event.type === 'FraudRuleUpdated' ? [{ collection: FRAUD_RULES, id: event.data.rule.id }] : []),
  evolve: (_ref, doc, event) => (event.type === 'FraudRuleCreated' || event.type === 'FraudRuleUpdated' ? event.data.rule : doc),
};
