-- Market data. Candles keep their high, low and the count of their outcome's own trades
-- (points with volume), rebuilt here from the raw points (the backfill file follows).
ALTER TABLE price_candles ADD COLUMN high NUMERIC(78,0) NOT NULL DEFAULT 0;
ALTER TABLE price_candles ADD COLUMN low NUMERIC(78,0) NOT NULL DEFAULT 0;
ALTER TABLE price_candles ADD COLUMN trades BIGINT NOT NULL DEFAULT 0;
DELETE FROM price_candles;

-- Prices that move without a trade: every outcome's price at the market's creation and after
-- an outcome is added. Candles start each outcome's series from these; price history (points
-- of trades) does not show them.
CREATE TABLE price_marks (
    seq         BIGSERIAL PRIMARY KEY,
    market_id   TEXT COLLATE "C" NOT NULL,
    outcome_id  TEXT COLLATE "C" NOT NULL,
    price       NUMERIC(78,0) NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX price_marks_market ON price_marks(market_id, at, seq);
