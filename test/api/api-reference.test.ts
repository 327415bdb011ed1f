import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ERROR_CODES } from '../../src/http/error-codes.js';
import { generatedReference, ROOT } from '../../scripts/api-reference.js';
import { eventsMarkdown } from '../../scripts/reference/events-page.js';
import { OpenApiResponseValidator } from '../support/openapi-validator.js';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * Every business-rule code the code base can produce, read from its source: codes given to
 * DomainError (and other `code:` fields), and the `${prefix}.CODE` templates expanded with the
 * prefixes their callers pass. (An ApiError's code is typed by the catalogue, and its status is
 * taken from there: the compiler checks those.)
 */
function producedCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const files = sourceFiles(path.join(ROOT, 'src'));
  const text = new Map(files.map((file) => [file, fs.readFileSync(file, 'utf8')]));
  const prefixes = new Set<string>();
  for (const source of text.values()) {
    for (const match of source.matchAll(/checkConfiguredRewards\([^;]*?'([A-Z_]+)'/g)) prefixes.add(match[1]!);
  }
  for (const [file, source] of text) {
    const relative = path.relative(ROOT, file);
    for (const match of source.matchAll(/new DomainError\(\s*'([A-Z_.]+)'/g)) found.set(match[1]!, relative);
    for (const match of source.matchAll(/(?:notFoundCode|code): '([A-Z][A-Z_]*(?:\.[A-Z_]+)+|[A-Z]+_[A-Z_]+)'/g)) {
      if (!found.has(match[1]!)) found.set(match[1]!, relative);
    }
    for (const match of source.matchAll(/`\$\{\w+\}\.([A-Z_]+)`/g)) {
      for (const prefix of prefixes) found.set(`${prefix}.${match[1]}`, relative);
    }
  }
  return found;
}

describe('API reference: docs/ and the document are generated from the service and lint clean', function () {
  this.timeout(120_000);
  let generated: Map<string, string>;

  before(async () => {
    generated = await generatedReference();
  });

  it('the committed docs/openapi.json, docs/errors.md and typed-client types are current (npm run docs:generate)', () => {
    for (const [file, content] of generated) {
      const committed = fs.existsSync(path.join(ROOT, file)) ? fs.readFileSync(path.join(ROOT, file), 'utf8') : null;
      expect(committed === content, `${file} is stale: run npm run docs:generate and commit it`).to.equal(true);
    }
  });

  it("lints clean with Redocly's recommended rules (offline)", () => {
    const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', 'docs/openapi.json', '--format', 'stylish'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).to.equal(0);
    expect(output, output).to.not.match(/warning|error/i);
  });

  it('every error code the code base can produce is in the catalogue, and in docs/errors.md', () => {
    const errorsMd = generated.get('docs/errors.md')!;
    const produced = producedCodes();
    expect(produced.size).to.be.greaterThan(30);
    for (const [code, file] of produced) {
      expect(Object.hasOwn(ERROR_CODES, code), `${code} (${file}) is missing from src/http/error-codes.ts`).to.equal(true);
    }
    for (const code of Object.keys(ERROR_CODES)) expect(errorsMd, `${code} is missing from docs/errors.md`).to.contain(`\`${code}\``);
  });

  it("the error examples are real: each example message is one the service's source answers with", () => {
    const source = sourceFiles(path.join(ROOT, 'src'))
      .filter((file) => !file.endsWith('error-codes.ts'))
      .map((file) => fs.readFileSync(file, 'utf8'))
      .join('\n');
    // The template literals of the source (`No reward ${key}`, `${source}/reward_key`) as the texts they can make.
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const templates = [...source.matchAll(/`((?:[^`\\]|\\.)*)`/g)]
      .map((match) => match[1]!)
      .filter((template) => template.includes('${'))
      .map((template) => ({
        own: template.replace(/\$\{[^}]*\}/g, ''),
        pattern: new RegExp(
          `^${template
            .split(/\$\{[^}]*\}/)
            .map(literal)
            .join('.+')}$`,
        ),
      }));
    // A message from a template with some text of its own (`${a}` alone would match anything); a
    // source from a template of a pointer (`/${field}`): only its shape. The examples the document
    // shows with a source built from the request are checked against the service in test/api/admin.test.ts.
    const answered = (text: string, kind: 'message' | 'source') =>
      source.includes(`'${text}'`) ||
      templates.some(({ own, pattern }) => (kind === 'message' ? own.length >= 5 : /^(\/|path:\/|query:\/|rule:)/.test(own)) && pattern.test(text));
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      const example = (entry as { example?: { message: string; source: string | null } }).example;
      if (!example) continue;
      expect(answered(example.message, 'message'), `${code}: "${example.message}"`).to.equal(true);
      if (example.source !== null) expect(answered(example.source, 'source'), `${code}: ${example.source}`).to.equal(true);
    }
  });

  it('every operation has a unique operationId, and every example is valid against its schema', () => {
    const document = JSON.parse(generated.get('docs/openapi.json')!);
    const ids = Object.values(document.paths).flatMap((item: any) => Object.values(item).map((operation: any) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(new OpenApiResponseValidator(document).exampleProblems()).to.deep.equal([]);
  });

  it("pages every list as SPEC.md says: each `limit`'s range and default (the document and the route share one declaration)", () => {
    const document = JSON.parse(generated.get('docs/openapi.json')!);
    const limits: Record<string, unknown> = {};
    for (const [route, item] of Object.entries(document.paths) as [string, any][])
      for (const [method, operation] of Object.entries(item) as [string, any][])
        for (const parameter of operation.parameters ?? [])
          if (parameter.name === 'limit') {
            const { description: _description, ...range } = parameter.schema;
            limits[`${method.toUpperCase()} ${route}`] = range;
          }
    const upTo = (maximum: number, fallback?: number) => ({ type: 'integer', minimum: 1, maximum, ...(fallback === undefined ? {} : { default: fallback }) });
    expect(limits).to.deep.equal({
      // §7: admin lists page when asked, else answer every item.
      'GET /admin/rewards': upTo(1000),
      'GET /admin/promo-codes': upTo(1000),
      'GET /admin/affiliates': upTo(1000),
      'GET /admin/users/{app_user_id}/credit-ledger': upTo(1000),
      // §7.8 (≤ 1000), §11 and §12 (1…1000, default 100), §13 (reviews), §14 (1…100, default 10).
      'GET /admin/events': upTo(1000, 100),
      'GET /admin/webhooks/inbound': upTo(1000, 100),
      'GET /admin/webhooks/{id}/deliveries': upTo(1000, 100),
      'GET /admin/reviews': upTo(1000, 100),
      'GET /admin/analytics/top-codes': upTo(100, 10),
    });
  });

  it("types every error's status as an integer, the status of its response", () => {
    const document = JSON.parse(generated.get('docs/openapi.json')!);
    let checked = 0;
    for (const item of Object.values(document.paths) as any[]) {
      for (const operation of Object.values(item) as any[]) {
        for (const [status, response] of Object.entries(operation.responses) as [string, any][]) {
          const errors = response.content?.['application/json']?.schema?.properties?.errors;
          if (Number(status) < 400 || !errors) continue;
          expect(errors.items.properties.status, `${operation.operationId} ${status}`).to.deep.equal({ type: 'integer', enum: [Number(status)] });
          checked += 1;
        }
      }
    }
    expect(checked).to.be.greaterThan(100);
  });

  it('writes every pattern so that any regular-expression dialect reads it as the service does (no \\d, \\w, \\s, \\b)', () => {
    // JSON Schema means ECMA-262 patterns, where \d is [0-9]; in Python's `re` (Schemathesis,
    // hypothesis-jsonschema) it also matches other scripts' digits, so a fuzzer sent "١٢" as a
    // log position and called the service's 400 a rejection of valid data.
    const patterns: string[] = [];
    JSON.stringify(JSON.parse(generated.get('docs/openapi.json')!), (key, value) => {
      if (key === 'pattern' && typeof value === 'string') patterns.push(value);
      return value;
    });
    expect(patterns.length).to.be.greaterThan(10);
    expect(patterns.filter((pattern) => /\\[dwsbDWSB]/.test(pattern))).to.deep.equal([]);
  });

  it('states every `format: uuid` as a pattern too, accepting exactly the ids the service accepts', () => {
    // In OpenAPI 3.1 a format is an annotation: a tool may send "" or any text as a valid uuid.
    const schemas: Array<{ pattern?: string }> = [];
    JSON.stringify(JSON.parse(generated.get('docs/openapi.json')!), (_key, value) => {
      if (value && typeof value === 'object' && value.format === 'uuid') schemas.push(value);
      return value;
    });
    expect(schemas.length).to.be.greaterThanOrEqual(2);
    for (const schema of schemas) {
      expect(schema.pattern, JSON.stringify(schema)).to.be.a('string');
      const accepts = (text: string) => new RegExp(schema.pattern!).test(text);
      for (const id of ['e3e70682-c209-4cac-629f-6fbed82c07cd', 'E3E70682-C209-4CAC-929F-6FBED82C07CD']) expect(accepts(id), id).to.equal(true);
      for (const id of ['', 'e3e70682c2094cac629f6fbed82c07cd', 'e3e70682-c209-4cac-629f-6fbed82c07cdx', 'g3e70682-c209-4cac-629f-6fbed82c07cd'])
        expect(accepts(id), id).to.equal(false);
    }
  });

  it('documents the date-times the service accepts: no hour 24, no minute or second 60', () => {
    const document = JSON.parse(generated.get('docs/openapi.json')!);
    const patterns = new Set<string>();
    JSON.stringify(document, (key, value) => {
      if (key === 'format' && value === 'date-time') return value;
      if (value && typeof value === 'object' && value.format === 'date-time' && typeof value.pattern === 'string') patterns.add(value.pattern);
      return value;
    });
    expect(patterns.size).to.be.greaterThan(0);
    for (const pattern of patterns) {
      const accepts = (text: string) => new RegExp(pattern).test(text);
      expect(accepts('2026-01-02T23:59:59.678Z'), pattern).to.equal(true);
      expect(accepts('2026-01-02T00:00:00+05:30'), pattern).to.equal(true);
      for (const refused of ['2016-12-31T23:59:60Z', '2026-01-02T24:00:00Z', '2026-01-02T12:60:00Z'])
        expect(accepts(refused), `${pattern} ${refused}`).to.equal(false);
    }
  });
});

describe('API reference: what the inbound notifications need beyond their shape is stated', () => {
  it("Play's push needs a messageId and base64 data; RevenueCat's currency is three letters", async () => {
    const document = JSON.parse((await generatedReference()).get('docs/openapi.json')!);
    const body = (path: string) => document.paths[path].post.requestBody.content['application/json'].schema;
    const message = body('/webhooks/google-play').properties.message;
    expect(message.anyOf).to.deep.equal([{ required: ['messageId'] }, { required: ['message_id'] }]);
    expect(message.properties.data).to.include({ type: 'string', format: 'byte' });
    expect(body('/webhooks/revenuecat').properties.event.properties.currency).to.deep.equal({ type: ['string', 'null'], pattern: '^[A-Za-z]{3}$' });
  });

  it('declares how each revenue notification sender proves itself, never by an API key (OpenAPI fuzzer probe: `security: []` told a client nothing)', async () => {
    const document = JSON.parse((await generatedReference()).get('docs/openapi.json')!);
    const schemes = document.components.securitySchemes;
    const senders = (provider: string) =>
      document.paths[`/webhooks/${provider}`].post.security.map((alternative: Record<string, unknown>) => {
        const [name] = Object.keys(alternative);
        const { type, in: where, name: field, scheme } = schemes[name!];
        return where ? `${type} ${where} ${field}` : `${type} ${scheme}`;
      });
    expect(senders('revenuecat')).to.deep.equal(['apiKey header Authorization']);
    expect(senders('stripe')).to.deep.equal(['apiKey header Stripe-Signature']);
    expect(senders('google-play')).to.deep.equal(['http bearer', 'apiKey query token']);
    // The App Store signs the body itself (signedPayload).
    expect(senders('app-store')).to.deep.equal([]);
  });

  it('the event catalogue marks a field some events lack as `name?` at every depth, as the log holds them', () => {
    const row = (type: string) =>
      eventsMarkdown()
        .split('\n')
        .find((line) => line.startsWith(`| \`${type}\``))!;
    // A credit reward has no offer code; a basic one no credits.
    expect(row('RewardCreated')).to.include('credits?: integer').and.include('offer_code_id?: string').and.include('kind: "basic"');
    // Reward entries of configuration events carry `clawback` only when the admin sent it.
    expect(row('ProgramCreated')).to.include('{reward_key, activation, deactivation, clawback?}');
    expect(row('NotificationReceived')).to.include('refunded_transaction_id?: string \\| null').and.include('transaction_id: string \\| null');
  });
});
