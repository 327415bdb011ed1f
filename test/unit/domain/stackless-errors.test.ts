import { expect } from 'chai';
import { DomainError } from '../../../src/domain/domain-error.js';
import { ApiError } from '../../../src/http/errors.js';

/** Refusals are answers, not faults: they capture no stack trace (its cost was most of a refused request's). */
describe('refusals capture no stack trace', () => {
  for (const [name, make] of [
    ['DomainError', () => new DomainError('INSUFFICIENT_CREDITS', 'Not enough credits', '/amount')],
    ['ApiError', () => new ApiError('UNAUTHORIZED', 'Missing or invalid API key')],
  ] as const) {
    it(`${name}: message and name kept, no stack frame, and the process's stack trace limit left as it was`, () => {
      const limit = Error.stackTraceLimit;
      const error = make();
      expect(error).to.be.instanceOf(Error);
      expect(error.name).to.equal(name);
      expect(error.stack).to.equal(`${name}: ${error.message}`);
      expect(Error.stackTraceLimit).to.equal(limit);
      expect(new Error('a fault').stack).to.match(/\n\s+at /);
    });
  }
});
