/**
 * How many digits a currency's minor unit has: ISO 4217's exponent (list one, amendment 179),
 * the unit every amount is kept in. Apple's milliunits, RevenueCat's decimal prices and Stripe's
 * minor units (which differ for MGA and ISK: src/adapters/revenue/stripe-verifier.ts) are
 * converted to it, so one currency is one unit whatever its provider. Not the runtime's `Intl` data: CLDR gives HUF, IDR, COP, IQD and others fewer
 * digits for display than ISO 4217 counts, which would mix units in one figure.
 */
const DIGITS: Readonly<Record<string, number>> = Object.freeze({
  ...Object.fromEntries(
    ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((c) => [c, 0]),
  ),
  ...Object.fromEntries(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((c) => [c, 3])),
  ...Object.fromEntries(['CLF', 'UYW'].map((c) => [c, 4])),
});

/** The minor-unit digits of an ISO 4217 code (any case); 2, ISO's usual exponent, for every other code. */
export function currencyDigits(currency: string): number {
  return DIGITS[currency.toUpperCase()] ?? 2;
}
