/**
 * Root hooks of `npm run test:docker`: starts EventStoreDB and MongoDB once for every suite.
 * Without a container runtime it says loudly that nothing ran and skips everything (exit 0);
 * with REQUIRE_DOCKER=1 it fails instead.
 */
import { type BackendContainers, containerRuntimeProblem, startBackendContainers } from './backend-containers.js';

let containers: BackendContainers | null = null;
let skippedBecause: string | null = null;

/** The running containers (inside tests; the root hook has started them). */
export function backendContainers(): BackendContainers {
  if (containers === null) throw new Error('Backend containers are not running');
  return containers;
}

function banner(problem: string): string {
  const line = '!'.repeat(78);
  return [
    '',
    line,
    '!!  NOTHING RAN: no container runtime (Docker/Podman) is reachable.',
    '!!  The EventStoreDB + MongoDB contract and end-to-end suites were SKIPPED.',
    '!!  Start a container runtime and run `npm run test:docker` again, or set',
    '!!  REQUIRE_DOCKER=1 to make this a failure (CI with Docker should).',
    `!!  Reason: ${problem.split('\n')[0]}`,
    line,
    '',
  ].join('\n');
}

before(async function () {
  this.timeout(600_000);
  const problem = await containerRuntimeProblem();
  if (problem !== null) {
    process.stderr.write(banner(problem));
    skippedBecause = problem;
    if (process.env.REQUIRE_DOCKER === '1') throw new Error(`REQUIRE_DOCKER=1 but no container runtime is reachable: ${problem}`);
    this.skip();
  }
  containers = await startBackendContainers();
});

after(async function () {
  this.timeout(120_000);
  // Again at the very end, below the list of pending tests, so nobody mistakes it for a pass.
  if (skippedBecause !== null) process.stderr.write(banner(skippedBecause));
  await containers?.stop();
  containers = null;
});
