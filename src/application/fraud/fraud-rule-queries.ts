import { inject, injectable } from 'tsyringe';
import { FRAUD_RULES, FRAUD_RULES_STAMP, FRAUD_RULES_STAMP_ID } from '../../../projections/fraud-rules.js';
import type { FraudRule } from '../../domain/events/fraud-events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { deepFreeze } from '../deep-freeze.js';
import { TOKENS } from '../../ports/tokens.js';

/** The fraud rules as defined now (the `fraud_rules` read model), in id order. */
@injectable()
export class FraudRuleQueries {
  /** The enabled rules as of the stamp they were read at. */
  private inForce: { stamp: string | null; rules: FraudRule[] } | null = null;

  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  get(id: string): Promise<FraudRule | null> {
    return this.readStore.get<FraudRule>(FRAUD_RULES, id);
  }

  list(): Promise<FraudRule[]> {
    return this.readStore.find<FraudRule>(FRAUD_RULES);
  }

  /**
   * The rules in force, read on every claim: one key read of the rules' stamp, and the rules
   * themselves only when the stamp moved since the last read (a rule changed, here or in another
   * process). Read after the stamp, so the rules held are never older than the stamp they carry.
   */
  async enabled(): Promise<FraudRule[]> {
    const stamp = (await this.readStore.get<{ event_id: string }>(FRAUD_RULES_STAMP, FRAUD_RULES_STAMP_ID))?.event_id ?? null;
    if (this.inForce?.stamp === stamp) return this.inForce.rules;
    // No stamp yet: no rule changed since the stamp was introduced (rules from before it, or none).
    // Frozen: they are handed to claim after claim, and the judges keep derived sets per list.
    const rules = deepFreeze(await this.readStore.find<FraudRule>(FRAUD_RULES, { where: { enabled: true } }));
    this.inForce = { stamp, rules };
    return rules;
  }
}
