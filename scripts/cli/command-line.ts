/**
 * The one argument parser of every script: `node:util` `parseArgs` in strict mode, plus the
 * conventions all scripts share.
 *
 * - `--help` / `-h` prints the usage, the options and examples on stdout and exits 0.
 * - An unknown flag, a missing value or a stray argument is a usage error: one line saying
 *   what is wrong, the usage line, and exit code 2 (the shell's convention for misuse).
 * - Exit codes (`EXIT`) mean the same in every script.
 *
 *   const command = defineCommand({
 *     name: 'replay',
 *     summary: 'Rebuilds read models from the event log.',
 *     options: { projection: { type: 'string', value: 'NAME', description: 'Only this read model' } },
 *     examples: ['npm run replay', 'npm run replay -- --projection users'],
 *   });
 *   const { projection } = command.parse(process.argv.slice(2));   // typed: string | undefined
 */
import path from 'node:path';
import { parseArgs } from 'node:util';

/** Exit codes shared by the scripts (and the service: 78 for a bad configuration). */
export const EXIT = {
  OK: 0,
  /** The work failed, or found what it looks for (e.g. an audit mismatch). */
  FAILURE: 1,
  /** Bad command line: unknown flag, missing or malformed value. */
  USAGE: 2,
  /** The store to read does not exist (e.g. a DATA_DIR without a database). */
  NO_INPUT: 66,
  /** Not possible right now; try again later (e.g. read models still catching up). */
  TEMPORARY: 75,
  /** Bad configuration (environment variables). */
  CONFIG: 78,
} as const;

interface StringOption {
  type: 'string';
  /** Placeholder shown in the help, e.g. `NAME`. */
  value: string;
  description: string;
  short?: string;
  default?: string;
  multiple?: false;
}

interface BooleanOption {
  type: 'boolean';
  description: string;
  short?: string;
  default?: boolean;
  multiple?: false;
}

export type OptionSpec = StringOption | BooleanOption;

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** The script's name (`replay`), used in messages. */
  name: string;
  /** How a user runs it; defaults to `npm run NAME --` (`node dist/scripts/NAME.js` when it runs compiled, as in the image). */
  invocation?: string;
  /** One or a few sentences: what it does. */
  summary: string;
  options: O;
  /** Extra paragraphs after the options (exit codes, environment, notes). */
  notes?: string[];
  /** Command lines shown under "Examples". */
  examples: string[];
  /** Positional arguments (e.g. `[all|api|projector]`); without it, any positional is a usage error. */
  positionals?: { usage: string; description: string };
}

type ValueOf<S extends OptionSpec> = S extends StringOption
  ? S extends { default: string }
    ? string
    : string | undefined
  : S extends { default: boolean }
    ? boolean
    : boolean | undefined;

export type ParsedOptions<O extends Record<string, OptionSpec>> = { [K in keyof O]: ValueOf<O[K]> };

/** A problem with the command line (exit code 2). Scripts throw it for values they check themselves. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Command<O extends Record<string, OptionSpec>> {
  readonly name: string;
  /** The whole `--help` text. */
  help(): string;
  /** The one-line usage. */
  usage(): string;
  /**
   * Parses `argv` (without node and the script path). On `--help` prints the help and exits 0;
   * on a usage error prints it and exits 2. Returns the options and the positionals.
   */
  parse(argv: string[]): ParsedOptions<O> & { positionals: string[] };
  /** Same as `parse` but throws `UsageError` instead of exiting, and returns null for `--help` (tests). */
  tryParse(argv: string[]): (ParsedOptions<O> & { positionals: string[] }) | null;
  /** Prints a usage error (the message and the usage line) on stderr and exits 2. */
  fail(message: string): never;
}

