-- Candles of the maintained widths from the raw price points (shared by both dialects; run
-- by migration 20 and after bulk loads). High and low order prices by their digit count
-- first: SQLite keeps them as TEXT, whose plain order would put "9" above "10".
INSERT INTO price_candles (market_id, width, start, outcome_id, price, cum_before, cum_after, points, high, low, trades)
SELECT market_id, width, start, outcome_id, price, cum_before, cum_after, points, high, low, trades FROM (
    SELECT p.market_id, w.width, p.at - p.at % w.width AS start, p.outcome_id,
           LAST_VALUE(p.price) OVER bucket AS price,
           FIRST_VALUE(p.total_before) OVER bucket AS cum_before,
           LAST_VALUE(p.total_after) OVER bucket AS cum_after,
           COUNT(*) OVER bucket AS points,
           FIRST_VALUE(p.price) OVER by_price_desc AS high,
           FIRST_VALUE(p.price) OVER by_price_asc AS low,
           COUNT(CASE WHEN p.volume <> '0' THEN 1 END) OVER bucket AS trades,
           ROW_NUMBER() OVER bucket AS nth
    FROM (
        SELECT market_id, outcome_id, price, volume, at, seq, LENGTH(CAST(price AS TEXT)) AS digits,
               COALESCE(cum_volume, 0) AS total_after,
               COALESCE(LAG(cum_volume) OVER (PARTITION BY outcome_id ORDER BY at, seq), 0) AS total_before
        FROM price_points
    ) p
    CROSS JOIN (SELECT CAST(60000000 AS BIGINT) AS width UNION ALL SELECT CAST(3600000000 AS BIGINT)) w
    WINDOW bucket AS (PARTITION BY p.outcome_id, w.width, p.at - p.at % w.width ORDER BY p.at, p.seq
                      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
           by_price_desc AS (PARTITION BY p.outcome_id, w.width, p.at - p.at % w.width ORDER BY p.digits DESC, p.price DESC),
           by_price_asc AS (PARTITION BY p.outcome_id, w.width, p.at - p.at % w.width ORDER BY p.digits, p.price)
) candles
WHERE nth = 1;
