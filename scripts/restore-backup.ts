/**
 * npm run restore-backup -- --from DIR — puts an embedded backup back in DATA_DIR, with the
 * stopped service's write-ahead logs removed first (a crash leaves them; replayed into a backup
 * copied over the database, they damage it). README, "For operators".
 */
import '../src/supported-node.js';
import path from 'node:path';
import { RESTORED_FILES, RestoreRefused, restoreBackup } from '../src/adapters/sqlite/backup-restore.js';
import { defineCommand, EXIT, runScript, UsageError } from './cli/command-line.js';
import { loadScriptConfig } from './script-context.js';

const command = defineCommand({
  name: 'restore-backup',
  summary:
    `Restores the embedded store in DATA_DIR from a backup directory holding the files the README's backup takes (${RESTORED_FILES.join(', ')}; ` +
    'referrals.db at least). Each file the backup has replaces the one in DATA_DIR, whose -wal and -shm are removed with it; a file the backup lacks stays as it is. ' +
    'Checks every copy first and changes nothing if one is damaged. Stop the service first (every process on this DATA_DIR).',
  options: {
    from: { type: 'string', value: 'DIR', description: 'The backup directory (e.g. backups/2026-11-29T030000Z)' },
    keys: { type: 'string', value: 'DIR', description: 'The directory holding the data-keys.db copy, when key backups are kept apart (default: --from)' },
  },
  notes: [
    'Exit codes: 0 restored; 1 a backup file is damaged (nothing changed); 2 usage error; 66 no referrals.db in the backup (or no data-keys.db in --keys); ' +
      '75 a service is running on DATA_DIR (stop it, then restore); 78 bad configuration, or the EventStoreDB + MongoDB backend (restore those with their own tools).',
  ],
  examples: [
    'npm run restore-backup -- --from backups/2026-11-29T030000Z --keys backup-keys/2026-11-29T030000Z',
    'DATA_DIR=/srv/referrals/data npm run restore-backup -- --from /backups/last',
  ],
});

const options = command.parse(process.argv.slice(2));

runScript(command, async () => {
  if (options.from === undefined) throw new UsageError('--from is required: the backup directory');
  const config = loadScriptConfig();
  if (config.EVENTSTORE_URL !== null) {
    process.stderr.write(
      'restore-backup restores the embedded store (DATA_DIR); EVENTSTORE_URL is set: restore EventStoreDB and MongoDB with their own tools.\n',
    );
    return EXIT.CONFIG;
  }
  try {
    const restored = restoreBackup({ from: options.from, ...(options.keys === undefined ? {} : { keys: options.keys }) }, config.DATA_DIR);
    process.stdout.write(
      `Restored ${restored.join(', ')} from ${path.resolve(options.from)} into ${path.resolve(config.DATA_DIR)}.\n` +
        'Start the service; repeat the erasures made since the backup (README, Personal data), and check with npm run audit-credits once it has caught up.\n',
    );
    return EXIT.OK;
  } catch (error) {
    if (!(error instanceof RestoreRefused)) throw error;
    process.stderr.write(`restore-backup: ${error.message}; nothing was changed.\n`);
    return { missing: EXIT.NO_INPUT, running: EXIT.TEMPORARY, damaged: EXIT.FAILURE }[error.reason];
  }
});
