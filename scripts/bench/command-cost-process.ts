/**
 * The command-cost measurement in a process of its own (`node --import tsx … PLAN_JSON`):
 * prints the CommandCost as JSON on its last stdout line. A service that projects a long
 * history in one go does not give its event loop back until it is done, so only another
 * process can stop waiting for it (scripts/bench/command-cost.ts, runCommandCost).
 */
import { type CostPlan, measureCommandCost } from './command-cost.js';

const plan = JSON.parse(process.argv[2]!) as CostPlan;
measureCommandCost(plan, (message) => process.stderr.write(`${message}\n`)).then(
  (cost) => {
    process.stdout.write(`${JSON.stringify(cost)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`command cost failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
