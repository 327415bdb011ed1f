import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { BULK_BODY_LIMIT } from '../../src/http/body-limits.js';

/**
 * There is no compose tool on our machines, so the compose file is checked against what the
 * service reads: the variables it sets, the images and builds, health checks and dependencies.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface ComposeService {
  stop_grace_period?: string;
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
  ports?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
const services = compose.services;
/** Our own services: those built from this repository's Dockerfile. */
const ours = Object.entries(services).filter(([, service]) => service.build !== undefined);

function environment(service: ComposeService): Record<string, string> {
  const raw = service.environment ?? {};
  if (Array.isArray(raw)) {
    return Object.fromEntries(raw.map((entry) => [entry.split('=')[0]!, entry.slice(entry.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, value === null ? '' : String(value)]));
}

/** What compose would pass for `${VAR}`, `${VAR:-default}` and `${VAR:?message}` with VAR unset. */
function interpolate(value: string): string {
  // Each operator-supplied value its own (a client key and a secret key must differ).
  return value.replace(/\$\{([A-Z0-9_]+)(?::?([-?])([^}]*))?\}/g, (_match, name: string, kind?: string, rest?: string) =>
    kind === '-' ? (rest ?? '') : `${name.toLowerCase()}-from-operator`,
  );
}

function dependencies(service: ComposeService): Record<string, string | undefined> {
  const raw = service.depends_on ?? {};
  if (Array.isArray(raw)) return Object.fromEntries(raw.map((name) => [name, undefined]));
  return Object.fromEntries(Object.entries(raw).map(([name, options]) => [name, options.condition]));
}

function commandOf(service: ComposeService): string[] {
  const command = service.command ?? [];
  return Array.isArray(command) ? command : command.split(/\s+/);
}

function healthTest(service: ComposeService): string {
  const test = service.healthcheck?.test ?? [];
  return Array.isArray(test) ? test.join(' ') : test;
}

describe('docker-compose.yml', function () {
  it('runs EventStoreDB, MongoDB, the API and the projector', function () {
    expect(Object.keys(services)).to.include.members(['eventstore', 'mongo', 'api', 'projector']);
    expect(ours.map(([name]) => name).sort()).to.deep.equal(['api', 'projector']);
  });

  it('lets EventStoreDB take an append the size of a bulk upload (its default, 1 MiB, is below 10,000 codes with links)', function () {
    expect(Number(environment(services.eventstore!).EVENTSTORE_MAX_APPEND_SIZE)).to.be.at.least(2 * BULK_BODY_LIMIT);
    const containers = fs.readFileSync(path.join(ROOT, 'test/docker/backend-containers.ts'), 'utf8');
    expect(Number(/EVENTSTORE_MAX_APPEND_SIZE: '(\d+)'/.exec(containers)?.[1])).to.be.at.least(2 * BULK_BODY_LIMIT);
  });

  it('gives every service an image or a build and a health check', function () {
    for (const [name, service] of Object.entries(services)) {
      expect(service.image ?? service.build, `${name}: image or build`).to.not.equal(undefined);
      expect(service.healthcheck?.disable, `${name}: health check disabled`).to.not.equal(true);
      expect(healthTest(service), `${name}: health check`).to.have.length.greaterThan(0);
    }
  });

  it('sets only environment variables the service configuration knows', function () {
    for (const [name, service] of ours) {
      for (const variable of Object.keys(environment(service))) {
        expect(CONFIG_VARIABLES, `${name} sets ${variable}`).to.include(variable);
      }
    }
  });

  it('sets values the configuration accepts (with the operator-supplied keys filled in)', function () {
    for (const [name, service] of ours) {
      const env = Object.fromEntries(Object.entries(environment(service)).map(([key, value]) => [key, interpolate(value)]));
      const config = loadConfig(env);
      expect(config.EVENTSTORE_URL, `${name}: EventStoreDB selected`).to.be.a('string');
      expect(config.MONGODB_URL, `${name}: MongoDB selected`).to.be.a('string');
      expect(config.NODE_ENV).to.equal('production');
    }
  });

  it('points the services at the store services by name, MongoDB as the replica set it runs', function () {
    for (const [, service] of ours) {
      const env = environment(service);
      expect(new URL(env.EVENTSTORE_URL!).hostname).to.equal('eventstore');
      const mongoUrl = new URL(env.MONGODB_URL!);
      expect(mongoUrl.hostname).to.equal('mongo');
      const replicaSet = mongoUrl.searchParams.get('replicaSet');
      expect(replicaSet).to.be.a('string');
      expect(commandOf(services.mongo!).join(' ')).to.contain(`--replSet ${replicaSet}`);
    }
  });

  it('makes the API and the projector wait for healthy stores', function () {
    for (const [name, service] of ours) {
      expect(dependencies(service), name).to.deep.include({ eventstore: 'service_healthy', mongo: 'service_healthy' });
    }
  });

  it('runs the API without the in-process projector and the projector as its own process', function () {
    const api = services.api!;
    const projector = services.projector!;
    expect(commandOf(api)).to.deep.equal(['node', 'dist/src/main.js', 'api']);
    expect(environment(api).RUN_PROJECTOR).to.equal('false');
    expect(commandOf(projector)).to.deep.equal(['node', 'dist/src/main.js', 'projector']);
  });

  it('health-checks each of our services on the port it listens on', function () {
    for (const [name, service] of ours) {
      const port = environment(service).PORT ?? '8080';
      expect(healthTest(service), name).to.match(new RegExp(`127\\.0\\.0\\.1:${port}/(healthz|readyz)`));
    }
  });

  it('uses EventStoreDB 24.x (or KurrentDB) without the removed external-TCP options', function () {
    const eventstore = services.eventstore!;
    expect(eventstore.image).to.match(
      /^(eventstore\/eventstore:2[4-9]|docker\.kurrent\.io\/kurrent-latest\/kurrentdb:2[5-9]|kurrentplatform\/kurrentdb:2[5-9])/,
    );
    for (const variable of Object.keys(environment(eventstore))) {
      expect(variable).to.not.match(/EXT(ERNAL)?_TCP|ENABLE_EXTERNAL_TCP|TCP_PORT/);
    }
  });

  it('initiates MongoDB as a replica set and keeps the data in declared volumes', function () {
    const mongo = services.mongo!;
    expect(healthTest(mongo)).to.contain('rs.initiate');
    const declared = Object.keys(compose.volumes ?? {});
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (!source.startsWith('.') && !source.startsWith('/')) expect(declared, `${name} uses volume ${source}`).to.include(source);
      }
    }
    expect(services.eventstore!.volumes?.some((volume) => volume.endsWith(':/var/lib/eventstore'))).to.equal(true);
    expect(mongo.volumes?.some((volume) => volume.endsWith(':/data/db'))).to.equal(true);
  });

  it('lets the projector scale (a standby): no fixed host port', function () {
    for (const port of services.projector!.ports ?? []) {
      expect(port, 'projector port mapping').to.match(/^\d+$/);
    }
  });

  it('requires the API keys from the operator (environment or .env) and passes them to our services', function () {
    for (const [name, service] of ours) {
      const env = environment(service);
      for (const variable of ['CLIENT_API_KEYS', 'SECRET_API_KEYS']) {
        expect(env[variable], `${name}: ${variable}`).to.match(new RegExp(`^\\$\\{${variable}:\\?[^}]+\\}$`));
      }
    }
  });

  it('gives each of our services longer to stop than its own shutdown deadline', function () {
    const seconds = (text: string) => {
      const match = /^(\d+)s$/.exec(text);
      expect(match, text).to.not.equal(null);
      return Number(match![1]);
    };
    for (const [name, service] of ours) {
      const deadline = loadConfig(Object.fromEntries(Object.entries(environment(service)).map(([key, value]) => [key, interpolate(value)]))).SHUTDOWN_TIMEOUT_S;
      expect(seconds(service.stop_grace_period ?? '10s'), name).to.be.greaterThan(deadline);
    }
  });
});

