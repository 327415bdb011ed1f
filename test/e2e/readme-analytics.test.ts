import { expect } from 'chai';
import { demoDataDir, readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's analytics commands, verbatim, after npm run demo", function () {
  this.timeout(180_000);

  it('answers the five queries 200 in the documented shapes (the days of November, zeros included; the demo codes ranked)', async () => {
    const [commands] = shellBlocks(readmeSection('## For analysts: the analytics API'));
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const dataDir = await demoDataDir();
    // Started as the section says: the walkthrough's keys, on the demo's data (validated against /openapi.json).
    const svc = await startTestService({ dataDir, env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' } });
    try {
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const answers = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(answers).to.have.length(5);
      const [month, program, code, topClaims, topRevenue] = answers;
      for (const daily of [month, program, code]) {
        expect(daily.data).to.include({ from: '2026-11-01', to: '2026-11-30' });
        expect(daily.data.days.map((day: { date: string }) => day.date)).to.deep.equal(
          Array.from({ length: 30 }, (_, index) => `2026-11-${String(index + 1).padStart(2, '0')}`),
        );
      }
      // The per-program and per-code series never count more than the whole.
      for (const part of [program, code])
        for (const [index, day] of (part.data.days as { claims: number }[]).entries()) expect(day.claims).to.be.at.most(month.data.days[index].claims);
      expect(topClaims.data.codes.length).to.be.at.most(10);
      expect(topRevenue.data.codes.length).to.be.at.most(5);
      // The demo's claim (demo-ben on demo-ana's referral code) is counted on its day: when that
      // day falls in the README's ranges, the month and the top codes show it.
      const today = new Date().toISOString().slice(0, 10);
      if (today.startsWith('2026-11-')) {
        expect(month.data.days.find((day: { date: string }) => day.date === today).claims).to.be.greaterThan(0);
        expect(topClaims.data.codes.map((entry: { kind: string }) => entry.kind)).to.include('referral');
      }
    } finally {
      await svc.stop();
    }
  });
});
