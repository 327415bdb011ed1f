import { BODY_LIMIT, BULK_BODY_LIMIT, sizeText, WEBHOOK_BODY_LIMIT } from './body-limits.js';
/**
 * Every error code the service answers with: its HTTP status and what it means. The one source
 * for the status of a domain error, for the `code` enums of /openapi.json and for
 * docs/errors.md (`npm run docs:generate`); a test fails when the code base can produce a code
 * that is missing here.
 */
interface ErrorCodeEntry {
  status: number;
  meaning: string;
  /** A message and source the service really answers with (the document's examples use it). */
  example?: { message: string; source: string | null };
}

export const ERROR_CODES = {
  BODY_INVALID: {
    status: 400,
    meaning: 'The body is not JSON, not a JSON object, or could not be read completely.',
    example: { message: 'The body must be a JSON object', source: null },
  },
  BAD_REQUEST: {
    status: 400,
    meaning:
      'A field, path parameter or query parameter is missing, has the wrong type or is out of range; `source` names it. `source` is null when the request itself could not be read: request line and headers over 64 KiB, HTTP that cannot be parsed (a malformed request line), or a path that is not validly percent-encoded.',
  },
  UNAUTHORIZED: {
    status: 401,
    meaning: 'The `x-api-key` header is missing, or the key is unknown or revoked.',
    example: { message: 'The x-api-key header is required', source: 'header:x-api-key' },
  },
  'APP_STORE_CONNECT.UNAUTHORIZED': { status: 401, meaning: 'App Store Connect rejected the configured credentials.' },
  'WEBHOOK.UNAUTHORIZED': { status: 401, meaning: "An inbound notification's signature or token is missing or wrong, or it is for another app." },
  'WEBHOOK.NOT_CONFIGURED': { status: 404, meaning: 'A notification for a provider that is not configured.' },
  FORBIDDEN: {
    status: 403,
    meaning: 'A client key was used on an operation that needs a secret key.',
    example: { message: 'This operation needs a secret key', source: 'header:x-api-key' },
  },
  'NOT_FOUND.USER': { status: 404, meaning: 'No user has this `app_user_id`.', example: { message: 'User not found', source: 'path:/app_user_id' } },
  'NOT_FOUND.CODE': {
    status: 404,
    meaning: 'No referral, promo or affiliate code matches.',
    example: { message: 'No referral, promo or affiliate code matches', source: 'path:/code' },
  },
  'NOT_FOUND.OFFER_CODE': {
    status: 404,
    meaning: 'The store offer code is neither in the catalog nor (when configured) in App Store Connect.',
    example: { message: 'No offer code summer-offer', source: 'path:/offer_code_id' },
  },
  'NOT_FOUND.REWARD': { status: 404, meaning: 'No reward has this key.', example: { message: 'No reward coins', source: 'path:/key' } },
  'NOT_FOUND.PROGRAM': { status: 404, meaning: 'No referral program has this id.' },
  'NOT_FOUND.PROMO_CODE': { status: 404, meaning: 'No promo code is defined with this code.' },
  'NOT_FOUND.AFFILIATE': { status: 404, meaning: 'No affiliate has this id.' },
  'NOT_FOUND.WEBHOOK': { status: 404, meaning: 'No webhook endpoint has this id.', example: { message: 'No webhook endpoint backend', source: 'path:/id' } },
  'NOT_FOUND.DELIVERY': {
    status: 404,
    meaning: 'The webhook endpoint has no delivery with this `message_id`.',
    example: { message: 'No delivery 0f8e4c3a-1b2c-4d5e-8f90-123456789abc for webhook endpoint backend', source: 'path:/message_id' },
  },
  'NOT_FOUND.RULE': { status: 404, meaning: 'No fraud rule has this id.' },
  'NOT_FOUND.REVIEW': { status: 404, meaning: 'No review has this id.', example: { message: 'No such review', source: 'path:/id' } },
  PATH_ERROR: { status: 404, meaning: 'No such path; also a path whose parameter is empty (`/users//claim-code`).' },
  METHOD_NOT_ALLOWED: { status: 405, meaning: 'The path exists but not with this method; the `allow` header lists the methods it has.' },
  REQUEST_TIMEOUT: {
    status: 408,
    meaning:
      'The request did not arrive whole in time: its head within 60 s, or head and body within 300 s (Node checks every 30 s). The connection is closed.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    meaning: `The body is larger than ${sizeText(BODY_LIMIT)} (${sizeText(WEBHOOK_BODY_LIMIT)} for the revenue notifications under /webhooks/, ${sizeText(BULK_BODY_LIMIT)} for a pool's codes and a fraud rule).`,
    example: { message: `The body is larger than ${sizeText(BODY_LIMIT)}`, source: null },
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning: 'The body is not sent as JSON (`application/json`, or a JSON-based `application/*+json` type), or its encoding or charset is not supported.',
    example: { message: 'Send the body as application/json', source: 'header:content-type' },
  },
  'USER.FIRST_SEEN_AT_IN_FUTURE': {
    status: 422,
    meaning: '`first_seen_at` is more than 5 minutes in the future.',
    example: { message: 'first_seen_at is more than 5 minutes in the future', source: '/first_seen_at' },
  },
  'CLAIM.CODE_NOT_FOUND': {
    status: 422,
    meaning: 'The claimed code is not a referral, promo or affiliate code.',
    example: { message: 'Code "ZZZZZZ" does not exist', source: '/code' },
  },
  'CLAIM.ALREADY_CLAIMED': {
    status: 422,
    meaning: 'The user has already claimed a code (a user claims at most one code, ever).',
    example: { message: 'The user has already claimed a code', source: '/code' },
  },
  'CLAIM.OWN_CODE': {
    status: 422,
    meaning: "The code is the user's own referral code, or a code of an affiliate linked to the user.",
    example: { message: 'A user cannot claim its own code', source: '/code' },
  },
  'CLAIM.NOT_ELIGIBLE': {
    status: 422,
    meaning: "The user's claim window (`CLAIM_WINDOW_DAYS` from `first_seen_at`) has closed.",
    example: { message: 'The claim window of this user has closed', source: '/code' },
  },
  'CLAIM.CODE_INACTIVE': {
    status: 422,
    meaning: 'The code cannot be claimed now: a referrer without a program, an inactive promo code, or an affiliate that is not approved.',
    example: { message: 'Code SUMMER24 is not active', source: '/code' },
  },
  'CLAIM.LIMIT_REACHED': {
    status: 422,
    meaning: "The code's claim limit (program or promo `limit`) is reached.",
    example: { message: 'This code has reached its claim limit', source: '/code' },
  },
  'CLAIM.REJECTED_BY_RULE': {
    status: 422,
    meaning: 'A fraud rule with action `reject` refused the claim; `source` names the rule (`rule:{id}`).',
    example: { message: 'The claim was refused by fraud rule fast-claims (referrer_claims_per_hour)', source: 'rule:fast-claims' },
  },
  'RULE.IMMUTABLE_FIELD': {
    status: 422,
    meaning: 'The `kind` of a fraud rule cannot change (decisions in the log name the rule by id).',
    example: { message: 'The kind of rule fast-claims is referrer_claims_per_hour; create a new rule for another kind', source: '/kind' },
  },
  'REVIEW.ALREADY_DECIDED': {
    status: 422,
    meaning: 'The review was already decided the other way (approve after reject, or reject after approve); a decision is final.',
    example: { message: 'The review was already approved; a decision is final', source: 'path:/id' },
  },
  'CLAIM.SLOT_LOST': {
    status: 422,
    meaning:
      "The claim's slot on the code was released while the claim was being recorded, on each of its attempts: by a claim of the same user and code running at the same time in another process, or by the claim repair, for a claim held up over 60 s. Retry the claim.",
    example: { message: 'The claim slot was released; retry with a new claim', source: '/code' },
  },
  'WITHDRAW.REWARD_NOT_FOUND': {
    status: 422,
    meaning: '`key` is not a credit reward.',
    example: { message: 'No credit reward has the key coins', source: '/key' },
  },
  'WITHDRAW.OPERATION_ID_REUSED': {
    status: 422,
    meaning: 'This `operation_id` was already used by a withdrawal of this user with another key or amount (grants keep their own ids).',
    example: { message: 'operation_id was already used for a different operation', source: '/operation_id' },
  },
  'GRANT.REWARD_NOT_FOUND': { status: 422, meaning: 'No reward has this `key`.', example: { message: 'No reward has the key coins', source: '/key' } },
  'GRANT.OPERATION_ID_REUSED': {
    status: 422,
    meaning: 'This `operation_id` was already used by a grant of this user of another reward (withdrawals keep their own ids).',
    example: { message: 'operation_id was already used for a different operation', source: '/operation_id' },
  },
  'REWARD.IMMUTABLE_FIELD': {
    status: 422,
    meaning: '`kind`, `credits` and `offer_code_id` of a reward cannot change.',
    example: { message: 'credits of a reward cannot change (was 100)', source: '/credits' },
  },
  'REWARD.OFFER_CODE_UNKNOWN': {
    status: 422,
    meaning:
      '`offer_code_id` is neither in the store offer-code catalog nor in App Store Connect (checked only when one of them is configured; when App Store Connect cannot answer, the id is accepted and the failure logged).',
    example: { message: 'No store offer code summer-offer in the catalog or App Store Connect', source: '/offer_code_id' },
  },
  'REWARD.NOT_POOLED': {
    status: 422,
    meaning: 'Only offer_code and store_promo_code rewards have a code pool.',
    example: { message: 'Rewards of kind credit have no code pool', source: 'path:/key' },
  },
  'PROGRAM.REWARD_NOT_FOUND': {
    status: 422,
    meaning: 'A program entry names a reward that does not exist.',
    example: { message: 'No reward has the key coins', source: '/rewards/sender/0/reward_key' },
  },
  'PROGRAM.INVALID_ACTIVATION': {
    status: 422,
    meaning:
      'A program entry has an activation its reward cannot have: `amount` < 1 or `limit` < 0; a sender entry without `amount`, or a credit/offer_code/store_promo_code sender entry without `limit`; a receiver offer_code, store_promo_code or partner_offering entry not on `claim`.',
  },
  'PROGRAM.DISTRIBUTION_EXCEEDED': {
    status: 422,
    meaning: 'The `distribution_percentage` of all programs would sum to more than 100.',
    example: { message: 'Programs would cover 120% of users; the sum must be at most 100', source: '/distribution_percentage' },
  },
  'CODE.TAKEN': {
    status: 422,
    meaning: 'The code is already used by a user (referral code), a promo code or another affiliate.',
  },
  'CODE.REWARD_NOT_FOUND': {
    status: 422,
    meaning: 'A promo-code entry names a reward that does not exist.',
    example: { message: 'No reward has the key coins', source: '/rewards/0/reward_key' },
  },
  'CODE.INVALID_ACTIVATION': {
    status: 422,
    meaning: 'A promo-code entry has `amount` < 1 or `limit` < 0, or is an offer_code, store_promo_code or partner_offering reward not on `claim`.',
  },
  'AFFILIATE.REWARD_NOT_FOUND': {
    status: 422,
    meaning: 'An affiliate entry names a reward that does not exist.',
    example: { message: 'No reward has the key coins', source: '/rewards/0/reward_key' },
  },
  'AFFILIATE.INVALID_ACTIVATION': {
    status: 422,
    meaning: 'An affiliate entry has `amount` < 1 or `limit` < 0, or is an offer_code, store_promo_code or partner_offering reward not on `claim`.',
  },
  'AFFILIATE.BANNED': {
    status: 422,
    meaning: 'A banned affiliate is final and cannot be changed.',
    example: { message: 'A banned affiliate cannot be changed', source: '/status' },
  },
  'WEBHOOK.URL_NOT_ALLOWED': {
    status: 422,
    meaning:
      'The webhook URL is not `https` (`http` needs WEBHOOKS_ALLOW_HTTP=true), carries credentials, or its host does not resolve, or is or resolves to a loopback, private, link-local or unspecified address (allowed with WEBHOOKS_ALLOW_PRIVATE=true). `source` is `/url` when the request sent it, null for a ping to a stored URL the settings no longer allow.',
    example: { message: 'A webhook URL must use https (http needs WEBHOOKS_ALLOW_HTTP=true)', source: '/url' },
  },
  'APP_STORE_CONNECT.REQUEST_FAILED': { status: 424, meaning: 'App Store Connect failed, timed out or answered with something unexpected.' },
  RATE_LIMITED: {
    status: 429,
    meaning:
      'Over a rate-limit budget (reads, claims or other commands, per key + IP and per user). `Retry-After` gives the seconds to wait; `RateLimit` / `RateLimit-Policy` name the budgets.',
    example: { message: 'Too many requests; retry after the seconds in Retry-After (RateLimit names the budget)', source: null },
  },
  INTERNAL_SERVER_ERROR: { status: 500, meaning: 'A bug. Nothing was written; the log has the details under the request id the message gives.' },
  SERVICE_UNAVAILABLE: {
    status: 503,
    meaning:
      'A backing store is unreachable, or the read models are catching up with the log or need `npm run replay` after an upgrade, or a write is recorded that they could not show within 5 s (the message says which); retry later, a grant or withdrawal only with its `operation_id`. Acknowledged writes are never lost.',
    example: { message: 'A backing store is unavailable; retry later', source: null },
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The status a code is answered with (unknown ones: NOT_FOUND.* 404, other business rules 422). */
export function statusOf(code: string): number {
  if (isErrorCode(code)) return ERROR_CODES[code].status;
  return code.startsWith('NOT_FOUND.') ? 404 : 422;
}
