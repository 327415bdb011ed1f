import { inject, injectable } from 'tsyringe';
import { FRAUD_RULES } from '../../../projections/fraud-rules.js';
import type { FraudRule } from '../../domain/events/fraud-events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';

/** The fraud rules as defined now (the `fraud_rules` read model), in id order. */
@injectable()
export class FraudRuleQueries {
  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  get(id: string): Promise<FraudRule | null> {
    return this.readStore.get<FraudRule>(FRAUD_RULES, id);
  }

  list(): Promise<FraudRule[]> {
    return this.readStore.find<FraudRule>(FRAUD_RULES);
  }

  /** The rules in force: one indexed read of a small collection per claim. */
  enabled(): Promise<FraudRule[]> {
    return this.readStore.find<FraudRule>(FRAUD_RULES, { where: { enabled: true } });
  }
}
