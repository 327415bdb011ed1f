import { type Command, defineCommand, type ParsedOptions, UsageError } from '../cli/command-line.js';

/** The groups of figures `npm run bench` can run; `--only` picks some. */
export const SECTIONS = ['users', 'claims', 'withdrawals', 'reactions', 'history', 'replay'] as const;
type Section = (typeof SECTIONS)[number];

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
  /** Count every request in the rate-limit store (budgets too large to reject anything): the limiter's cost. */
  rateLimits: boolean;
}

export const benchCommand = defineCommand({
  name: 'bench',
  summary:
    'Starts the real service (embedded SQLite in a temporary directory) and a bare express route in child processes on 127.0.0.1, ' +
    'loads both with autocannon, and prints every performance figure (README, "Benchmarks") next to what it is judged against, measured in the same run: ' +
    'a bare route serving the same bytes, a fresh entity, a raw scan of the log. A markdown table, or JSON with --json. ' +
    'Each load test stops by itself (--duration seconds, at most --max-requests requests).',
  options: {
    only: { type: 'string', value: 'LIST', description: `Sections to run, comma-separated: ${SECTIONS.join(', ')} (default: all)` },
    duration: { type: 'string', value: 'S', description: 'Seconds per load test', default: '5' },
    connections: { type: 'string', value: 'N', description: 'Concurrent connections per load test', default: '32' },
    history: { type: 'string', value: 'N', description: 'Past claims of the veteran referrer and past withdrawals of the veteran user', default: '100000' },
    events: { type: 'string', value: 'N', description: 'Events in the generated log that replay and export read', default: '200000' },
    burst: { type: 'string', value: 'S', description: "Seconds of the claim burst before the reactions' catch-up", default: '5' },
    'cost-commands': { type: 'string', value: 'N', description: 'Commands per entity for the rows/bytes cost comparison', default: '200' },
    'max-requests': { type: 'string', value: 'N', description: 'Upper bound of requests per load test', default: '200000' },
    'catch-up-timeout': { type: 'string', value: 'S', description: 'Give up waiting for reactions or projections to catch up after S seconds', default: '90' },
    json: { type: 'boolean', description: 'Print JSON instead of a table (progress stays on stderr)' },
    'rate-limits': {
      type: 'string',
      value: 'on|off',
      description: "on: count every request in the rate-limit store with budgets too large to reject anything (the limiter's cost); off: the service alone",
      default: 'off',
    },
  },
  notes: ['Exit codes: 0 done, 1 failure, 2 bad options.'],
  examples: [
    'npm run bench',
    'npm run bench -- --only claims,withdrawals --duration 10',
    'npm run bench -- --only history --history 20000',
    'npm run -s bench -- --only replay --events 1000000 --json > bench.json',
  ],
});

type BenchValues = typeof benchCommand extends Command<infer O> ? ParsedOptions<O> : never;

function positive(name: string, value: string, integer = true): number {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(number > 0) || (integer && !Number.isInteger(number))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  }
  return number;
}

function onOff(name: string, value: string): boolean {
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} must be on or off, got "${value}"`);
  return value === 'on';
}

/** The options of a parsed command line (values checked here: UsageError). */
export function benchOptions(values: BenchValues): BenchOptions {
  const only = new Set<Section>();
  for (const name of (values.only ?? SECTIONS.join(',')).split(',').map((part) => part.trim())) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new UsageError(`--only: unknown section "${name}"; known: ${SECTIONS.join(', ')}`);
    only.add(name as Section);
  }
  return {
    duration: positive('duration', values.duration, false),
    connections: positive('connections', values.connections),
    history: positive('history', values.history),
    events: positive('events', values.events),
    burst: positive('burst', values.burst, false),
    costCommands: positive('cost-commands', values['cost-commands']),
    maxRequests: positive('max-requests', values['max-requests']),
    catchUpTimeout: positive('catch-up-timeout', values['catch-up-timeout'], false),
    only,
    json: values.json ?? false,
    rateLimits: onOff('rate-limits', values['rate-limits']),
  };
}

/** Parses without exiting (tests): null for --help, UsageError for a bad command line. */
export function parseBenchOptions(argv: string[]): BenchOptions | null {
  const values = benchCommand.tryParse(argv);
  return values === null ? null : benchOptions(values);
}