describe('.env.example', function () {
  const text = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  const assignments = text
    .split('\n')
    .map((line) => line.replace(/^#\s*/, ''))
    .filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);

  it('sets or shows only variables the configuration knows, with values it accepts', function () {
    expect(assignments.length).to.be.greaterThan(5);
    for (const [name] of assignments) expect(CONFIG_VARIABLES, name).to.include(name);
    const active = text.split('\n').filter((line) => /^[A-Z]/.test(line));
    expect(() => loadConfig(Object.fromEntries(active.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)])))).to.not.throw();
  });

  it('holds the keys compose requires', function () {
    for (const variable of ['CLIENT_API_KEYS', 'SECRET_API_KEYS']) expect(assignments.map(([name]) => name)).to.include(variable);
  });
});

describe('Dockerfile', function () {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

  it('builds on Node 24 slim, in stages, without a compiler (better-sqlite3 is prebuilt)', function () {
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    expect(bases).to.have.length.greaterThan(1);
    for (const base of bases) expect(base).to.match(/^node:24(\.\d+)*-(\w+-)?slim$/);
    expect(dockerfile).to.not.match(/python3|\bmake\b|g\+\+|build-essential|node-gyp/);
    expect(dockerfile)
      .to.match(/npm ci/)
      .and.to.match(/npm run build/)
      .and.to.match(/npm prune --omit=dev/);
    expect(dockerfile).to.contain('dist/src/main.js');
  });

  it('checks health on /healthz at the port the process listens on', function () {
    expect(dockerfile).to.match(/^HEALTHCHECK .*\\\n\s+CMD .*127\.0\.0\.1:\$\{process\.env\.PORT \|\| 8080\}\/healthz/m);
  });

  it('ships the compiled scripts: the build compiles scripts/ into dist/scripts', function () {
    const build = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include).to.include.members(['src', 'projections', 'scripts']);
    expect(dockerfile)
      .to.match(/COPY scripts \.\/scripts/)
      .and.to.match(/COPY --from=build \/app\/dist \.\/dist/);
  });
});
