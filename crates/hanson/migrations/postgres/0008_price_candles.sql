-- Per-outcome candles of every maintained width (1m and 1h), upserted by each trade, so a
-- bucketed history page reads a handful of rows instead of walking the raw points. A candle
-- keeps the running volume total before its first point and after its last, so its volume is
-- an exact difference; `points` counts the raw points it covers.
CREATE TABLE price_candles (
    market_id   TEXT COLLATE "C" NOT NULL,
    width       BIGINT NOT NULL,
    start       BIGINT NOT NULL,
    outcome_id  TEXT COLLATE "C" NOT NULL,
    price       NUMERIC(78,0) NOT NULL,
    cum_before  NUMERIC(78,0) NOT NULL,
    cum_after   NUMERIC(78,0) NOT NULL,
    points      BIGINT NOT NULL,
    PRIMARY KEY (market_id, width, start, outcome_id)
);
