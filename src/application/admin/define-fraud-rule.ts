import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideDefineRule, fraudRuleEvolver, type RuleInput } from '../../domain/fraud/fraud-rule.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CommandExecutor } from '../command-executor.js';

/** PUT /admin/rules/{id}: each change is an event of `rule-{id}`, so the rules have history. */
@injectable()
export class DefineFraudRuleHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: RuleInput, context: CommandContext) {
    // Read-your-writes after the commit: the next claim (from any client) is judged by the rule as written.
    const executed = await this.commands.execute(
      streams.rule(input.id),
      fraudRuleEvolver,
      (existing) => decideDefineRule(existing, input, this.clock.now()),
      context,
    );
    return executed.result;
  }
}
