-- Each price point carries its outcome's running volume total, so a bucket's volume is the
-- difference of two totals (exact, and found with two index seeks per bucket).
ALTER TABLE price_points ADD COLUMN cum_volume NUMERIC(78,0);
