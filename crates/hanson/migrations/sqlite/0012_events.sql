-- The event log (CONTRACT "Events"): one row per event, written in the transaction of its
-- change. `market_id` and `seq` place a market event in its market's stream: seq is the
-- market's previous maximum plus one, taken under the market's write lock, so it is gapless
-- and in apply order. `wallet_id` names the user stream that shows the event. `envelope`
-- is the event as sent. `created_at` is when the row was written, for pruning.
CREATE TABLE events (
    position   INTEGER PRIMARY KEY,
    id         TEXT NOT NULL,
    market_id  TEXT,
    seq        INTEGER,
    wallet_id  TEXT,
    type       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    envelope   TEXT NOT NULL
);
CREATE UNIQUE INDEX events_market_seq ON events(market_id, seq) WHERE market_id IS NOT NULL;
CREATE INDEX events_unsequenced_created ON events(created_at) WHERE market_id IS NULL;

-- `market.closed` is announced once per closing time; markets already closed are not
-- announced late.
ALTER TABLE markets ADD COLUMN close_announced INTEGER NOT NULL DEFAULT 0;
UPDATE markets SET close_announced = 1 WHERE ends_at <= CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER);
CREATE INDEX markets_unannounced_close ON markets(ends_at) WHERE close_announced = 0;
