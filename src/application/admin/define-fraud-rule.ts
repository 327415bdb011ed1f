import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideDefineRule, fraudRuleEvolver, type RuleInput } from '../../domain/fraud/fraud-rule.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';

/** PUT /admin/rules/{id}: each change is an event of `rule-{id}`, so the rules have history. */
@injectable()
export class DefineFraudRuleHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: RuleInput, context: CommandContext) {
    const executed = await this.executor.execute(
      streams.rule(input.id),
      fraudRuleEvolver,
      (existing) => decideDefineRule(existing, input, this.clock.now()),
      context,
    );
    // The next claim (from any client) is judged by the rule as written.
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }
}