function flagOf(name: string, spec: OptionSpec): string {
  const long = spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`;
  return spec.short ? `-${spec.short}, ${long}` : `    ${long}`;
}

/** Word-wraps `text` to `width` columns, indenting continuation lines by `indent`. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((part) => part.length > 0)) {
    if (line.length > 0 && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line.length > 0 ? `${line} ${word}` : word;
    }
  }
  if (line.length > 0) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** `node dist/scripts/NAME.js` when the script runs compiled (in the container image there is no npm run). */
function compiledInvocation(): string | null {
  const script = process.argv[1];
  return script && /[\\/]dist[\\/]scripts[\\/][^\\/]+\.js$/.test(script) ? `node ${path.relative(process.cwd(), script)}` : null;
}

export function defineCommand<const O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): Command<O> {
  if ('help' in spec.options) throw new Error('--help is added by defineCommand');
  const invocation = spec.invocation ?? compiledInvocation() ?? `npm run ${spec.name} --`;
  const hasOptions = Object.keys(spec.options).length > 0;
  const usage = () => `Usage: ${invocation}${hasOptions ? ' [options]' : ''}${spec.positionals ? ` ${spec.positionals.usage}` : ''}`;
  const help = () => {
    const rows: [string, string][] = Object.entries(spec.options).map(([name, option]) => {
      const fallback = option.default !== undefined && option.type === 'string' ? ` (default: ${option.default})` : '';
      return [flagOf(name, option), `${option.description}${fallback}`];
    });
    rows.push(['-h, --help', 'Show this help and exit']);
    const width = Math.max(...rows.map(([flag]) => flag.length));
    const sections = [
      usage(),
      '',
      wrap(spec.summary, 100, 0),
      ...(spec.positionals ? ['', 'Arguments:', `  ${spec.positionals.usage}  ${spec.positionals.description}`] : []),
      '',
      'Options:',
      ...rows.map(([flag, description]) => `  ${flag.padEnd(width)}  ${wrap(description, 100, width + 4)}`),
      ...(spec.notes ?? []).flatMap((note) => ['', wrap(note, 100, 0)]),
      '',
      'Examples:',
      ...spec.examples.map((example) => `  ${example}`),
    ];
    return `${sections.join('\n')}\n`;
  };
  const options = Object.fromEntries(
    Object.entries(spec.options).map(([name, option]) => [
      name,
      { type: option.type, ...(option.short ? { short: option.short } : {}), ...(option.default !== undefined ? { default: option.default } : {}) },
    ]),
  );
  const tryParse = (argv: string[]) => {
    let parsed: { values: Record<string, unknown>; positionals: string[]; tokens: { kind: string; name?: string }[] };
    try {
      parsed = parseArgs({
        args: argv,
        options: { ...options, help: { type: 'boolean', short: 'h' } },
        strict: true,
        allowPositionals: spec.positionals !== undefined,
        tokens: true,
      }) as typeof parsed;
    } catch (error) {
      // Node's own messages name the flag; drop its hint about `--` (not how npm scripts take arguments).
      const message = error instanceof Error ? error.message.replace(/\. To specify a positional argument starting with a '-'.*$/s, '.') : String(error);
      throw new UsageError(message);
    }
    if (parsed.values.help === true) return null;
    // parseArgs keeps the last of a repeated option; the first would be dropped without a word.
    const given = parsed.tokens.flatMap((token) => (token.kind === 'option' && token.name !== undefined ? [token.name] : []));
    const repeated = given.find((name, index) => given.indexOf(name) !== index);
    if (repeated !== undefined) throw new UsageError(`Option --${repeated} is given more than once`);
    const { help: _help, ...values } = parsed.values;
    for (const [name, option] of Object.entries(spec.options)) {
      const value = values[name];
      if (option.type === 'string' && typeof value === 'string' && value.trim() === '') throw new UsageError(`Option --${name} needs a value`);
    }
    return { ...(values as ParsedOptions<O>), positionals: parsed.positionals };
  };
  const fail = (message: string): never => {
    process.stderr.write(`${spec.name}: ${message}\n${usage()}\nRun with --help for the options.\n`);
    process.exit(EXIT.USAGE);
  };
  return {
    name: spec.name,
    help,
    usage,
    tryParse,
    fail,
    parse(argv) {
      let parsed: ReturnType<typeof tryParse>;
      try {
        parsed = tryParse(argv);
      } catch (error) {
        if (error instanceof UsageError) fail(error.message);
        throw error;
      }
      if (parsed === null) {
        process.stdout.write(help());
        process.exit(EXIT.OK);
      }
      return parsed;
    },
  };
}

/**
 * Runs a script's `main` and exits with its code. A `UsageError` thrown later (a value the
 * script checks itself) exits 2 with the usage; anything else is one line (the stack only with
 * DEBUG set) and exit 1.
 */
export function runScript<O extends Record<string, OptionSpec>>(command: Command<O>, main: () => Promise<number>): void {
  main().then(
    (code) => {
      // Let stdout flush before leaving (it may be a pipe the reader drains slowly).
      if (process.stdout.writableLength > 0 && !process.stdout.destroyed) process.stdout.once('drain', () => process.exit(code));
      else process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof UsageError) command.fail(error.message);
      const detail = error instanceof Error ? (process.env.DEBUG ? error.stack : error.message) : String(error);
      process.stderr.write(`${command.name} failed: ${detail}\n`);
      process.exit(EXIT.FAILURE);
    },
  );
}
