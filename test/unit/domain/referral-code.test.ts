import { expect } from 'chai';
import { describe, it } from 'mocha';
import { normalizeCode, REFERRAL_CODE_ALPHABET, REFERRAL_CODE_LENGTH, referralLink } from '../../../src/domain/codes/referral-code.js';

describe('referral codes and links (SPEC §4)', () => {
  it('codes are 6 characters of ABCDEFGHJKLMNPQRSTUVWXYZ23456789', () => {
    expect(REFERRAL_CODE_LENGTH).to.equal(6);
    expect(REFERRAL_CODE_ALPHABET).to.equal('ABCDEFGHJKLMNPQRSTUVWXYZ23456789');
    expect(new Set(REFERRAL_CODE_ALPHABET).size).to.equal(32);
    for (const ambiguous of ['0', 'O', '1', 'I']) expect(REFERRAL_CODE_ALPHABET).not.to.include(ambiguous);
  });

  describe('normalizeCode (matched case-insensitively, stored upper case)', () => {
    it('upper-cases', () => {
      expect(normalizeCode('abc234')).to.equal('ABC234');
      expect(normalizeCode('Spring_Sale-1')).to.equal('SPRING_SALE-1');
    });

    it('leaves an upper-case code unchanged', () => {
      expect(normalizeCode('ABC234')).to.equal('ABC234');
    });

    it('changes the case of ASCII letters only: a Unicode look-alike matches no code', () => {
      expect(normalizeCode('straße')).to.equal('STRAßE');
      expect(normalizeCode('\ufb06rasse')).to.equal('\ufb06RASSE');
      expect(normalizeCode('ǆ-é')).to.equal('ǆ-é');
    });

    it('a code typed in any case normalises to the same value', () => {
      expect(new Set(['abc234', 'ABC234', 'aBc234'].map(normalizeCode)).size).to.equal(1);
    });
  });

  describe('referralLink', () => {
    it('REFERRAL_LINK_BASE + "/" + code', () => {
      expect(referralLink('https://example.com/r', 'ABC234')).to.equal('https://example.com/r/ABC234');
    });

    it('null without a base or without a code', () => {
      expect(referralLink(null, 'ABC234')).to.equal(null);
      expect(referralLink('https://example.com/r', null)).to.equal(null);
    });

    it('does not double the slash when the base ends with one', () => {
      expect(referralLink('https://example.com/r/', 'ABC234')).to.equal('https://example.com/r/ABC234');
    });
  });
});
