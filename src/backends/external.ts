import type { Backend } from './backend.js';

export async function openExternalBackend(_eventStoreUrl: string, _mongoUrl: string, _database: string): Promise<Backend> {
  throw new Error('The EventStoreDB + MongoDB backend is being written (issue 5)');
}
