import type { DependencyContainer } from 'tsyringe';
import { DefineFraudRuleHandler } from '../../application/admin/define-fraud-rule.js';
import { FraudRuleQueries } from '../../application/fraud/fraud-rule-queries.js';
import type { FraudRule } from '../../domain/events/fraud-events.js';
import { commandContext } from '../context.js';
import type { AnyRoute } from '../route.js';
import { ruleBody, ruleId, ruleOut } from '../schemas/fraud.js';
import { adminResourceRoutes } from './admin-resource.js';

/** SPEC §13: fraud rules, a configuration resource like rewards and programs (each change an event). */
export function adminRuleRoutes(container: DependencyContainer): AnyRoute[] {
  const rules = container.resolve(FraudRuleQueries);
  const define = container.resolve(DefineFraudRuleHandler);
  return adminResourceRoutes<FraudRule, typeof ruleBody>({
    tag: 'admin: fraud rules',
    path: '/rules',
    param: 'id',
    paramSchema: ruleId,
    singular: 'rule',
    plural: 'rules',
    name: 'Rule',
    notFoundCode: 'NOT_FOUND.RULE',
    putErrors: ['RULE.IMMUTABLE_FIELD'],
    body: ruleBody,
    out: ruleOut,
    get: (id) => rules.get(id),
    list: () => rules.list(),
    view: (rule) => rule,
    put: async (id, body, res) => {
      const { created, rule } = await define.handle(
        { id, kind: body.kind, params: body.params, action: body.action, enabled: body.enabled },
        commandContext(res),
      );
      return { created, value: rule };
    },
  });
}
