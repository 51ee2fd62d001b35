-- A claim takes each endpoint's oldest due deliveries as one ordered range of this index, at a
-- cost that does not grow with the backlog (store::webhooks::claim_due).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries(endpoint_id, next_attempt_at) WHERE status = 'pending';
