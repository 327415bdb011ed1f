import { type BenchRun, progress } from '../bench-run.js';
import { CLIENT_KEY, call, waitCaughtUp } from '../processes.js';

export async function benchUsers(bench: BenchRun): Promise<void> {
  progress('POST /users and GET /users/{id}…');
  const body = (index: number) => JSON.stringify({ app_user_id: `user-${index}`, is_trial: false, metadata: { source: 'bench' } });
  const sample = await call(bench.url, 'POST', '/users', { app_user_id: 'sample-user', is_trial: false, metadata: { source: 'bench' } }, CLIENT_KEY);
  const first = bench.createdUsers;
  let next = first;
  const created = await bench.run(() => ({ method: 'POST', path: '/users', body: body(next++) }));
  bench.userCreation = created.req_per_s;
  for (let index = first; index < next; index += 1) bench.claimers.push(`user-${index}`);
  bench.createdUsers = next;
  await bench.againstBare(
    { key: 'users.create', what: 'POST /users (a new user each request)', load: created, target: '≥ 0.4×' },
    'POST',
    sample.text,
    body(0),
  );

  await waitCaughtUp(bench.url);
  const read = await call(bench.url, 'GET', '/users/sample-user', undefined, CLIENT_KEY);
  const readable = Math.max(1, next - first);
  let reads = 0;
  const got = await bench.run(() => ({ method: 'GET', path: `/users/user-${first + (reads++ % readable)}` }));
  await bench.againstBare({ key: 'users.get', what: 'GET /users/{id}', load: got, target: '≥ 0.6×' }, 'GET', read.text);
}
