import nodePath from 'node:path';
import { diskIsFull } from './private-files.js';

/** Errors of the file system (or of SQLite opening its file) that the data directory causes. */
const DATA_DIR_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOENT', 'ENOSPC', 'SQLITE_CANTOPEN']);

/**
 * A start-up failure as one line an operator can act on (no stack trace): the usual causes
 * (port taken, no permission, a store out of reach, a data directory that cannot be written)
 * are named with the setting to change. Set DEBUG to get the stack as well.
 */
export function startFailure(error: unknown, env: NodeJS.ProcessEnv, isFull: (dataDir: string) => boolean = diskIsFull): string {
  if (!(error instanceof Error)) return String(error);
  const { code, syscall, port, address, path } = error as NodeJS.ErrnoException & { port?: number; address?: string };
  let line: string;
  if (syscall === 'listen' && code === 'EADDRINUSE') {
    line = `port ${port} on ${address} is already in use (EADDRINUSE). Stop the other process or set PORT to a free port (PORT=0 picks one).`;
  } else if (syscall === 'listen' && code === 'EACCES') {
    line = `no permission to listen on port ${port} (EACCES). Use a port above 1023, e.g. PORT=8080.`;
  } else if (syscall === 'listen' && code === 'EADDRNOTAVAIL') {
    line = `HOST=${address} is not an address of this machine (EADDRNOTAVAIL). Use 0.0.0.0 (every interface) or 127.0.0.1.`;
  } else if ((syscall === 'getaddrinfo' || syscall === 'listen') && (code === 'ENOTFOUND' || code === 'EAI_AGAIN')) {
    line = `HOST=${env.HOST ?? ''} is not an address this machine can listen on (${code}). Use 0.0.0.0 (every interface) or 127.0.0.1.`;
  } else if (code === 'SQLITE_FULL' || code === 'ENOSPC' || (code?.startsWith('SQLITE_IOERR') && isFull(env.DATA_DIR ?? './data'))) {
    // An existing store on a full disk fails its first write at start as an I/O error.
    line = `the disk holding the data directory ${env.DATA_DIR ?? './data'} is full (${error.message}). Free some space there, then start again.`;
  } else if (DATA_DIR_CODES.has(code ?? '') && (path === undefined || isWithin(path, env.DATA_DIR ?? './data'))) {
    line = `cannot use the data directory ${env.DATA_DIR ?? './data'}${path ? ` (${path})` : ''}: ${error.message}. Check DATA_DIR and its permissions.`;
  } else {
    line = error.message.split('\n')[0]!;
  }
  return env.DEBUG ? `${line}\n${error.stack}` : line;
}

/** Whether `file` is the data directory, inside it, or one of the directories leading to it. */
function isWithin(file: string, dataDir: string): boolean {
  const [target, dir] = [nodePath.resolve(file), nodePath.resolve(dataDir)];
  return target === dir || target.startsWith(`${dir}${nodePath.sep}`) || dir.startsWith(`${target}${nodePath.sep}`);
}
