import { DomainError } from '../domain-error.js';
import { CLAIM_ONLY_RECEIVER_KINDS, REPEATABLE_SENDER_KINDS, type RewardKind } from '../rewards/reward-kinds.js';
import { activationSchema, type ConfiguredReward } from '../rewards/reward-schemas.js';

/**
 * Checks the rewards configured on a program, promo code or affiliate (its entries) against the
 * rewards that exist.
 * `errorPrefix` names the family of the error codes.
 */
export function checkConfiguredRewards(
  entries: ConfiguredReward[],
  kinds: Map<string, RewardKind>,
  role: 'sender' | 'receiver',
  errorPrefix: 'PROGRAM' | 'CODE' | 'AFFILIATE',
  pointer: string,
): void {
  entries.forEach((entry, index) => {
    const source = `${pointer}/${index}`;
    const kind = kinds.get(entry.reward_key);
    if (kind === undefined) throw new DomainError(`${errorPrefix}.REWARD_NOT_FOUND`, `No reward has the key ${entry.reward_key}`, `${source}/reward_key`);
    const { activation } = entry;
    const invalid = (message: string) => new DomainError(`${errorPrefix}.INVALID_ACTIVATION`, message, `${source}/activation`);
    // The stored entry's own schema (amount >= 1, limit >= 0 when present) is checked here, so
    // the event that records it can never be refused at append.
    const stored = activationSchema.safeParse(activation);
    if (!stored.success) {
      const issue = stored.error.issues[0]!;
      throw invalid(`activation.${issue.path.join('.')} ${describeBound(issue)}`);
    }
    if (role === 'sender') {
      if (activation.amount === undefined || activation.amount < 1) throw invalid('A sender activation needs an amount of at least 1');
      if (REPEATABLE_SENDER_KINDS.includes(kind) && (activation.limit === undefined || activation.limit < 0)) {
        throw invalid(`A sender activation of a reward of kind ${kind} needs a limit of at least 0 (0 = unlimited)`);
      }
    } else if (CLAIM_ONLY_RECEIVER_KINDS.includes(kind) && activation.variant !== 'claim') {
      throw invalid(`Receiver rewards of kind ${kind} can only be granted on claim`);
    }
  });
}

function describeBound(issue: { code: string; minimum?: unknown; maximum?: unknown; message: string }): string {
  if (issue.code === 'too_small') return `must be at least ${String(issue.minimum)}`;
  if (issue.code === 'too_big') return `must be at most ${String(issue.maximum)}`;
  return issue.message;
}
