-- Per-outcome candles of every maintained width (1m and 1h), upserted by each trade, so a
-- bucketed history page reads a handful of rows instead of walking the raw points. A candle
-- keeps the running volume total before its first point and after its last, so its volume is
-- an exact difference; `points` counts the raw points it covers.
CREATE TABLE price_candles (
    market_id   TEXT NOT NULL,
    width       INTEGER NOT NULL,
    start       INTEGER NOT NULL,
    outcome_id  TEXT NOT NULL,
    price       TEXT NOT NULL,
    cum_before  TEXT NOT NULL,
    cum_after   TEXT NOT NULL,
    points      INTEGER NOT NULL,
    PRIMARY KEY (market_id, width, start, outcome_id)
) WITHOUT ROWID;
