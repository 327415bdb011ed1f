import { expect } from 'chai';
import { startFailure } from '../../../src/start-failure.js';

function sqliteError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** The one line a failed start prints: the usual causes named with what to change. */
describe('start-up failures, as one line an operator can act on', () => {
  const env = { DATA_DIR: '/srv/referrals' };

  it('a full disk is named with the data directory, whether SQLite reports it as full or, for an existing store, as an I/O error', () => {
    expect(startFailure(sqliteError('SQLITE_FULL', 'database or disk is full'), env, () => false)).to.match(
      /^the disk holding the data directory \/srv\/referrals is full/,
    );
    expect(startFailure(sqliteError('SQLITE_IOERR', 'disk I/O error'), env, () => true)).to.equal(
      'the disk holding the data directory /srv/referrals is full (disk I/O error). Free some space there, then start again.',
    );
    expect(startFailure(sqliteError('SQLITE_IOERR_WRITE', 'disk I/O error'), env, () => true)).to.match(/is full/);
  });

  it('an I/O error on a disk with room is reported as it is (no guess)', () => {
    expect(startFailure(sqliteError('SQLITE_IOERR', 'disk I/O error'), env, () => false)).to.equal('disk I/O error');
  });

  it('a port in use names the port and the setting to change', () => {
    const error = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', syscall: 'listen', port: 8080, address: '0.0.0.0' });
    expect(startFailure(error, env)).to.match(/^port 8080 on 0\.0\.0\.0 is already in use \(EADDRINUSE\)\. .*PORT=/);
  });

  it('DEBUG=1 adds the stack after the line; without DEBUG there is the line alone', () => {
    const error = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', syscall: 'listen', port: 8080, address: '0.0.0.0' });
    const line = startFailure(error, env);
    expect(line).to.not.contain('\n').and.not.contain(' at ');
    expect(startFailure(error, { ...env, DEBUG: '1' })).to.equal(`${line}\n${error.stack}`);
    expect(error.stack).to.match(/\n\s+at /);
  });
});
