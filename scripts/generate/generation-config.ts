/** What `npm run generate-events` configures, and the constants of its simulated traffic. */
import { createHash } from 'node:crypto';
import type { AffiliateInput } from '../../src/domain/catalog/affiliate-config.js';
import type { ProgramInput } from '../../src/domain/catalog/program-config.js';
import type { PromoCodeInput } from '../../src/domain/catalog/promo-config.js';
import type { RewardInput } from '../../src/domain/catalog/reward-config.js';
import type { Deactivation } from '../../src/domain/rewards/reward-schemas.js';

export const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const MINUTE = 60_000;

/** All of a user's own actions happen within this time after it registers. */
export const LIFETIME = 60 * DAY;
/** A user's state is dropped from memory this long after it registered (all its actions are done). */
export const RETIRE_AFTER = 100 * DAY;
/** Referrers are users who registered at most this long before the claim. */
export const REFERRER_RECENCY = 21 * DAY;
/** Events per user from everything but the extra profile activity (measured on default runs). */
export const BASELINE_EVENTS_PER_USER = 6.5;

export const GEN_PROGRAM_ID = 'gen-friends';
const CREDITS = 'gen-credits';
const PREMIUM_WEEK = 'gen-premium-week';
const WELCOME_CREDITS = 'gen-welcome-credits';
export const GOODWILL_CREDITS = 'gen-goodwill-credits';
export const WELCOME_PROMO = 'GEN-WELCOME';
export const LAUNCH_PROMO = 'GEN-LAUNCH';

function actorOf(kind: 'client' | 'secret', name: string): string {
  return `${kind}:${createHash('sha256').update(`generate-events:${name}`).digest('hex').slice(0, 12)}`;
}
export const CLIENT_ACTOR = actorOf('client', 'app');
export const SECRET_ACTOR = actorOf('secret', 'backoffice');

const never: Deactivation = { variant: 'never' };
export const days = (duration: number): Deactivation => ({ variant: 'interval', duration, period: 'days' });

export const REWARDS: RewardInput[] = [
  { key: CREDITS, kind: 'credit', name: 'Referral credits', description: 'Earned for each friend who joins', metadata: null, credits: 50 },
  { key: PREMIUM_WEEK, kind: 'basic', name: 'Premium week', description: null, metadata: { entitlement: 'premium' } },
  { key: WELCOME_CREDITS, kind: 'credit', name: 'Welcome credits', description: null, metadata: null, credits: 10 },
  { key: GOODWILL_CREDITS, kind: 'credit', name: 'Goodwill credits', description: 'Granted by support', metadata: null, credits: 20 },
];

export const PROGRAM: ProgramInput = {
  id: GEN_PROGRAM_ID,
  name: 'Invite friends (generated)',
  description: 'Synthetic program of npm run generate-events',
  metadata: null,
  distribution_percentage: 100,
  limit: 0,
  rewards: {
    sender: [
      { reward_key: CREDITS, activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never },
      { reward_key: CREDITS, activation: { variant: 'conversion', amount: 3, limit: 10 }, deactivation: never },
    ],
    receiver: [
      { reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(7) },
      { reward_key: WELCOME_CREDITS, activation: { variant: 'conversion' }, deactivation: never },
    ],
  },
};

export const PROMOS: PromoCodeInput[] = [
  {
    code: WELCOME_PROMO,
    description: 'Welcome credits for everyone',
    is_active: true,
    limit: 0,
    rewards: [{ reward_key: WELCOME_CREDITS, activation: { variant: 'claim' }, deactivation: never }],
  },
  {
    code: LAUNCH_PROMO,
    description: 'Launch week: two premium weeks for the first 500',
    is_active: true,
    limit: 500,
    rewards: [{ reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(14) }],
  },
];

export const AFFILIATES: AffiliateInput[] = [1, 2, 3].map((n) => ({
  id: `gen-affiliate-${n}`,
  status: 'approved',
  name: `Generated creator ${n}`,
  logo_url: null,
  platforms: [{ type: n % 2 === 0 ? 'youtube' : 'instagram', handle: `@gen_creator_${n}`, verified: n !== 3 }],
  app_user_id: null,
  codes: [`GEN-AFF${n}`],
  rewards: [
    { reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(30) },
    { reward_key: WELCOME_CREDITS, activation: { variant: 'conversion' }, deactivation: never },
  ],
}));
