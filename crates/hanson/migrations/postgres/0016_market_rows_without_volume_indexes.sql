-- A trade changes its market's total_volume. While total_volume was indexed, each such update
-- wrote a new entry into every one of the markets' indexes (15 b-trees and the 2 trigram GIN
-- indexes: an update is HOT only when no indexed column changes and the page has room). A
-- search sorted by volume builds its list once per data version and derives the filtered
-- lists in memory (store::markets::SearchCache), so it sorts the markets then instead of
-- walking an index (figures in README "Performance").
DROP INDEX markets_volume;
DROP INDEX markets_category_volume;
DROP INDEX markets_provider_volume;
DROP INDEX markets_status_volume;
-- Room on each page for the updated row versions, so they stay HOT.
ALTER TABLE markets SET (fillfactor = 70);
