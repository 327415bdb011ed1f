/**
 * What a failed claim costs (SPEC §13: "failed claims counting 5"): any claim refused with 404 or
 * 422 — an unknown or own code, one already claimed, a code at its limit, a rule's refusal, an
 * unknown claimer — so enumerating codes through claims is slow too. Every claim takes this much
 * up front and gives back all but 1 unless it fails so (a success, a malformed request, a 429):
 * charging the rest only after a failure let every claim already in flight through at 1 point,
 * so a burst of guesses got about 5 times the budget.
 */
export const FAILED_CLAIM_COST = 5;
