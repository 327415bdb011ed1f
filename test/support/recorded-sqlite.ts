import fs from 'node:fs';
import { openSqlite, type SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';
import { tempDataDir } from './test-service.js';

/**
 * A fresh embedded database for each test of the calling `describe`, recording the SQL of every
 * statement prepared on it (to check their query plans); closed and removed after each test.
 */
export function recordedSqlite(): { readonly db: SqliteConnection; readonly prepared: readonly string[] } {
  const state = { db: null as unknown as SqliteConnection, prepared: [] as string[], dir: '' };
  beforeEach(() => {
    state.dir = tempDataDir();
    state.db = openSqlite(state.dir);
    state.prepared = [];
    const prepare = state.db.prepare.bind(state.db);
    state.db.prepare = ((sql: string) => {
      state.prepared.push(sql);
      return prepare(sql);
    }) as typeof state.db.prepare;
  });
  afterEach(() => {
    state.db.close();
    fs.rmSync(state.dir, { recursive: true, force: true });
  });
  return {
    get db() {
      return state.db;
    },
    get prepared() {
      return state.prepared;
    },
  };
}
