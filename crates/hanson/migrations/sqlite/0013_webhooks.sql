-- Provider webhooks (CONTRACT "Webhooks"). `event_types` is a space-separated list, or `*`.
-- A rotation keeps the replaced secret in `previous_secret` until `previous_secret_until`.
-- `failing_since` is the first failure after the last success (five days of it disables).
CREATE TABLE webhook_endpoints (
    id                    TEXT PRIMARY KEY,
    provider_id           TEXT NOT NULL REFERENCES providers(id),
    url                   TEXT NOT NULL,
    event_types           TEXT NOT NULL,
    description           TEXT,
    enabled               INTEGER NOT NULL,
    disabled_reason       TEXT,
    secret                TEXT NOT NULL,
    previous_secret       TEXT,
    previous_secret_until INTEGER NOT NULL DEFAULT 0,
    failing_since         INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_provider ON webhook_endpoints(provider_id, created_at);

-- One row per event and endpoint, written in the event's transaction. The body is the event's
-- row in `events` (`event_position`), which pruning keeps while a delivery is pending.
-- `claimed_until` is the lease of the node making the current attempt. Integer ids and two
-- indexes: every trade writes a row per subscribed endpoint, and appending is what is cheap.
CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY,
    endpoint_id      TEXT NOT NULL,
    event_position   INTEGER NOT NULL,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT,
    next_attempt_at  INTEGER,
    claimed_until    INTEGER NOT NULL DEFAULT 0,
    manual           INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);
