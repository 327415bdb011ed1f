import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { post, startChildService } from '../support/child-service.js';
import { tempDataDir } from '../support/test-service.js';

/**
 * The data directory on a small tmpfs that fills up, then is given room (needs root and a
 * kernel that lets this process mount: skipped loudly otherwise, as on most laptops).
 */
function mountSmallDisk(): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = tempDataDir();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir], { encoding: 'utf8' });
  return mounted.status === 0 ? dir : null;
}

describe('E2E: a full disk under load', function () {
  this.timeout(120_000);
  let disk: string | null = null;

  before(function () {
    disk = mountSmallDisk();
    if (disk === null) {
      console.warn('    cannot mount a tmpfs here (needs root): the full-disk test is skipped');
      this.skip();
    }
  });
  after(() => {
    if (disk !== null) spawnSync('umount', [disk]);
  });

  it('answers 503 while full (never 5xx of another kind, never 415), logs each failing checkpoint once, and recovers by itself (saying so for each file)', async () => {
    const service = await startChildService(path.join(disk!, 'data'));
    try {
      const statuses = new Map<number, number>();
      const pad = 'x'.repeat(3_000);
      for (let index = 0; index < 600 && (statuses.get(503) ?? 0) < 50; index += 1) {
        const { status } = await post(service.url, '/users', { app_user_id: `u${index}`, metadata: { pad } });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      expect([...statuses.keys()].sort()).to.deep.equal([201, 503]);
      // Full for a few seconds: the background checkpoints fail all along, and say so once per file.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const warnings = service
        .logs()
        .split('\n')
        .filter((line) => line.includes('background WAL checkpoint failing'));
      expect(warnings.length).to.be.within(1, 4);
      expect(spawnSync('mount', ['-o', 'remount,size=64m', disk!]).status).to.equal(0);
      let answer = 503;
      for (let attempt = 0; attempt < 50 && answer !== 201; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        answer = (await post(service.url, '/users', { app_user_id: `after-${attempt}` })).status;
      }
      expect(answer).to.equal(201);
      expect((await fetch(`${service.url}/readyz`)).status).to.equal(200);
      // Each file whose checkpoints failed says once it works again (an info line). The thread
      // tries a failing file again at most every 5 s: a bounded wait, not a timing claim.
      const filesIn = (message: string) =>
        new Set(
          service
            .logs()
            .split('\n')
            .filter((line) => line.includes(message))
            .map((line) => (JSON.parse(line) as { file: string }).file),
        );
      const failed = filesIn('background WAL checkpoint failing');
      for (let waited = 0; [...failed].some((file) => !filesIn('background WAL checkpoint works again').has(file)) && waited < 30_000; waited += 200) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect([...filesIn('background WAL checkpoint works again')].sort()).to.deep.equal([...failed].sort());
    } finally {
      await service.stop();
      fs.rmSync(path.join(disk!, 'data'), { recursive: true, force: true });
    }
  });
});
