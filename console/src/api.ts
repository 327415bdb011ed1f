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

type Json<T> = { content: { 'application/json': T } };
type ErrorBody = { errors: ApiErrorItem[] };
type ErrorResponses = { 400: Json<ErrorBody>; 401: Json<ErrorBody>; 403: Json<ErrorBody>; 404: Json<ErrorBody>; 422: Json<ErrorBody> };
type Get<Query, Body> = {
  parameters: { query: Query; header?: never; path?: never; cookie?: never };
  get: { parameters: { query: Query; header?: never; path?: never; cookie?: never }; requestBody?: never; responses: { 200: Json<Body> } & ErrorResponses };
};
type Post<PathParams, Body> = {
  parameters: { query?: never; header?: never; path: PathParams; cookie?: never };
  post: {
    parameters: { query?: never; header?: never; path: PathParams; cookie?: never };
    requestBody?: never;
    responses: { 200: Json<Body> } & ErrorResponses;
  };
};

/** SPEC §14 (analytics) and §13 (reviews): how those operations are declared until the service documents them. */
export type Revenue = { currency: string; gross_minor: number; refunded_minor: number }[];
export type AnalyticsDay = { date: string; claims: number; conversions: number; churns: number; refunds: number; revenue: Revenue };
type TopCode = {
  code: string;
  kind: 'referral' | 'promo' | 'affiliate';
  program_id: string | null;
  app_user_id: string | null;
  claims: number;
  conversions: number;
  revenue: Revenue;
};
export type Review = {
  id: string;
  rule_id: string;
  status: 'pending' | 'approved' | 'rejected';
  referrer_app_user_id: string | null;
  claimer_app_user_id: string;
  code: string;
  created_at: string;
  decided_at: string | null;
};
type Range = { from: string; to: string; program_id?: string };
interface SpecPaths {
  '/admin/analytics/daily': Get<Range & { code?: string }, { data: { from: string; to: string; days: AnalyticsDay[] } }>;
  '/admin/analytics/top-codes': Get<Range & { by?: 'claims' | 'conversions' | 'revenue'; limit?: number }, { data: { codes: TopCode[] } }>;
  '/admin/reviews': Get<
    { status?: 'pending' | 'approved' | 'rejected'; after?: string; limit?: number },
    { data: { reviews: Review[]; next_after?: string | null } }
  >;
  '/admin/reviews/{id}/approve': Post<{ id: string }, { data: { review: Review } }>;
  '/admin/reviews/{id}/reject': Post<{ id: string }, { data: { review: Review } }>;
}

/** The generated paths, plus the SPEC's for those the document does not have yet (the generated ones win once they exist). */
export type ConsolePaths = paths & Omit<SpecPaths, keyof paths>;

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

export const api = createClient<ConsolePaths>({ baseUrl: window.location.origin, credentials: 'omit', cache: 'no-store' });
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
    if (response.status === 401 && session.key()) onUnauthorized();
    const notBuilt = response.status === 404 && errors.some((e) => e.code === 'PATH_ERROR');
    return { ok: false, status: response.status, errors, notBuilt };
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    return {
      ok: false,
      status: 0,
      errors: [{ code: 'NETWORK', status: 0, message: `The service could not be reached: ${message}`, source: null }],
      notBuilt: false,
    };
  }
}
