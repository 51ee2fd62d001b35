-- Search pages are assembled from cached parts. `revision` changes with everything a search
-- result shows of a market: its row, its outcomes and its pool balance, so a cached rendering
-- is reused only while the revision read alongside it is unchanged. `data_version` changes
-- with any market's revision: while it stands, no search item changed but for the status the
-- clock derives, and the volume order (the one sort key trades move) holds.
ALTER TABLE markets ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE market_set_version ADD COLUMN data_version INTEGER;
UPDATE market_set_version SET data_version = 0;
CREATE TRIGGER market_revision AFTER UPDATE ON markets WHEN NEW.revision = OLD.revision BEGIN
    UPDATE markets SET revision = revision + 1 WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER outcome_insert_revision AFTER INSERT ON outcomes BEGIN
    UPDATE markets SET revision = revision + 1 WHERE id = NEW.market_id;
END;
CREATE TRIGGER outcome_update_revision AFTER UPDATE ON outcomes BEGIN
    UPDATE markets SET revision = revision + 1 WHERE id = NEW.market_id;
END;
CREATE TRIGGER pool_revision AFTER UPDATE OF balance ON accounts WHEN NEW.kind = 'pool' BEGIN
    UPDATE markets SET revision = revision + 1 WHERE id = NEW.owner_id;
END;
CREATE TRIGGER market_data_version AFTER UPDATE OF revision ON markets BEGIN
    UPDATE market_set_version SET data_version = data_version + 1;
END;
