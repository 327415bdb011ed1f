/**
 * How WinWinKit's client SDKs decode this service's answers, written down by hand as test data
 * (no SDK code is copied): read from the model sources of the public repositories
 *   WinWinKit/winwinkit-swift   Sources/WinWinKit/Generated/OpenAPI/Public/Models/*.swift (Codable),
 *   WinWinKit/winwinkit-kotlin  src/main/kotlin/com/winwinkit/client/models/*.kt (Moshi + KotlinJsonAdapterFactory),
 *   WinWinKit/winwinkit-dart    lib/model/*.dart (built_value),
 *   WinWinKit/winwinkit-js      src/types/schema.ts (TypeScript types only: no decoding at run time).
 *
 * What the sources say, for every SDK:
 * - a non-optional property (Swift `T`, Kotlin `T`, Dart `T get`) must be present and not null;
 *   an optional one (`T?`) may be null or absent;
 * - unknown keys are ignored (Codable, Moshi's Kotlin adapter and built_value's generated
 *   serializers skip them), so extra keys never fail;
 * - enums are closed: Swift `enum …: String, Codable` without an unknown case, Kotlin
 *   `enum class` under Moshi (an unknown name throws), Dart `EnumClass` without a fallback;
 * - integers: Swift `Int` (64-bit), Kotlin `kotlin.Int` (32-bit), Dart `int` (a JSON number with
 *   a fraction decodes as a double and fails the cast);
 * - date-times: Swift's OpenISO8601DateFormatter takes `yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ`, then
 *   without the fraction, then a bare date; Kotlin parses with ISO_OFFSET_DATE_TIME (an offset is
 *   required); Dart's Iso8601DateTimeSerializer uses DateTime.parse.
 * - deactivation: Swift and Dart decode `oneOf` never | interval. Kotlin's generated wrapper
 *   (`ReferralProgram…RewardDeactivation`) is the interval shape only — `variant` enum
 *   [interval], `duration` and `period` required — so it cannot decode `{"variant":"never"}`:
 *   the SDK's own bug (SPEC §15), recorded here as a Kotlin rule.
 * Receiver activations of offer_code, googleplay_promo_code and revenuecat_offering take only
 * `claim`; the other receiver kinds `claim` | `conversion`. Sender activations carry `amount`,
 * plus `limit` for credit, offer_code and googleplay_promo_code. Expired entries have a non-null
 * `expired_at` except the two RevenueCat kinds.
 */

export type Sdk = 'swift' | 'kotlin' | 'dart';
export const SDKS: Sdk[] = ['swift', 'kotlin', 'dart'];

export type Rule =
  | { t: 'string' | 'int' | 'bool' | 'date' | 'any'; nullable?: boolean }
  | { t: 'enum'; values: readonly string[]; nullable?: boolean }
  | { t: 'array'; of: Rule; nullable?: boolean }
  | { t: 'model'; name: string; nullable?: boolean }
  | { t: 'oneOf'; of: Rule[]; nullable?: boolean }
  /** One shape per value of a discriminating key (the errors of the shape it names). */
  | { t: 'byKey'; key: string; shapes: Record<string, Rule>; nullable?: boolean };

type Fields = Record<string, Rule>;

const str: Rule = { t: 'string' };
const int: Rule = { t: 'int' };
const bool: Rule = { t: 'bool' };
const date: Rule = { t: 'date' };
const any: Rule = { t: 'any' };
const opt = (rule: Rule): Rule => ({ ...rule, nullable: true });
const en = (...values: string[]): Rule => ({ t: 'enum', values });
const arr = (of: Rule): Rule => ({ t: 'array', of });
const m = (name: string): Rule => ({ t: 'model', name });

/** The six kind keys of the SDKs, and the prefix of their model names. */
export const SDK_KINDS = {
  basic: 'Basic',
  credit: 'Credit',
  offer_code: 'OfferCode',
  googleplay_promo_code: 'GooglePlayPromoCode',
  revenuecat_entitlement: 'RevenueCatEntitlement',
  revenuecat_offering: 'RevenueCatOffering',
} as const;
type SdkKind = keyof typeof SDK_KINDS;
const KINDS = Object.keys(SDK_KINDS) as SdkKind[];

