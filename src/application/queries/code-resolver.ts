import { inject, injectable } from 'tsyringe';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import type { CodeType } from '../../domain/events/code-events.js';
import type { ConfiguredReward } from '../../domain/rewards/reward-schemas.js';
import type { ClaimTarget } from '../../domain/users/claim-code.js';
import { CatalogQueries } from './catalog-queries.js';

export interface ResolvedCode {
  code: string;
  type: CodeType;
  owner_id: string;
  program_id: string | null;
  owner_app_user_id: string | null;
  /** Active as far as the code's owner is concerned (SPEC §5.1 step 7). */
  owner_active: boolean;
  /** Claim limit of the code, 0 = unlimited. */
  limit: number;
  /** Claims so far (read model). */
  taken: number;
  receiverEntries: ConfiguredReward[];
  entity: { name: string; logo_url: string | null; platforms: { type: string; handle: string; verified: boolean }[] };
}

/** What a code stands for: a referrer, a promo code or an affiliate. */
@injectable()
export class CodeResolver {
  constructor(@inject(CatalogQueries) private readonly catalog: CatalogQueries) {}

  async resolve(rawCode: string): Promise<ResolvedCode | null> {
    const code = normalizeCode(rawCode);
    const doc = await this.catalog.code(code);
    if (!doc) return null;
    const base = { code, type: doc.type, owner_id: doc.owner_id, taken: doc.taken };
    switch (doc.type) {
      case 'referral': {
        const referrer = await this.catalog.user(doc.owner_id);
        // A reservation whose owner never received the code (a crash in between) is no code.
        if (!referrer || referrer.referral_code !== code) return null;
        const program = referrer.program_id === null ? null : await this.catalog.program(referrer.program_id);
        return {
          ...base,
          program_id: referrer.program_id,
          owner_app_user_id: referrer.app_user_id,
          owner_active: program !== null,
          limit: program?.limit ?? 0,
          receiverEntries: program?.rewards.receiver ?? [],
          entity: { name: program?.name ?? '', logo_url: null, platforms: [] },
        };
      }
      case 'promo': {
        const promo = await this.catalog.promoCode(code);
        if (!promo) return null;
        return {
          ...base,
          program_id: null,
          owner_app_user_id: null,
          owner_active: promo.is_active,
          limit: promo.limit,
          receiverEntries: promo.rewards,
          entity: { name: promo.description || promo.code, logo_url: null, platforms: [] },
        };
      }
      case 'affiliate': {
        const affiliate = await this.catalog.affiliate(doc.owner_id);
        if (!affiliate?.codes.includes(code)) return null;
        return {
          ...base,
          program_id: null,
          owner_app_user_id: affiliate.app_user_id,
          owner_active: affiliate.status === 'approved',
          limit: 0,
          receiverEntries: affiliate.rewards,
          entity: { name: affiliate.name, logo_url: affiliate.logo_url, platforms: affiliate.platforms },
        };
      }
    }
  }

  /** The claim decider's view of a resolved code, with receiver rewards resolved. */
  async claimTarget(resolved: ResolvedCode | null): Promise<ClaimTarget | null> {
    if (!resolved) return null;
    const entries = await this.catalog.resolveEntries(resolved.receiverEntries);
    return {
      code: resolved.code,
      type: resolved.type,
      owner_id: resolved.owner_id,
      program_id: resolved.program_id,
      owner_app_user_id: resolved.owner_app_user_id,
      is_active: resolved.owner_active,
      claimRewards: entries.filter((entry) => entry.activation.variant === 'claim'),
      conversionRewards: entries.filter((entry) => entry.activation.variant === 'conversion'),
    };
  }
}
