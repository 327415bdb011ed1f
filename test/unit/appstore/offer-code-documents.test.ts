import { expect } from 'chai';
import { pricesInEffect, readOfferCodeDocument, readPricesPage } from '../../../src/adapters/appstore/offer-code-documents.js';
import { MalformedDocumentError } from '../../../src/adapters/appstore/json-api.js';
import { offerCodeDocument, sampleOfferCode } from './fake-app-store-connect.js';

const usd = (price: string, startDate: string | null) => ({ territory: 'USA', currency: 'USD', price, startDate });

describe('App Store Connect documents', () => {
  describe('pricesInEffect', () => {
    it('keeps, per territory, the price with the latest start on or before today', () => {
      const prices = [usd('1.99', null), usd('2.99', '2026-03-10'), usd('3.99', '2026-03-11'), usd('0.99', '2025-01-01')];
      expect(pricesInEffect(prices, '2026-03-10')).to.deep.equal([{ territory: 'USA', price: '2.99', currency: 'USD' }]);
      expect(pricesInEffect(prices, '2026-03-09')).to.deep.equal([{ territory: 'USA', price: '0.99', currency: 'USD' }]);
      expect(pricesInEffect(prices, '2024-12-31')).to.deep.equal([{ territory: 'USA', price: '1.99', currency: 'USD' }]);
    });

    it('leaves out territories whose prices all start later, and sorts by territory', () => {
      const prices = [
        { territory: 'USA', currency: 'USD', price: '1.99', startDate: null },
        { territory: 'CAN', currency: 'CAD', price: '2.49', startDate: null },
        { territory: 'GBR', currency: 'GBP', price: '1.49', startDate: '2999-01-01' },
      ];
      expect(pricesInEffect(prices, '2026-03-10').map((price) => price.territory)).to.deep.equal(['CAN', 'USA']);
    });
  });

  describe('readOfferCodeDocument', () => {
    it('needs the included subscription', () => {
      expect(() => readOfferCodeDocument(offerCodeDocument(sampleOfferCode(), []))).to.throw(MalformedDocumentError, 'subscriptions 6470878936');
    });

    it('rejects a document of another type', () => {
      const document = offerCodeDocument(sampleOfferCode(), ['subscription']);
      expect(() => readOfferCodeDocument({ ...document, data: { ...document.data, type: 'apps' } })).to.throw(MalformedDocumentError, 'apps');
    });
  });

  describe('readPricesPage', () => {
    it('needs the price point of each price', () => {
      const page = {
        data: [
          {
            type: 'subscriptionPrices',
            id: 'p',
            attributes: { startDate: null },
            relationships: { territory: { data: { type: 'territories', id: 'USA' } } },
          },
        ],
        included: [{ type: 'territories', id: 'USA', attributes: { currency: 'USD' } }],
      };
      expect(() => readPricesPage(page, 'subscriptionPrices')).to.throw(MalformedDocumentError, 'subscriptionPricePoint');
    });

    it('reads an empty last page', () => {
      expect(readPricesPage({ data: [], links: { self: 'x' } }, 'subscriptionOfferCodePrices')).to.deep.equal({ prices: [], next: null });
    });
  });
});
