/**
 * Whether a recorded purchase or renewal is a payment of its own: not when it repeats one
 * recorded before (`repeats_purchase`). Only those count as revenue (analytics, attribution),
 * make the user premium, and are the transaction's record in the revenue index.
 */
export function isOwnPayment(purchase: { repeats_purchase?: boolean }): boolean {
  return purchase.repeats_purchase !== true;
}
