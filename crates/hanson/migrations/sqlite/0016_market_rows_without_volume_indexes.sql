-- A trade changes its market's total_volume, and each of these indexes took an entry update
-- per trade. A search sorted by volume builds its list once per data version and derives the
-- filtered lists in memory (store::markets::SearchCache), so it sorts the markets then instead
-- of walking an index. Mirrors migrations/postgres/0016.
DROP INDEX markets_volume;
DROP INDEX markets_category_volume;
DROP INDEX markets_provider_volume;
DROP INDEX markets_status_volume;
