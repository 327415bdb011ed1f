import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { Program } from '../events/config-events.js';
import type { RewardKind } from '../rewards/reward-kinds.js';
import { timestamps } from './config-state.js';
import { checkConfiguredRewards } from './configured-rewards.js';

export type ProgramInput = Omit<Program, 'created_at' | 'updated_at'>;

export interface DefineProgramCommand {
  input: ProgramInput;
  /** Kind of every existing reward, by key. */
  rewardKinds: Map<string, RewardKind>;
  /** Sum of distribution_percentage over the other programs. */
  otherProgramsPercentage: number;
  now: Date;
}

/** PUT /admin/programs/{id}. */
export function decideDefineProgram(existing: Program | null, command: DefineProgramCommand): Decision<{ created: boolean; program: Program }> {
  const { input } = command;
  checkConfiguredRewards(input.rewards.sender, command.rewardKinds, 'sender', 'PROGRAM', '/rewards/sender');
  checkConfiguredRewards(input.rewards.receiver, command.rewardKinds, 'receiver', 'PROGRAM', '/rewards/receiver');
  if (command.otherProgramsPercentage + input.distribution_percentage > 100) {
    throw new DomainError(
      'PROGRAM.DISTRIBUTION_EXCEEDED',
      `Programs would cover ${command.otherProgramsPercentage + input.distribution_percentage}% of users; the sum must be at most 100`,
      '/distribution_percentage',
    );
  }
  const program: Program = { ...input, ...timestamps(existing, command.now) };
  return {
    events: [{ type: existing ? 'ProgramUpdated' : 'ProgramCreated', data: { program } }],
    result: { created: existing === null, program },
  };
}
