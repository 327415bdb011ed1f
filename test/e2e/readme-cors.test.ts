import { expect } from 'chai';
import { readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's CORS example, verbatim, against a service started as it says", function () {
  this.timeout(60_000);

  it('shows the preflight answered 204 with the origin, methods and headers named', async () => {
    const [commands] = shellBlocks(readmeSection('### Apps in a browser (CORS)'));
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { CORS_ORIGINS: 'https://app.example.com' } });
    try {
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const lines = run.stdout
        .trim()
        .split(/\r?\n/)
        .map((line) => line.toLowerCase());
      expect(lines[0]).to.match(/^http\/1\.1 204/);
      expect(lines).to.include.members([
        'access-control-allow-origin: https://app.example.com',
        'access-control-allow-methods: get,post',
        'access-control-allow-headers: x-api-key,content-type,x-request-id',
        'access-control-max-age: 600',
      ]);
    } finally {
      await svc.stop();
    }
  });
});
