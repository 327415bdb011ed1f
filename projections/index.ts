import { analyticsProjection } from './analytics.js';
import { attributionProjection } from './attribution.js';
import { catalogProjection } from './catalog.js';
import { claimSlotsProjection } from './claim-slots.js';
import { claimStatsProjection } from './claim-stats.js';
import { codesProjection } from './codes.js';
import { creditLedgerProjection } from './credit-ledger.js';
import { fraudRulesProjection } from './fraud-rules.js';
import { operationsProjection } from './operations.js';
import { poolIndexProjection } from './pool-index.js';
import type { Projection } from './projection.js';
import { revenueIndexProjection } from './revenue-index.js';
import { reviewsProjection } from './reviews.js';
import { rewardExpiriesProjection } from './reward-expiries.js';
import { storeOfferCodesProjection } from './store-offer-codes.js';
import { transactionLinksProjection } from './transaction-links.js';
import { usersProjection } from './users.js';
import { webhooksProjection } from './webhooks.js';

/** What read models are built with: the service's settings they depend on. */
export interface ProjectionSettings {
  /** ACCOUNT_TOKEN_NAMESPACE (the revenue index's account-token links). */
  accountTokenNamespace: string;
}

/** Every read model the service keeps. */
export const allProjections = (settings: ProjectionSettings): Projection[] => [
  usersProjection,
  codesProjection,
  catalogProjection,
  claimStatsProjection,
  rewardExpiriesProjection,
  claimSlotsProjection,
  creditLedgerProjection,
  storeOfferCodesProjection,
  operationsProjection,
  webhooksProjection,
  revenueIndexProjection(settings.accountTokenNamespace),
  attributionProjection,
  transactionLinksProjection,
  fraudRulesProjection,
  reviewsProjection,
  analyticsProjection,
  poolIndexProjection,
];
