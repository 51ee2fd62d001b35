-- Pruning the deliveries log looks up the ended deliveries by when they ended: without this
-- index every pruning scanned the whole log, a stall that grew with it (docs/performance.md,
-- "Soak").
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries(updated_at) WHERE status <> 'pending';
