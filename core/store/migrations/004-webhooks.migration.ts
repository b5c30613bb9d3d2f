// Webhooks (contract §10): subscriptions, a persisted outbox of events and one delivery row per
// (event, subscribed webhook). Events and their delivery rows are written in the transaction of
// the state change that causes them, so an event is never lost and never announced for a change
// that rolled back (at-least-once). A delivery row is the unit the delivery loop works on: it is
// `pending` until a 2xx (`delivered`) or until the retry window ends (`failed`). `next_attempt_at`
// doubles as a lease: claiming an attempt pushes it past the attempt's timeout, so a process that
// dies mid-attempt leaves the row due again shortly after, never stuck.
export const sql = /* sql */ `
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_org_created ON webhooks(organization_id, created_at DESC, id DESC);

CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_events_created ON webhook_events(created_at);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status_code INTEGER,
  last_error TEXT,
  next_attempt_at TEXT,
  delivered_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (webhook_id, event_id)
) STRICT;
CREATE INDEX webhook_deliveries_webhook_created ON webhook_deliveries(webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_org_created ON webhook_deliveries(organization_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
`;
