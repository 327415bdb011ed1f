/**
 * The console's only way to the service: openapi-fetch over the types generated from the
 * service's OpenAPI document (examples/typed-client/schema.d.ts, `npm run docs:generate`). Paths,
 * parameters, bodies and responses are checked by the compiler. The secret key is read from
 * sessionStorage (session.ts) and sent as `x-api-key` on every call, never in a URL.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../examples/typed-client/schema';
import { session } from './session';

export type Schemas = components['schemas'];

type ErrorBody = { errors: ApiErrorItem[] };

/** The body of an operation's 200 answer, as the service documents it. */
type Answer<P extends keyof paths, M extends 'get' | 'post'> =
  NonNullable<paths[P][M]> extends {
    responses: { 200: { content: { 'application/json': infer Body } } };
  }
    ? Body
    : never;
export type Review = Answer<'/admin/reviews', 'get'>['data']['reviews'][number];
export type AnalyticsDay = Answer<'/admin/analytics/daily', 'get'>['data']['days'][number];
export type Revenue = AnalyticsDay['revenue'];

export interface ApiErrorItem {
  code: string;
  status: number;
  message: string;
  source: string | null;
}

/** What every call comes back as: the data, or the API's errors (`notBuilt` when the route does not exist in this service). */
export type Outcome<T> = { ok: true; data: T } | { ok: false; status: number; errors: ApiErrorItem[]; notBuilt: boolean };

const withKey: Middleware = {
  onRequest({ request }) {
    const key = session.key();
    if (key && !request.headers.has('x-api-key')) request.headers.set('x-api-key', key);
    return request;
  },
};

/** How long a call may wait for the service's answer before the console says so (a hung or overloaded service). */
const ANSWER_WAIT_SECONDS = 30;

export const api = createClient<paths>({
  baseUrl: window.location.origin,
  credentials: 'omit',
  cache: 'no-store',
  fetch: (request) => fetch(request, { signal: AbortSignal.timeout(ANSWER_WAIT_SECONDS * 1000) }),
});
api.use(withKey);

/** Called when the service answers 401 to a signed-in console (the key was revoked): sign out. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/** Every event of one stream, oldest first: GET /admin/events, paged 1,000 at a time to its end. */
export async function streamEvents(stream: string): Promise<Outcome<Schemas['EventPage']['events']>> {
  const events: Schemas['EventPage']['events'] = [];
  let after: string | undefined;
  for (;;) {
    const page = await outcome(api.GET('/admin/events', { params: { query: { stream, limit: 1000, ...(after ? { after } : {}) } } }));
    if (!page.ok) return page;
    events.push(...page.data.data.events);
    after = page.data.data.next_after ?? undefined;
    if (!after || page.data.data.events.length === 0) return { ok: true, data: events };
  }
}

export async function outcome<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Outcome<T>> {
  try {
    const { data, error, response } = await pending;
    if (response.ok && data !== undefined) return { ok: true, data };
    if (response.ok) return { ok: true, data: undefined as T };
    const errors = (error as ErrorBody | undefined)?.errors ?? [
      { code: 'HTTP_ERROR', status: response.status, message: `The service answered ${response.status}`, source: null },
    ];
    // Refused (401), or no longer a secret key (403: every call here is an admin one).
    if ((response.status === 401 || response.status === 403) && session.key()) onUnauthorized();
    const notBuilt = response.status === 404 && errors.some((e) => e.code === 'PATH_ERROR');
    return { ok: false, status: response.status, errors, notBuilt };
  } catch (cause) {
    return unanswered(cause);
  }
}

/** A call that got no answer: the service did not answer in time, or could not be reached. */
export function unanswered(cause: unknown): Outcome<never> {
  if (cause instanceof DOMException && cause.name === 'TimeoutError') {
    const message = `The service did not answer within ${ANSWER_WAIT_SECONDS} s. A change sent may still be made: reload the view to see it.`;
    return { ok: false, status: 0, errors: [{ code: 'TIMEOUT', status: 0, message, source: null }], notBuilt: false };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return {
    ok: false,
    status: 0,
    errors: [{ code: 'NETWORK', status: 0, message: `The service could not be reached: ${message}`, source: null }],
    notBuilt: false,
  };
}
