import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { toApiError } from '../../../src/http/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * In a process of its own (this one has long loaded them): whether iconv-lite's tables, which
 * body-parser looks a body's charset up in, are loaded before and after the app is made.
 */
const PROBE = `
import { createRequire } from 'node:module';
import { startTestService } from './test/support/test-service.ts';
const fromExpress = createRequire(createRequire(process.cwd() + '/package.json').resolve('express'));
const iconv = createRequire(fromExpress.resolve('body-parser'))('iconv-lite');
const before = iconv.encodings !== null;
const svc = await startTestService();
const after = iconv.encodings !== null;
await svc.stop();
console.log(JSON.stringify({ before, after }));
`;

describe('body reading under a shortage of file descriptors', () => {
  it('loads the charset tables when the app is made, not at the first body (a process out of descriptors answered UTF-8 bodies 415)', async function () {
    this.timeout(60_000);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], { cwd: ROOT, encoding: 'utf8' });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).to.deep.equal({ before: false, after: true });
  });
});

describe("body reader failures that are the process's own trouble", () => {
  it('a charset failure from the reader after the charset was checked is 503 (retry), not 415 (the client would not retry)', () => {
    const error = Object.assign(new Error('unsupported charset "UTF-8"'), { type: 'charset.unsupported', status: 415, expose: true, charset: 'utf-8' });
    expect(toApiError(error)?.toJSON()).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    // Any other charset is the client's: 415.
    expect(toApiError({ ...error, charset: 'latin1' })?.toJSON()).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});