const rewardCommon: Fields = { key: str, name: str, description: opt(str), metadata: opt(any), created_at: date, updated_at: opt(date) };
const rewardExtra: Record<SdkKind, Fields> = {
  basic: {},
  credit: { credits: int },
  offer_code: { offer_code_id: str, offer_code_ref_name: str, subscription_product_id: str },
  googleplay_promo_code: {},
  revenuecat_entitlement: { entitlement_id: str, entitlement_key: str },
  revenuecat_offering: { offering_id: str, offering_key: str },
};
const claimOnlyReceivers: SdkKind[] = ['offer_code', 'googleplay_promo_code', 'revenuecat_offering'];
const limitedSenders: SdkKind[] = ['credit', 'offer_code', 'googleplay_promo_code'];
const nullableExpiredAt: SdkKind[] = ['revenuecat_entitlement', 'revenuecat_offering'];

function sharedModels(): Record<string, Fields> {
  const models: Record<string, Fields> = {
    User: {
      app_user_id: str,
      referral_code: opt(str),
      referral_code_link: opt(str),
      is_trial: opt(bool),
      is_premium: opt(bool),
      first_seen_at: opt(date),
      last_seen_at: opt(date),
      metadata: opt(any),
      stripe_customer_id: opt(str),
      claim_code_eligibility: m('UserClaimCodeEligibility'),
      referred_by: opt(m('UserReferredBy')),
      stats: m('UserStats'),
      rewards: m('UserRewards'),
      referral_program: opt(m('ReferralProgram')),
    },
    UserClaimCodeEligibility: { eligible: bool, eligible_until: opt(date) },
    UserReferredBy: { code: opt(str), type: en('affiliate', 'promo', 'referral') },
    UserStats: { claims: int, conversions: int, churns: int },
    UserRewards: { active: m('UserRewardsActive'), expired: m('UserRewardsExpired') },
    UserRewardsActive: Object.fromEntries(KINDS.map((kind) => [kind, arr(m(`User${SDK_KINDS[kind]}RewardActive`))])),
    UserRewardsExpired: Object.fromEntries(KINDS.map((kind) => [kind, arr(m(`User${SDK_KINDS[kind]}RewardExpired`))])),
    UserRewardsGranted: Object.fromEntries(KINDS.map((kind) => [kind, arr(m(`User${SDK_KINDS[kind]}RewardActive`))])),
    OfferCodeValue: { value: str, link: str, expires_at: date },
    GooglePlayPromoCodeValue: { value: str, expires_at: date },
    ReferralProgram: {
      id: str,
      name: str,
      description: opt(str),
      metadata: opt(any),
      distribution_percentage: int,
      limit: int,
      rewards: m('ReferralProgramRewards'),
      created_at: date,
      updated_at: opt(date),
    },
    ReferralProgramRewards: { sender: m('ReferralProgramSenderRewards'), receiver: m('ReferralProgramReceiverRewards') },
    ReferralProgramSenderRewards: Object.fromEntries(KINDS.map((kind) => [kind, arr(m(`ReferralProgramSender${SDK_KINDS[kind]}Reward`))])),
    ReferralProgramReceiverRewards: Object.fromEntries(KINDS.map((kind) => [kind, arr(m(`ReferralProgramReceiver${SDK_KINDS[kind]}Reward`))])),
    NeverDeactivation: { variant: en('never') },
    IntervalDeactivation: { variant: en('interval'), duration: int, period: en('days', 'months', 'years') },
    UserWithdrawCreditsResult: { credits_available_at_start: int, credits_available_at_end: int, credits_requested_to_withdraw: int, credits_withdrawn: int },
    ErrorObject: { code: str, status: int, message: str, source: opt(str) },
    ErrorsResponse: { errors: arr(m('ErrorObject')) },
    UserResponse: { data: m('UserResponseData') },
    UserResponseData: { user: m('User') },
    UserClaimCodeResponse: { data: m('UserClaimCodeResponseData') },
    UserClaimCodeResponseData: { rewards_granted: m('UserRewardsGranted'), user: m('User') },
    UserGrantRewardResponse: { data: m('UserClaimCodeResponseData') },
    UserWithdrawCreditsResponse: { data: m('UserWithdrawCreditsResponseData') },
    UserWithdrawCreditsResponseData: { withdraw_result: m('UserWithdrawCreditsResult'), user: m('User') },
  };
  for (const kind of KINDS) {
    const prefix = SDK_KINDS[kind];
    models[`${prefix}Reward`] = { ...rewardCommon, ...rewardExtra[kind] };
    models[`User${prefix}RewardActive`] = {
      reward: m(`${prefix}Reward`),
      ...(kind === 'credit' ? { credits: int } : {}),
      ...(kind === 'offer_code' ? { value: opt(m('OfferCodeValue')) } : {}),
      ...(kind === 'googleplay_promo_code' ? { value: opt(m('GooglePlayPromoCodeValue')) } : {}),
      expires_at: opt(date),
      created_at: date,
      updated_at: opt(date),
    };
    models[`User${prefix}RewardExpired`] = {
      reward: m(`${prefix}Reward`),
      expired_at: nullableExpiredAt.includes(kind) ? opt(date) : date,
      created_at: date,
      updated_at: opt(date),
    };
    models[`ReferralProgramSender${prefix}Reward`] = {
      reward: m(`${prefix}Reward`),
      activation: m(`Sender${prefix}Activation`),
      deactivation: m('Deactivation'),
    };
    models[`ReferralProgramReceiver${prefix}Reward`] = {
      reward: m(`${prefix}Reward`),
      activation: m(`Receiver${prefix}Activation`),
      deactivation: m('Deactivation'),
    };
    models[`Sender${prefix}Activation`] = { variant: en('claim', 'conversion'), amount: int, ...(limitedSenders.includes(kind) ? { limit: int } : {}) };
    models[`Receiver${prefix}Activation`] = { variant: claimOnlyReceivers.includes(kind) ? en('claim') : en('claim', 'conversion') };
  }
  return models;
}

