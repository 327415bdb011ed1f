import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { startChildService } from '../support/child-service.js';
import { readmeSection, shellBlocks } from '../support/readme.js';
import { tempDataDir } from '../support/test-service.js';

/** `A=1 B=2 npm start` → { A: '1', B: '2' }. */
function startEnvironment(command: string): Record<string, string> {
  expect(command.trim()).to.match(/ npm start$/);
  return Object.fromEntries(
    command
      .trim()
      .replace(/ npm start$/, '')
      .split(/\s+/)
      .map((assignment) => [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]),
  );
}

describe('E2E: the README walkthrough, verbatim, against a started service', function () {
  this.timeout(120_000);

  it('runs every command as written and shows what it says it shows', async () => {
    const [start, commands] = shellBlocks(readmeSection('## Walkthrough: a referral from start to finish'));
    expect(commands, 'the walkthrough has a start command and a block of calls').to.be.a('string');
    const env = startEnvironment(start!);
    expect(env).to.include({ CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' });
    expect(env.REFERRAL_LINK_BASE).to.be.a('string');
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);

    const service = await startChildService(tempDataDir(), env);
    try {
      const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', commands!], {
        cwd: tempDataDir(),
        env: { ...process.env, BASE: service.url },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('');
      // One JSON document per line, one line per call (13 calls), none of them an error.
      const lines = run.stdout.split('\n');
      expect(lines.pop()).to.equal('');
      expect(lines)
        .to.have.length((commands!.match(/^curl -sS -w '\\n' /gm) ?? []).length)
        .and.to.have.length(13);
      const replies = lines.map((line) => JSON.parse(line) as { data?: any; errors?: unknown });
      for (const reply of replies) expect(reply.errors, JSON.stringify(reply)).to.equal(undefined);

      const [health, , , , alice, , claim, bob, aliceAfter, spent, repeated, ledger, log] = replies.map((reply) => reply.data);
      expect(health).to.deep.equal({ status: 'ok' });
      expect(alice.user.referral_code_link).to.equal(`${env.REFERRAL_LINK_BASE}/${alice.user.referral_code}`);
      expect(claim.user.referred_by.code).to.equal(alice.user.referral_code);
      expect(bob.user.rewards.active.basic.map((entry: { reward: { key: string } }) => entry.reward.key)).to.deep.equal(['premium-week']);
      expect(aliceAfter.user.stats.claims).to.equal(1);
      expect(aliceAfter.user.rewards.active.credit[0].credits).to.equal(50);
      expect(spent.withdraw_result.credits_withdrawn).to.equal(20);
      expect(repeated.withdraw_result).to.deep.equal(spent.withdraw_result);
      expect(repeated.user.rewards.active.credit[0].credits).to.equal(30);
      expect(ledger.entries.map((entry: { delta: number }) => entry.delta)).to.deep.equal([50, -20]);
      expect(log.events.filter((event: { type: string }) => event.type === 'CreditsWithdrawn')).to.have.length(1);
    } finally {
      await service.stop();
    }
  });

  it('says how to start again from scratch', () => {
    expect(readmeSection('## Walkthrough: a referral from start to finish')).to.contain('rm -rf data');
    expect(readmeSection('## Quickstart')).to.contain('rm -rf data');
  });
});
