import type { Projection } from './projection.js';

export const FRAUD_RULES = 'fraud_rules';
/** One document, `current`: the id of the last event that changed a rule. */
export const FRAUD_RULES_STAMP = 'fraud_rules_stamp';
export const FRAUD_RULES_STAMP_ID = 'current';

/**
 * The fraud rules as the admin API defined them last (SPEC §13); their history is the `rule-{id}`
 * streams. The stamp changes with every rule change, so a claim can tell in one key read whether
 * the rules it holds are still the ones in force (src/application/fraud/fraud-rule-queries.ts).
 */
export const fraudRulesProjection: Projection = {
  name: 'fraud_rules',
  version: 2,
  collections: [
    { name: FRAUD_RULES, indexes: ['enabled'] },
    { name: FRAUD_RULES_STAMP, indexes: [] },
  ],
  eventTypes: ['FraudRuleCreated', 'FraudRuleUpdated'],
  targets: (event) =>
    event.type === 'FraudRuleCreated' || event.type === 'FraudRuleUpdated'
      ? [
          { collection: FRAUD_RULES, id: event.data.rule.id },
          { collection: FRAUD_RULES_STAMP, id: FRAUD_RULES_STAMP_ID },
        ]
      : [],
  evolve: (ref, doc, event) => {
    if (event.type !== 'FraudRuleCreated' && event.type !== 'FraudRuleUpdated') return doc;
    return ref.collection === FRAUD_RULES_STAMP ? { event_id: event.id } : event.data.rule;
  },
};
