-- Search pages are assembled from cached parts. `revision` changes with every update of the
-- market row, so a cached rendering is reused only while the revision read alongside it is
-- unchanged. Every write to a market's outcomes also updates its row; a claim, which drains
-- the pool and nothing else, bumps the revision itself. (Triggers on outcomes and the pool
-- account would fire three times per trade, on the single writer's path.) `data_version` changes
-- with any market's revision: while it stands, no search item changed but for the status the
-- clock derives, and the volume order (the one sort key trades move) holds.
ALTER TABLE markets ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE market_set_version ADD COLUMN data_version INTEGER;
UPDATE market_set_version SET data_version = 0;
CREATE TRIGGER market_revision AFTER UPDATE ON markets WHEN NEW.revision = OLD.revision BEGIN
    UPDATE markets SET revision = revision + 1 WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER market_data_version AFTER UPDATE OF revision ON markets BEGIN
    UPDATE market_set_version SET data_version = data_version + 1;
END;
