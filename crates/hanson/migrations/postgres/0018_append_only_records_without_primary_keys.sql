-- Transfers, trades and price points are append-only records numbered by their identity
-- sequence, and nothing looks one up by that number: the audit scans transfers, trades are
-- found by `id` (still unique) and by their market, wallet or time, price points by their
-- market or outcome. Their primary key indexes only cost every trade b-tree inserts and WAL
-- records: in many_markets six a trade (three transfers, the trade, a price point
-- per outcome) of its 40 WAL records (docs/performance.md, "Primary keys nothing reads").
-- Mirrors migrations/sqlite/0018.
ALTER TABLE transfers DROP CONSTRAINT transfers_pkey;
ALTER TABLE trades DROP CONSTRAINT trades_pkey;
ALTER TABLE price_points DROP CONSTRAINT price_points_pkey;
