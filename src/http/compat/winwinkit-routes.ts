import type { DependencyContainer } from 'tsyringe';
import type { ZodTypeAny } from 'zod';
import { CodeResolver } from '../../application/queries/code-resolver.js';
import { ApiError } from '../errors.js';
import type { ErrorCode } from '../error-codes.js';
import type { OperationDoc } from '../openapi.js';
import type { AnyRoute, Reply } from '../route.js';
import { wireClaimResponse, wireCodeResponse, wireGetUserResponse, wireUpsertUserBody, wireUserResponse, wireWithdrawResponse } from './winwinkit-schemas.js';
import { codeNotFound } from '../../domain/domain-error.js';
import { type CodeOwner, codeToWire, dataToWire, upsertUserFromWire, WINWINKIT_MOUNT } from './winwinkit-wire.js';

const WINWINKIT_TAG = 'compat: winwinkit';

type Json = Record<string, unknown>;
type Input = Parameters<AnyRoute['handle']>[0];

/** How one native operation appears under the mount. */
interface OnMount {
  /** The path under the mount, when it is not the native path. */
  path?: string;
  /** The request body in wire names, and how it becomes the native body. */
  body?: ZodTypeAny;
  fromWire?: (body: Json) => Json;
  /** The wire schema of every success body the operation declares. */
  schema?: ZodTypeAny;
  /** The native answer's body in wire names. */
  toWire?: (body: Json, input: Input) => Promise<Json>;
  /** Native errors this surface answers differently. */
  mapError?: (error: unknown) => unknown;
  errors?: (native: ErrorCode[]) => ErrorCode[];
}

const dataToWireBody = async (body: Json) => ({ ...body, data: dataToWire(body.data as Json) });

/**
 * SPEC §15: the operations served under `/compat/winwinkit`, each built from the native route
 * (same handler, key, rate limits and errors) with the wire's names at the edge. An operation
 * not listed here is not served under the mount.
 */
function onMount(container: DependencyContainer): Record<string, OnMount> {
  const resolver = container.resolve(CodeResolver);
  return {
    upsertUser: { body: wireUpsertUserBody, fromWire: upsertUserFromWire, schema: wireUserResponse, toWire: dataToWireBody },
    getUser: { schema: wireGetUserResponse, toWire: dataToWireBody },
    claimCode: { schema: wireClaimResponse, toWire: dataToWireBody },
    withdrawCredits: { schema: wireWithdrawResponse, toWire: dataToWireBody },
    grantReward: { schema: wireClaimResponse, toWire: dataToWireBody },
    getCode: {
      schema: wireCodeResponse,
      async toWire(body, input) {
        const data = body.data as Json;
        // The entity by type needs the code's owner, which the native answer does not show.
        const resolved = await resolver.resolve(String(input.params.code));
        if (!resolved) throw codeNotFound();
        const owner: CodeOwner = {
          type: resolved.type,
          app_user_id: resolved.owner_app_user_id,
          limit: resolved.limit,
          name: resolved.entity.name,
          logo_url: resolved.entity.logo_url,
          platforms: resolved.entity.platforms,
        };
        return { data: codeToWire(data, owner) };
      },
    },
    getStoreOfferCode: {
      path: '/app-store/offer-codes/{offer_code_id}',
      // Older Swift SDKs stop on any 401: here 401 means only a bad API key.
      mapError: (error) =>
        error instanceof ApiError && error.code === 'APP_STORE_CONNECT.UNAUTHORIZED'
          ? new ApiError('APP_STORE_CONNECT.REQUEST_FAILED', 'App Store Connect rejected the configured credentials')
          : error,
      errors: (native) => native.filter((code) => code !== 'APP_STORE_CONNECT.UNAUTHORIZED'),
    },
    linkAppStoreTransaction: {},
    linkGooglePlayTransaction: {},
  };
}

const capitalized = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

function mounted(route: AnyRoute, spec: OnMount): AnyRoute {
  return {
    ...route,
    path: `${WINWINKIT_MOUNT}${spec.path ?? route.path}`,
    operationId: `winwinkit${capitalized(route.operationId)}`,
    summary: `${route.summary} — WinWinKit wire`,
    tags: [WINWINKIT_TAG],
    body: spec.body ?? route.body,
    responses: Object.fromEntries(
      Object.entries(route.responses as OperationDoc['responses']).map(([status, response]) => [
        status,
        response.schema ? { ...response, schema: spec.schema ?? response.schema } : response,
      ]),
    ),
    errors: spec.errors ? spec.errors(route.errors) : route.errors,
    async handle(input) {
      const body = spec.fromWire ? spec.fromWire(input.body as Json) : input.body;
      let reply: Reply | { raw: true };
      try {
        reply = await route.handle({ ...input, body } as Input);
      } catch (error) {
        throw spec.mapError ? spec.mapError(error) : error;
      }
      if ('raw' in reply || reply.body === undefined || !spec.toWire) return reply;
      return { ...reply, body: await spec.toWire(reply.body as Json, input) };
    },
  };
}

/** The mount's routes, built from the native routes (pass the same route objects the native API mounts). */
export function winwinkitRoutes(container: DependencyContainer, native: AnyRoute[]): AnyRoute[] {
  const specs = onMount(container);
  const routes = native.filter((route) => Object.hasOwn(specs, route.operationId)).map((route) => mounted(route, specs[route.operationId]!));
  const missing = Object.keys(specs).filter((operationId) => !native.some((route) => route.operationId === operationId));
  if (missing.length > 0) throw new Error(`The WinWinKit mount names operations the native API does not have: ${missing.join(', ')}`);
  return routes;
}
