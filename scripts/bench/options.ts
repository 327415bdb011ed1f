import { parseArgs } from 'node:util';

/** The groups of figures `npm run bench` can run; `--only` picks some. */
export const SECTIONS = ['users', 'claims', 'withdrawals', 'reactions', 'history', 'replay'] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchOptions {
  /** Seconds per load test. */
  duration: number;
  connections: number;
  /** Past claims of the veteran referrer and past withdrawals of the veteran user. */
  history: number;
  /** Events in the generated log that replay and export read. */
  events: number;
  /** Seconds of the claim burst before measuring the reactions' catch-up. */
  burst: number;
  /** Commands per entity for the rows/bytes cost comparison (fresh vs long history). */
  costCommands: number;
  /** Upper bound on requests of any one load test (a run stops by itself). */
  maxRequests: number;
  /** Seconds to wait for the reactions to catch up before reporting "not within". */
  catchUpTimeout: number;
  only: Set<Section>;
  json: boolean;
  help: boolean;
}

export class UsageError extends Error {}

export const USAGE = `Usage: npm run bench -- [options]

Starts the real service (embedded SQLite in a temporary directory) and a bare express route
in child processes on 127.0.0.1, loads both with autocannon, and prints every figure of
issue #10 next to the bare route measured in the same run: a table, or JSON with --json.
Each load test stops by itself (--duration seconds, at most --max-requests requests).

Options:
  --only LIST            sections to run, comma-separated (default: all):
                         ${SECTIONS.join(', ')}
  --duration S           seconds per load test (default 5)
  --connections N        concurrent connections per load test (default 32)
  --history N            past claims of the veteran referrer and past withdrawals of the
                         veteran user (default 100000)
  --events N             events in the generated log for replay and export (default 200000)
  --burst S              seconds of the claim burst before the reactions' catch-up (default 5)
  --cost-commands N      commands per entity for the rows/bytes cost comparison (default 200)
  --max-requests N       upper bound of requests per load test (default 20000)
  --catch-up-timeout S   give up waiting for reactions or projections to catch up
                         after S seconds (default 90)
  --json                 print JSON instead of a table (progress stays on stderr)
  -h, --help             this help

Examples:
  npm run bench
  npm run bench -- --only claims,withdrawals --duration 10
  npm run bench -- --only history --history 20000
  npm run -s bench -- --only replay --events 1000000 --json > bench.json

Exit codes: 0 done, 1 failure, 2 bad options.`;

function positive(name: string, value: string | undefined, fallback: number, integer = true): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(number > 0) || (integer && !Number.isInteger(number))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  }
  return number;
}

export function parseBenchOptions(argv: string[]): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        only: { type: 'string' },
        duration: { type: 'string' },
        connections: { type: 'string' },
        history: { type: 'string' },
        events: { type: 'string' },
        burst: { type: 'string' },
        'cost-commands': { type: 'string' },
        'max-requests': { type: 'string' },
        'catch-up-timeout': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const only = new Set<Section>();
  for (const name of (values.only ?? SECTIONS.join(',')).split(',').map((part) => part.trim())) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new UsageError(`--only: unknown section "${name}"; known: ${SECTIONS.join(', ')}`);
    only.add(name as Section);
  }
  return {
    duration: positive('duration', values.duration, 5, false),
    connections: positive('connections', values.connections, 32),
    history: positive('history', values.history, 100_000),
    events: positive('events', values.events, 200_000),
    burst: positive('burst', values.burst, 5, false),
    costCommands: positive('cost-commands', values['cost-commands'], 200),
    maxRequests: positive('max-requests', values['max-requests'], 20_000),
    catchUpTimeout: positive('catch-up-timeout', values['catch-up-timeout'], 90, false),
    only,
    json: values.json ?? false,
    help: values.help ?? false,
  };
}