/**
 * The App Store offer-code models of `GET /app-store/offer-codes/{id}`: Kotlin's today, and the
 * same in the Swift SDK until April 2026 (commit 2669ed6, `AppStoreOfferCode.swift` …).
 */
const offerCodeModels: Record<string, Fields> = {
  OfferCodeResponse: { data: m('OfferCodeResponseData') },
  OfferCodeResponseData: { offer_code: m('AppStoreOfferCode'), subscription: m('AppStoreSubscription') },
  AppStoreOfferCode: {
    id: str,
    name: str,
    customer_eligibilities: arr(str),
    offer_eligibility: en('STACK_WITH_INTRO_OFFERS', 'REPLACE_INTRO_OFFERS'),
    duration: en('THREE_DAYS', 'ONE_WEEK', 'TWO_WEEKS', 'ONE_MONTH', 'TWO_MONTHS', 'THREE_MONTHS', 'SIX_MONTHS', 'ONE_YEAR'),
    offer_mode: en('PAY_AS_YOU_GO', 'PAY_UP_FRONT', 'FREE_TRIAL'),
    number_of_periods: int,
    prices: opt(arr(m('AppStorePrice'))),
  },
  AppStorePrice: { territory: str, price: str, currency: str },
  AppStoreSubscription: {
    id: str,
    product_id: str,
    name: str,
    subscription_period: en('ONE_WEEK', 'ONE_MONTH', 'TWO_MONTHS', 'THREE_MONTHS', 'SIX_MONTHS', 'ONE_YEAR'),
    prices: arr(m('AppStorePrice')),
  },
};

/**
 * `GET /codes/{code}`: no current SDK calls it, so its rules are SPEC §15's own (the entity by
 * type, platform types closed), held to the same decoding discipline.
 */
const codeModels: Record<string, Fields> = {
  CodeResponse: { data: { t: 'byKey', key: 'type', shapes: { referral: m('ReferralCode'), promo: m('PromoCode'), affiliate: m('AffiliateCode') } } },
  ReferralCode: { type: en('referral'), code: str, is_active: bool, entity: m('ReferralEntity'), rewards: m('ReferralProgramReceiverRewards') },
  PromoCode: { type: en('promo'), code: str, is_active: bool, entity: m('PromoEntity'), rewards: m('ReferralProgramReceiverRewards') },
  AffiliateCode: { type: en('affiliate'), code: str, is_active: bool, entity: m('AffiliateEntity'), rewards: m('ReferralProgramReceiverRewards') },
  ReferralEntity: { app_user_id: str },
  PromoEntity: { limit: int },
  AffiliateEntity: { name: str, logo_url: opt(str), platforms: arr(m('AffiliatePlatform')) },
  AffiliatePlatform: { type: en('instagram', 'tiktok', 'youtube', 'twitter', 'website'), handle: str, verified: bool },
};

