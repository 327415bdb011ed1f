import { expect } from 'chai';
import { describe, it } from 'mocha';
import { decideLinkTransaction, type LinkTransactionCommand, transactionEvolver, transactionKey } from '../../../src/domain/transactions/transaction-link.js';
import { deciderSpec } from '../../support/decider-spec.js';

const transaction = deciderSpec(transactionEvolver);
const T0 = new Date('2026-11-23T10:00:00.000Z');
const link = (appUserId: string): LinkTransactionCommand => ({
  provider: 'app-store',
  transaction_id: '2000000001',
  app_user_id: appUserId,
  app_account_token: null,
  obfuscated_external_account_id: null,
  now: T0,
});
const fields = (appUserId: string) => ({
  provider: 'app-store' as const,
  transaction_id: '2000000001',
  app_user_id: appUserId,
  app_account_token: null,
  obfuscated_external_account_id: null,
});
const linked = (appUserId: string) => ({ type: 'TransactionLinked' as const, data: { ...fields(appUserId), linked_at: T0.toISOString() } });
const refused = (appUserId: string, holder: string) => ({
  type: 'TransactionLinkRefused' as const,
  data: { ...fields(appUserId), linked_app_user_id: holder, attempted_at: T0.toISOString() },
});

describe('domain: transaction links (SPEC §15)', () => {
  it('links a new transaction to the user', () => {
    const { result } = transaction
      .given()
      .when((state) => decideLinkTransaction(state, link('ann')))
      .then([linked('ann')]);
    expect(result).to.equal('linked');
  });

  it('changes nothing when the same user links it again', () => {
    const { result } = transaction
      .given([linked('ann')])
      .when((state) => decideLinkTransaction(state, link('ann')))
      .thenNothing();
    expect(result).to.equal('already_linked');
  });

  it("keeps the first link and records another user's attempt, once per user", () => {
    transaction
      .given([linked('ann')])
      .when((state) => decideLinkTransaction(state, link('bob')))
      .then([refused('bob', 'ann')]);
    const { result } = transaction
      .given([linked('ann'), refused('bob', 'ann')])
      .when((state) => decideLinkTransaction(state, link('bob')))
      .thenNothing();
    expect(result).to.equal('refused');
  });

  it('keys App Store ids as they are and Play tokens by their SHA-256', () => {
    expect(transactionKey('app-store', '2000000001')).to.equal('2000000001');
    expect(transactionKey('google-play', 'x'.repeat(4096))).to.match(/^[0-9a-f]{64}$/);
  });
});
