-- One index per search sort field, so a page never sorts the whole table.
CREATE INDEX markets_ends ON markets(ends_at, id);
CREATE INDEX markets_volume ON markets(length(total_volume), total_volume, id);
CREATE INDEX markets_question ON markets(question, id);
CREATE INDEX markets_status_created ON markets(status, created_at, id);