export interface SdkRules {
  sdk: Sdk;
  models: Record<string, Fields | Rule>;
  date: RegExp;
  intRange: [number, number];
}

const INT64: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
const INT32: [number, number] = [-2_147_483_648, 2_147_483_647];

export const RULES: Record<Sdk, SdkRules> = {
  swift: {
    sdk: 'swift',
    models: { ...sharedModels(), ...offerCodeModels, ...codeModels, Deactivation: { t: 'oneOf', of: [m('IntervalDeactivation'), m('NeverDeactivation')] } },
    // yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ, or without .SSS (ZZZZZ: Z or ±hh:mm).
    date: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/,
    intRange: INT64,
  },
  kotlin: {
    sdk: 'kotlin',
    models: { ...sharedModels(), ...offerCodeModels, ...codeModels, Deactivation: m('IntervalDeactivation') },
    // ISO_OFFSET_DATE_TIME: seconds and fraction optional, offset required.
    date: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}(:\d{2})?)$/,
    intRange: INT32,
  },
  dart: {
    sdk: 'dart',
    models: { ...sharedModels(), ...codeModels, Deactivation: { t: 'oneOf', of: [m('NeverDeactivation'), m('IntervalDeactivation')] } },
    // DateTime.parse: date, optional time (T or space) with fraction and offset.
    date: /^[+-]?\d{4,6}-?\d{2}-?\d{2}([T ]\d{2}(:?\d{2}(:?\d{2}([.,]\d+)?)?)?\s?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i,
    intRange: INT64,
  },
};

export interface DecodeError {
  path: string;
  problem: string;
}

/** Decodes `value` as the SDK would decode model `name`; the problems it would throw on (none: it decodes). */
export function decode(rules: SdkRules, name: string, value: unknown): DecodeError[] {
  return check(rules, m(name), value, '');
}

function check(rules: SdkRules, rule: Rule, value: unknown, path: string): DecodeError[] {
  const fail = (problem: string) => [{ path: path || '/', problem }];
  if (value === null || value === undefined) return rule.nullable ? [] : fail(value === null ? 'null for a required value' : 'missing');
  switch (rule.t) {
    case 'any':
      return [];
    case 'string':
      return typeof value === 'string' ? [] : fail(`expected a string, got ${JSON.stringify(value)}`);
    case 'bool':
      return typeof value === 'boolean' ? [] : fail(`expected a boolean, got ${JSON.stringify(value)}`);
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && value >= rules.intRange[0] && value <= rules.intRange[1]
        ? []
        : fail(`expected an integer within ${rules.intRange.join('…')}, got ${JSON.stringify(value)}`);
    case 'date':
      return typeof value === 'string' && rules.date.test(value) && !Number.isNaN(Date.parse(value))
        ? []
        : fail(`expected a date-time ${rules.sdk} parses, got ${JSON.stringify(value)}`);
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value) ? [] : fail(`expected one of ${rule.values.join(', ')}, got ${JSON.stringify(value)}`);
    case 'array':
      return Array.isArray(value) ? value.flatMap((item, index) => check(rules, rule.of, item, `${path}/${index}`)) : fail('expected an array');
    case 'oneOf': {
      const attempts = rule.of.map((option) => check(rules, option, value, path));
      return attempts.some((problems) => problems.length === 0) ? [] : fail(`matches none of its shapes (${attempts.map((p) => p[0]?.problem).join(' | ')})`);
    }
    case 'byKey': {
      const shape = typeof value === 'object' ? rule.shapes[String((value as Record<string, unknown>)[rule.key])] : undefined;
      return shape ? check(rules, shape, value, path) : fail(`expected ${rule.key} one of ${Object.keys(rule.shapes).join(', ')}`);
    }
    case 'model': {
      const model = rules.models[rule.name];
      if (!model) throw new Error(`No ${rules.sdk} model ${rule.name}`);
      if ('t' in model && typeof model.t === 'string') return check(rules, { ...(model as Rule), nullable: rule.nullable }, value, path);
      if (typeof value !== 'object' || Array.isArray(value)) return fail(`expected an object (${rule.name})`);
      const record = value as Record<string, unknown>;
      return Object.entries(model as Fields).flatMap(([key, field]) => check(rules, field, record[key], `${path}/${key}`));
    }
  }
}
