import { expect } from 'chai';
import { defineCommand, UsageError } from '../../../scripts/cli/command-line.js';
import { createProgress } from '../../../scripts/cli/progress.js';
import { formatTable } from '../../../scripts/cli/table.js';

const command = defineCommand({
  name: 'sample',
  summary: 'A sample command.',
  options: {
    projection: { type: 'string', value: 'NAME', description: 'Only this read model' },
    format: { type: 'string', value: 'FORMAT', description: 'Output format', default: 'ndjson' },
    verbose: { type: 'boolean', short: 'v', description: 'Say more' },
  },
  notes: ['Exit codes: 0 done, 2 usage error.'],
  examples: ['npm run sample', 'npm run sample -- --projection users'],
});

describe('scripts/cli: the shared command-line parser', () => {
  it('parses known flags, with defaults, both --name value and --name=value', () => {
    expect(command.tryParse(['--projection', 'users', '-v'])).to.deep.equal({ projection: 'users', format: 'ndjson', verbose: true, positionals: [] });
    const parsed = command.tryParse(['--format=csv']);
    expect(parsed?.format).to.equal('csv');
    expect(parsed?.projection).to.equal(undefined);
  });

  it('returns null for --help and -h, whatever else is on the line', () => {
    expect(command.tryParse(['--help'])).to.equal(null);
    expect(command.tryParse(['-h'])).to.equal(null);
    expect(command.tryParse(['--projection', 'users', '--help'])).to.equal(null);
  });

  it('refuses unknown flags, missing values, empty values and stray arguments', () => {
    for (const argv of [['--nope'], ['--projection'], ['--projection', ''], ['stray'], ['-x'], ['--verbose=yes']]) {
      expect(() => command.tryParse(argv), argv.join(' ')).to.throw(UsageError);
    }
    expect(() => command.tryParse(['--nope'])).to.throw(/--nope/);
  });

  it('refuses an option given twice, rather than dropping the first', () => {
    for (const argv of [
      ['--projection', 'users', '--projection', 'codes'],
      ['--projection=users', '--projection', 'codes'],
      ['-v', '--verbose'],
    ]) {
      expect(() => command.tryParse(argv), argv.join(' ')).to.throw(UsageError, /is given more than once/);
    }
  });

  it('prints a help with the usage, every option (and --help), the notes and the examples', () => {
    const help = command.help();
    expect(help).to.match(/^Usage: npm run sample -- \[options\]\n/);
    for (const text of [
      '--projection NAME',
      '--format FORMAT',
      '(default: ndjson)',
      '-v, --verbose',
      '-h, --help',
      'Exit codes',
      'npm run sample -- --projection users',
    ]) {
      expect(help).to.contain(text);
    }
  });
});

describe('scripts/cli: the usage line where there is no npm run', () => {
  it('names `node dist/scripts/NAME.js` when the script runs compiled (the container image)', () => {
    const [node, script] = process.argv;
    try {
      process.argv[1] = `${process.cwd()}/dist/scripts/sample.js`;
      const compiled = defineCommand({ name: 'sample', summary: 'A sample command.', options: {}, examples: [] });
      expect(compiled.help()).to.match(/^Usage: node dist\/scripts\/sample\.js\n/);
    } finally {
      process.argv.splice(0, 2, node!, script!);
    }
  });
});

describe('scripts/cli: progress off a terminal', () => {
  function fakeStream() {
    const lines: string[] = [];
    const stream = { isTTY: false, write: (text: string) => lines.push(text) } as unknown as NodeJS.WriteStream;
    return { lines, stream };
  }

  it('prints no 0% line, then plain lines (label, percentage, detail) no more often than the interval', () => {
    const { lines, stream } = fakeStream();
    const progress = createProgress({ label: 'replay', total: 200, format: '{bar}', line: ({ events }) => `${events} events`, intervalMs: 0, stream });
    progress.update(0, { events: 0 });
    expect(lines).to.deep.equal([]);
    progress.update(50, { events: 50 });
    progress.update(200, { events: 200 });
    progress.stop();
    expect(lines).to.deep.equal(['replay: 25% | 50 events\n', 'replay: 100% | 200 events\n']);

    const slow = fakeStream();
    const throttled = createProgress({ label: 'export', total: 10, format: '{bar}', line: () => 'x', intervalMs: 60_000, stream: slow.stream });
    for (let value = 1; value <= 10; value += 1) throttled.update(value, {});
    expect(slow.lines).to.deep.equal([]);
  });
});

describe('scripts/cli: tables', () => {
  it('have a header row and a rule, numbers right-aligned', () => {
    expect(
      formatTable(
        ['key', 'users'],
        [
          ['coins', 12],
          ['pass', 3],
        ],
      ),
    ).to.equal('key    users\n-----  -----\ncoins     12\npass       3\n');
  });
});
