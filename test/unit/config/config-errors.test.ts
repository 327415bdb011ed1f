import { expect } from 'chai';
import { ConfigError, loadConfig, misspeltSettings } from '../../../src/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('Configuration errors', () => {
  it('echo the bad value and say what is expected, not what the validator saw', () => {
    const [problem] = problemsOf({ CLAIM_WINDOW_DAYS: 'abc' });
    expect(problem).to.equal('CLAIM_WINDOW_DAYS=abc: expected a whole number of days from 1 to 36500 (default 7)');
    expect(problem).to.not.match(/nan|received/i);
    expect(problemsOf({ REFERRAL_LINK_BASE: 'not a url' })).to.deep.equal([
      'REFERRAL_LINK_BASE="not a url": expected an absolute URL, e.g. https://example.com/r',
    ]);
    expect(problemsOf({ SHUTDOWN_TIMEOUT_S: '0' })[0]).to.match(/^SHUTDOWN_TIMEOUT_S=0: expected a number of seconds greater than 0/);
  });

  it('durations past what a timer or a date can hold are refused (Node would fire such a timer after 1 ms), the largest allowed accepted', () => {
    const tooLong = {
      SHUTDOWN_TIMEOUT_S: '2147484',
      SWEEP_INTERVAL_S: '99999999999',
      WEBHOOK_TIMEOUT_MS: '3000000000',
      ASC_TIMEOUT_MS: '2147483648',
      WEBHOOK_YIELD_MAX_S: '2147484',
      CLAIM_WINDOW_DAYS: '36501',
      WEBHOOK_RETRY_HOURS: '876001',
      WEBHOOK_DISABLE_AFTER_HOURS: '1e12',
      WEBHOOK_RETENTION_DAYS: '36501',
    };
    const problems = problemsOf(tooLong);
    expect(problems.map((problem) => problem.split('=')[0])).to.have.members(Object.keys(tooLong));
    expect(problems.find((problem) => problem.startsWith('WEBHOOK_TIMEOUT_MS'))).to.equal(
      'WEBHOOK_TIMEOUT_MS=3000000000: expected a whole number of milliseconds from 1 to 2147483647 (default 10000)',
    );
    const longest = loadConfig({
      SHUTDOWN_TIMEOUT_S: '2147483',
      SWEEP_INTERVAL_S: '2147483',
      WEBHOOK_TIMEOUT_MS: '2147483647',
      ASC_TIMEOUT_MS: '2147483647',
      WEBHOOK_YIELD_MAX_S: '2147483',
      CLAIM_WINDOW_DAYS: '36500',
      WEBHOOK_RETRY_HOURS: '876000',
      WEBHOOK_DISABLE_AFTER_HOURS: '876000',
      WEBHOOK_RETENTION_DAYS: '36500',
    });
    expect(longest).to.include({ SHUTDOWN_TIMEOUT_S: 2_147_483, WEBHOOK_TIMEOUT_MS: 2_147_483_647, CLAIM_WINDOW_DAYS: 36_500 });
  });

  it("values below a setting's range are refused, each named once, and the smallest in range accepted", () => {
    // [setting, refused value, smallest accepted value]
    const bounds: [string, string, string][] = [
      ['SWEEP_INTERVAL_S', '0', '1'],
      ['WEBHOOK_TIMEOUT_MS', '0', '1'],
      ['ASC_TIMEOUT_MS', '0', '1'],
      ['CLAIM_WINDOW_DAYS', '0', '1'],
      ['READY_MAX_LAG', '-1', '0'],
      ['WEBHOOK_RETRY_HOURS', '0', '0.5'],
      ['WEBHOOK_DISABLE_AFTER_HOURS', '0', '0.5'],
      ['WEBHOOK_RETENTION_DAYS', '0', '0.5'],
      ['WEBHOOK_YIELD_MAX_S', '-1', '0'],
      ['ASC_CACHE_TTL_S', '0', '1'],
      ['ASC_CACHE_TTL_S', '-5', '1'],
      ['PORT', '-1', '0'],
    ];
    for (const [name, refused, smallest] of bounds) {
      const problems = problemsOf({ [name]: refused });
      expect(problems, `${name}=${refused}`).to.have.length(1);
      expect(problems[0], `${name}=${refused}`).to.match(new RegExp(`^${name}=${refused}: expected `));
      expect(loadConfig({ [name]: smallest })[name as keyof ReturnType<typeof loadConfig>], `${name}=${smallest}`).to.equal(Number(smallest));
    }
    expect(problemsOf({ CLAIM_WINDOW_DAYS: '0' })).to.deep.equal(['CLAIM_WINDOW_DAYS=0: expected a whole number of days from 1 to 36500 (default 7)']);
    expect(problemsOf({ PORT: '65536' })).to.deep.equal(['PORT=65536: expected a port number from 0 to 65535 (default 8080; 0 picks a free port)']);
    expect(loadConfig({ PORT: '65535' }).PORT).to.equal(65_535);
  });

  it('a number setting is written in decimal: blank, hex or an exponent is refused (a blank PORT was read as 0, a random port)', () => {
    const numbers = ['PORT', 'READY_MAX_LAG', 'WEBHOOK_YIELD_MAX_S', 'SHUTDOWN_TIMEOUT_S', 'CLAIM_WINDOW_DAYS', 'WEBHOOK_TIMEOUT_MS', 'ASC_CACHE_TTL_S'];
    for (const name of numbers) {
      for (const value of ['', ' ', '0x10', '1e3', '+5', '.5', 'Infinity']) {
        const problems = problemsOf({ [name]: value });
        expect(problems, `${name}=${JSON.stringify(value)}`).to.have.length(1);
        expect(problems[0], `${name}=${JSON.stringify(value)}`).to.match(new RegExp(`^${name}=.*: expected `));
      }
    }
    // Blanks around the digits are read past, as in every setting; a fraction where the setting takes one.
    expect(loadConfig({ PORT: ' 9000 ', SHUTDOWN_TIMEOUT_S: '0.5' })).to.include({ PORT: 9000, SHUTDOWN_TIMEOUT_S: 0.5 });
  });

  it("APPLE_APP_APPLE_ID is the app's numeric Apple ID; the external backend needs both EVENTSTORE_URL and MONGODB_URL", () => {
    expect(problemsOf({ APPLE_APP_APPLE_ID: 'abc' })).to.deep.equal(["APPLE_APP_APPLE_ID=abc: expected a number: the app's Apple ID from App Store Connect"]);
    expect(loadConfig({ APPLE_APP_APPLE_ID: '1234567890' }).APPLE_APP_APPLE_ID).to.equal('1234567890');
    const together = 'EVENTSTORE_URL and MONGODB_URL select the external backend together; set both or neither';
    expect(problemsOf({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' })).to.deep.equal([`MONGODB_URL: ${together}`]);
    expect(problemsOf({ MONGODB_URL: 'mongodb://localhost:27017/referrals' })).to.deep.equal([`EVENTSTORE_URL: ${together}`]);
  });

  it('CORS_ORIGINS takes *, or origins alone (no path, no trailing slash)', () => {
    expect(loadConfig({}).CORS_ORIGINS).to.deep.equal([]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS).to.equal('*');
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:8081, capacitor://localhost ' }).CORS_ORIGINS).to.deep.equal([
      'https://app.example.com',
      'http://localhost:8081',
      'capacitor://localhost',
    ]);
    for (const value of [
      'https://app.example.com/',
      'https://app.example.com/path',
      'app.example.com',
      'capacitor://localhost/',
      '*,https://a.example',
      'null',
    ]) {
      expect(problemsOf({ CORS_ORIGINS: value }), value).to.have.length(1);
      expect(problemsOf({ CORS_ORIGINS: value })[0], value).to.match(/^CORS_ORIGINS=.*: expected a comma-separated list of origins/);
    }
  });

  it('are all reported at once, rules across variables included', () => {
    const problems = problemsOf({ PORT: 'eighty', LOG_LEVEL: 'loud', CLAIM_WINDOW_DAYS: '-3', ASC_KEY_ID: 'KEY123' });
    expect(problems).to.have.length(4);
    expect(problems.join('\n')).to.contain('PORT=eighty').and.to.contain('LOG_LEVEL=loud').and.to.contain('CLAIM_WINDOW_DAYS=-3');
    expect(problems.join('\n')).to.contain('ASC_ISSUER_ID, ASC_KEY_ID and ASC_PRIVATE_KEY_PATH must be set together');
    const message = (() => {
      try {
        loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud' });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).to.match(/^Invalid configuration \(2 problems; nothing was started\):\n {2}- PORT=eighty: .*\n {2}- LOG_LEVEL=loud: /);
  });

  it('in production, name each missing key list', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).to.deep.equal([
      'CLIENT_API_KEYS: is required in production (NODE_ENV=production)',
      'SECRET_API_KEYS: is required in production (NODE_ENV=production)',
    ]);
    expect(problemsOf({ NODE_ENV: 'production', CLIENT_API_KEYS: 'ck_live' })).to.deep.equal([
      'SECRET_API_KEYS: is required in production (NODE_ENV=production)',
    ]);
  });

  it('refuse a key in both key lists without showing it, and an empty HOST', () => {
    const problems = problemsOf({ CLIENT_API_KEYS: 'ck_1,shared_key', SECRET_API_KEYS: 'shared_key' });
    expect(problems).to.deep.equal(['SECRET_API_KEYS: a key is also in CLIENT_API_KEYS (not shown); a key is either a client key or a secret key']);
    expect(problems.join('\n')).to.not.contain('shared_key');
    expect(problemsOf({ HOST: '' })).to.have.length(1);
    expect(problemsOf({ HOST: '' })[0]).to.match(/^HOST="": expected an interface address/);
  });

  it('a variable spelt almost like a setting is named with the setting meant (it would be ignored silently)', () => {
    expect(
      misspeltSettings({
        CLIENT_API_KEY: 'ck',
        SECRET_API_KEY: 'sk',
        DATADIR: './d',
        TRUST_PROXIES: '1',
        PATH: '/bin',
        HOSTNAME: 'box',
        HOST: '0.0.0.0',
        npm_config_cache: 'x',
      }),
    ).to.deep.equal([
      'CLIENT_API_KEY is not a setting of this service and is ignored; did you mean CLIENT_API_KEYS?',
      'SECRET_API_KEY is not a setting of this service and is ignored; did you mean SECRET_API_KEYS?',
      'DATADIR is not a setting of this service and is ignored; did you mean DATA_DIR?',
      'TRUST_PROXIES is not a setting of this service and is ignored; did you mean TRUST_PROXY?',
    ]);
    expect(misspeltSettings(process.env), 'the test environment itself').to.deep.equal([]);
  });

  it('do not repeat a password from a connection string', () => {
    const problems = problemsOf({ EVENTSTORE_URL: 'http://admin:hunter2@localhost:2113', MONGODB_URL: 'mongodb://localhost' });
    expect(problems.join('\n')).to.contain('EVENTSTORE_URL=http://admin:***@localhost:2113').and.not.to.contain('hunter2');
  });

  it('do not repeat a secret set wrong (a Stripe API key pasted as the webhook secret): the setting is named, its value is not', () => {
    const problems = problemsOf({ STRIPE_WEBHOOK_SECRET: 'sk_live_51PastedByMistake' });
    expect(problems).to.deep.equal(['STRIPE_WEBHOOK_SECRET (its value not shown): expected a Stripe endpoint secret, whsec_…']);
  });

  it('rate limits: on by default with the SPEC §13 budgets; bad budgets and proxy settings are named', () => {
    const defaults = loadConfig({});
    expect(defaults.RATE_LIMITS).to.equal('on');
    expect(defaults.RATE_LIMIT_READS).to.deep.equal({ points: 600, seconds: 60 });
    expect(defaults.RATE_LIMIT_CLAIMS).to.deep.equal({ points: 20, seconds: 3600 });
    expect(defaults.RATE_LIMIT_COMMANDS).to.deep.equal({ points: 120, seconds: 60 });
    expect(defaults.RATE_LIMIT_SECRET).to.equal(false);
    expect(defaults.TRUST_PROXY).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).to.equal(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback,::1' }).TRUST_PROXY).to.deep.equal(['10.0.0.0/8', 'loopback', '::1']);
    expect(problemsOf({ RATE_LIMIT_READS: '600 per minute' })[0]).to.match(/^RATE_LIMIT_READS="600 per minute": expected requests per window/);
    expect(problemsOf({ RATE_LIMIT_CLAIMS: '0/60s' })[0]).to.match(/^RATE_LIMIT_CLAIMS=0\/60s: expected/);
    // A claim takes 5 points up front: a smaller claims or commands budget would refuse every claim.
    expect(problemsOf({ RATE_LIMIT_CLAIMS: '4/3600s' })[0]).to.match(/^RATE_LIMIT_CLAIMS=4\/3600s: .*at least 5 points, the room a claim needs$/);
    expect(problemsOf({ RATE_LIMIT_COMMANDS: '1/60s' })[0]).to.match(/^RATE_LIMIT_COMMANDS=1\/60s: .*at least 5 points, the room a claim needs$/);
    expect(loadConfig({ RATE_LIMIT_CLAIMS: '5/3600s' }).RATE_LIMIT_CLAIMS).to.deep.equal({ points: 5, seconds: 3600 });
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/40' })[0]).to.match(/^TRUST_PROXY=10.0.0.0\/40: expected false \(default\), a hop count/);
    // A /0 would trust every address (as `true`, refused); express's proxy-addr throws on it at start.
    for (const range of ['0.0.0.0/0', '::/0', 'loopback,0.0.0.0/0']) expect(problemsOf({ TRUST_PROXY: range }), range).to.have.length(1);
    expect(problemsOf({ RATE_LIMITS: 'maybe' })[0]).to.equal('RATE_LIMITS=maybe: expected on or off (default on)');
  });
});
