import type { PurchaseRef } from '../events/revenue-events.js';

/** Whether `refund` takes back `purchase`: the same transaction, or (without one) the same original transaction. */
export function refundsPurchase(refund: Pick<PurchaseRef, 'provider' | 'transaction_id' | 'original_transaction_id'>, purchase: PurchaseRef | null): boolean {
  if (purchase === null || refund.provider !== purchase.provider) return false;
  if (refund.transaction_id !== null) return refund.transaction_id === purchase.transaction_id;
  return refund.original_transaction_id !== null && refund.original_transaction_id === purchase.original_transaction_id;
}
