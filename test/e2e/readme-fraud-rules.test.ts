import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestService } from '../support/test-service.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first `sh` block after `heading` in the README. */
function blockAfter(heading: string): string {
  const start = README.indexOf(heading);
  expect(start, heading).to.be.greaterThan(-1);
  return /```sh\n([\s\S]*?)```/.exec(README.slice(start))![1]!;
}

describe("E2E: the README's fraud-rule commands, verbatim", function () {
  this.timeout(60_000);

  it('creates both rules (201), lists the reviews and answers the decision on the first (404 while none is waiting)', async () => {
    const commands = blockAfter('Client keys ship inside apps');
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' }, validateResponses: false });
    try {
      const run = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', commands], { env: { ...process.env, BASE: svc.url }, timeout: 30_000 });
      expect(run.stderr).to.equal('');
      const [hourly, young, reviews, decision] = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(hourly.data.rule).to.include({ id: 'referrer-hourly', kind: 'referrer_claims_per_hour', action: 'hold', enabled: true });
      expect(young.data.rule).to.include({ id: 'young-accounts', kind: 'min_seconds_user_to_claim', action: 'reject' });
      expect(reviews.data).to.deep.equal({ reviews: [], next_after: null });
      expect(decision.errors[0]).to.include({ code: 'NOT_FOUND.REVIEW', status: 404 });
    } finally {
      await svc.stop();
    }
  });
});
