-- Candles of the maintained widths from the raw price points, as migration 8 wrote them
-- (before their high, low and trade count; migration 20 rebuilds them with those).
INSERT INTO price_candles (market_id, width, start, outcome_id, price, cum_before, cum_after, points)
SELECT market_id, width, start, outcome_id, price, cum_before, cum_after, points FROM (
    SELECT p.market_id, w.width, p.at - p.at % w.width AS start, p.outcome_id,
           LAST_VALUE(p.price) OVER bucket AS price,
           FIRST_VALUE(p.total_before) OVER bucket AS cum_before,
           LAST_VALUE(p.total_after) OVER bucket AS cum_after,
           COUNT(*) OVER bucket AS points,
           ROW_NUMBER() OVER bucket AS nth
    FROM (
        SELECT market_id, outcome_id, price, at, seq, COALESCE(cum_volume, 0) AS total_after,
               COALESCE(LAG(cum_volume) OVER (PARTITION BY outcome_id ORDER BY at, seq), 0) AS total_before
        FROM price_points
    ) p
    CROSS JOIN (SELECT CAST(60000000 AS BIGINT) AS width UNION ALL SELECT CAST(3600000000 AS BIGINT)) w
    WINDOW bucket AS (PARTITION BY p.outcome_id, w.width, p.at - p.at % w.width ORDER BY p.at, p.seq
                      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
) candles
WHERE nth = 1;
