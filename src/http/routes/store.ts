import type { DependencyContainer } from 'tsyringe';
import { OfferCodeLookup } from '../../application/offer-codes/offer-code-lookup.js';
import { StoreOfferCodeCatalog } from '../../application/offer-codes/store-offer-code-catalog.js';
import { UpsertStoreOfferCodeHandler } from '../../application/offer-codes/upsert-store-offer-code.js';
import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import { AppStoreConnectError } from '../../ports/app-store.js';
import { commandContext } from '../context.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
import { offerCodeId, type StoreOfferCodeBody, storeOfferCodeBody, storeOfferCodeResponse, storeOfferCodesResponse } from '../schemas/store.js';
import { z } from '../schemas/zod-openapi.js';

const PARAM = 'offer_code_id';
const offerCodePath = z.object({ [PARAM]: offerCodeId });

/** SPEC §8: rejected credentials → 401, any other upstream failure → 424. */
function appStoreApiError(error: AppStoreConnectError): ApiError {
  return error.failure === 'unauthorized'
    ? new ApiError('APP_STORE_CONNECT.UNAUTHORIZED', 'App Store Connect rejected the configured credentials')
    : new ApiError('APP_STORE_CONNECT.REQUEST_FAILED', error.message);
}

function notFound(id: string): ApiError {
  return new ApiError('NOT_FOUND.OFFER_CODE', `No offer code ${id}`, `path:/${PARAM}`);
}

/** Only the seed's keys, whatever else a stored document carries. */
function view(entry: StoreOfferCodeEntry): StoreOfferCodeEntry {
  return { offer_code: entry.offer_code, subscription: entry.subscription };
}

/** GET /store/offer-codes/{offer_code_id}: from the catalog, else App Store Connect. */
export function storeRoutes(container: DependencyContainer): AnyRoute[] {
  const lookup = container.resolve(OfferCodeLookup);
  return [
    route({
      method: 'get',
      path: `/store/offer-codes/{${PARAM}}`,
      operationId: 'getStoreOfferCode',
      summary: 'Get a store offer code with its subscription and prices (admin catalog, else App Store Connect)',
      tags: ['store'],
      params: offerCodePath,
      responses: { 200: { description: 'The offer code', schema: storeOfferCodeResponse } },
      errors: ['NOT_FOUND.OFFER_CODE', 'APP_STORE_CONNECT.UNAUTHORIZED', 'APP_STORE_CONNECT.REQUEST_FAILED'],
      async handle({ params }) {
        const id = params[PARAM] as string;
        let entry: StoreOfferCodeEntry | null;
        try {
          entry = await lookup.find(id);
        } catch (error) {
          throw error instanceof AppStoreConnectError ? appStoreApiError(error) : error;
        }
        if (!entry) throw notFound(id);
        return { status: 200, body: { data: view(entry) } };
      },
    }),
  ];
}

function toEntry(id: string, body: StoreOfferCodeBody): StoreOfferCodeEntry {
  const { id: bodyId, ...offerCode } = body.offer_code;
  if (bodyId !== undefined && bodyId !== id) {
    throw new ApiError('BAD_REQUEST', `offer_code.id: must be the id in the path (${id}) or left out`, '/offer_code/id');
  }
  return { offer_code: { id, ...offerCode }, subscription: body.subscription };
}

/** The catalog (SPEC §7.6): secret key only. */
export function adminStoreRoutes(container: DependencyContainer): AnyRoute[] {
  const catalog = container.resolve(StoreOfferCodeCatalog);
  const upsert = container.resolve(UpsertStoreOfferCodeHandler);
  const itemPath = `/admin/store/offer-codes/{${PARAM}}`;
  return [
    route({
      method: 'put',
      path: itemPath,
      operationId: 'putCatalogOfferCode',
      description:
        'Needs a secret key. Besides the schema: `offer_code.id`, when given, must be the id in the path, and a territory may be priced only once per list (400 `BAD_REQUEST` otherwise).',
      summary: 'Create or update a catalog offer code (201 created, 200 updated)',
      tags: ['store'],
      params: offerCodePath,
      body: storeOfferCodeBody,
      responses: { 201: { description: 'Created', schema: storeOfferCodeResponse }, 200: { description: 'Updated', schema: storeOfferCodeResponse } },
      errors: [],
      auth: 'secret',
      async handle({ params, body, res }) {
        const entry = toEntry(params[PARAM] as string, body);
        const { created, entry: stored } = await upsert.handle(entry, commandContext(res));
        return { status: created ? 201 : 200, body: { data: view(stored) } };
      },
    }),
    route({
      method: 'get',
      path: itemPath,
      operationId: 'getCatalogOfferCode',
      summary: 'Get a catalog offer code',
      tags: ['store'],
      params: offerCodePath,
      responses: { 200: { description: 'The catalog entry', schema: storeOfferCodeResponse } },
      errors: ['NOT_FOUND.OFFER_CODE'],
      auth: 'secret',
      async handle({ params }) {
        const id = params[PARAM] as string;
        const entry = await catalog.get(id);
        if (!entry) throw notFound(id);
        return { status: 200, body: { data: view(entry) } };
      },
    }),
    route({
      method: 'get',
      path: '/admin/store/offer-codes',
      operationId: 'listCatalogOfferCodes',
      summary: 'List the catalog offer codes',
      tags: ['store'],
      responses: { 200: { description: 'Every catalog entry, by id', schema: storeOfferCodesResponse } },
      errors: [],
      auth: 'secret',
      async handle() {
        return { status: 200, body: { data: { offer_codes: (await catalog.list()).map(view) } } };
      },
    }),
  ];
}
