-- A filtered search sorted by another field sorted every matching market (a row read each);
-- with an index per (filter, sort field) pair a page is an index walk. The volume indexes
-- cost each trade one more entry update apiece.
CREATE INDEX markets_category_ends ON markets(category, ends_at, id);
CREATE INDEX markets_category_volume ON markets(category, total_volume, id);
CREATE INDEX markets_provider_ends ON markets(provider_id, ends_at, id);
CREATE INDEX markets_provider_volume ON markets(provider_id, total_volume, id);
CREATE INDEX markets_status_volume ON markets(status, total_volume, id);
