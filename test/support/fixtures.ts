import type { TestService } from './test-service.js';

type Json = Record<string, unknown>;

export const never = { variant: 'never' } as const;
export const days = (duration: number) => ({ variant: 'interval', duration, period: 'days' }) as const;

async function expectOk(response: { status: number; body: any }, what: string) {
  if (response.status >= 300) throw new Error(`${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export async function putReward(svc: TestService, key: string, body: Json) {
  return expectOk(await svc.admin('PUT', `/admin/rewards/${key}`, body), `reward ${key}`);
}

export async function putProgram(svc: TestService, id: string, body: Partial<Json> & { rewards?: { sender?: Json[]; receiver?: Json[] } }) {
  return expectOk(
    await svc.admin('PUT', `/admin/programs/${id}`, {
      name: id,
      distribution_percentage: 100,
      limit: 0,
      ...body,
      rewards: { sender: [], receiver: [], ...body.rewards },
    }),
    `program ${id}`,
  );
}

export async function putPromo(svc: TestService, code: string, body: Partial<Json> = {}) {
  return expectOk(await svc.admin('PUT', `/admin/promo-codes/${code}`, { is_active: true, limit: 0, rewards: [], ...body }), `promo ${code}`);
}

export async function putAffiliate(svc: TestService, id: string, body: Partial<Json> = {}) {
  return expectOk(
    await svc.admin('PUT', `/admin/affiliates/${id}`, { status: 'approved', name: id, platforms: [], codes: [], rewards: [], ...body }),
    `affiliate ${id}`,
  );
}

export async function createUser(svc: TestService, appUserId: string, body: Json = {}) {
  return (await expectOk(await svc.call('POST', '/users', { app_user_id: appUserId, ...body }), `user ${appUserId}`)).data.user;
}

export async function getUser(svc: TestService, appUserId: string) {
  return (await expectOk(await svc.call('GET', `/users/${encodeURIComponent(appUserId)}`), `get ${appUserId}`)).data.user;
}

/** Polls `check` until it stops throwing (eventually-consistent reactions); no timing asserted. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

export async function events(svc: TestService, query: string) {
  const response = await svc.admin('GET', `/admin/events?limit=1000&${query}`);
  return (await expectOk(response, 'events')).data.events as {
    type: string;
    data: any;
    stream: string;
    id: string;
    position: string;
    recorded_at: string;
    metadata: any;
  }[];
}
