// Migration 15 (webhook-claims): each attempt at a webhook delivery is claimed with a token of its
// own (core/services/webhook-delivery.ts). Claiming sets `claim_token` and moves `next_attempt_at`
// past the attempt's lease in one statement; recording the attempt's outcome (or giving it back)
// names the token, so a process whose attempt outlived its lease — stalled, or cut off from the
// database — cannot overwrite the claim of the process that took the delivery over after it, nor
// set it due again while that one's attempt is in flight. Same DDL on both engines.
export const sql = /* sql */ `
ALTER TABLE webhook_deliveries ADD COLUMN claim_token TEXT;
`;
