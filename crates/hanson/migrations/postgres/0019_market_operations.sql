-- Market operations: a provider may pause trading on a market (paused_at set while paused),
-- and a resolution may wait out a dispute window before it is final. A resolution becomes
-- final at final_at; finalized = 0 marks one still waiting (its surplus stays in the pool),
-- and the one row update that sets it to 1 is what makes a single node finalize it. Earlier
-- resolutions were final at once: the default says so.
ALTER TABLE markets ADD COLUMN paused_reason TEXT;
ALTER TABLE markets ADD COLUMN paused_at BIGINT;
ALTER TABLE markets ADD COLUMN final_at BIGINT;
ALTER TABLE markets ADD COLUMN finalized BIGINT NOT NULL DEFAULT 1;
UPDATE markets SET final_at = settled_at WHERE status = 'resolved';
CREATE INDEX markets_finalize_due ON markets(final_at) WHERE finalized = 0;
