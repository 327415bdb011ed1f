/**
 * The first import of the service and of every script that opens a store (`npm run …`): on a
 * Node release the project does not support (package.json `engines`), it says so and exits 1
 * before anything else loads. better-sqlite3's native binary would otherwise crash the process
 * without a word (a segmentation fault on Node 20).
 */
const MINIMUM = { major: 22, minor: 22 };

/** Why `version` (e.g. `20.20.2`) cannot run the service, or null when it can. */
export function unsupportedNode(version: string): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > MINIMUM.major || (major === MINIMUM.major && minor >= MINIMUM.minor)) return null;
  return (
    `Node ${version} cannot run this service: it needs Node 24 LTS, or 22 from ${MINIMUM.major}.${MINIMUM.minor} on. ` +
    'To get one without touching the system: export PATH="$(scripts/runtime/install-node.sh 24):$PATH" (CONTRIBUTING.md).\n'
  );
}

const refusal = unsupportedNode(process.versions.node);
if (refusal !== null) {
  process.stderr.write(refusal);
  process.exit(1);
}
