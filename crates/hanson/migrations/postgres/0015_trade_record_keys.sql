-- Transfers, trades and price points are append-only records of writes whose markets,
-- outcomes, wallets and accounts are created first and never deleted. Their foreign keys
-- checked that on every inserted row: a SELECT ... FOR KEY SHARE on the parent per key,
-- seven per trade and more per price point, all on the hot market's rows. That cost 8.5%
-- of all CPU in hot_market and about 28% of its throughput (six interleaved pairs, README
-- "Performance"). `hanson audit` checks the same references instead (and more: a trade's
-- or price point's outcome belongs to its market), so a broken reference is still found.
ALTER TABLE transfers DROP CONSTRAINT transfers_from_account_fkey;
ALTER TABLE transfers DROP CONSTRAINT transfers_to_account_fkey;
ALTER TABLE trades DROP CONSTRAINT trades_market_id_fkey;
ALTER TABLE trades DROP CONSTRAINT trades_outcome_id_fkey;
ALTER TABLE trades DROP CONSTRAINT trades_wallet_id_fkey;
ALTER TABLE price_points DROP CONSTRAINT price_points_market_id_fkey;
ALTER TABLE price_points DROP CONSTRAINT price_points_outcome_id_fkey;
