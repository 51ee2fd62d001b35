-- A counter bumped whenever the set of markets a search filter can select changes (a market
-- is added or removed, or a filtered column changes); cached search totals are kept per
-- version. Trades change only totals and timestamps, which no filter reads.
CREATE TABLE market_set_version (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  INTEGER NOT NULL
);
INSERT INTO market_set_version (id, version) VALUES (1, 0);
CREATE TRIGGER market_set_insert AFTER INSERT ON markets BEGIN
    UPDATE market_set_version SET version = version + 1;
END;
CREATE TRIGGER market_set_delete AFTER DELETE ON markets BEGIN
    UPDATE market_set_version SET version = version + 1;
END;
CREATE TRIGGER market_set_update
    AFTER UPDATE OF provider_id, token_id, category, status, ends_at, question_lower, description_lower ON markets BEGIN
    UPDATE market_set_version SET version = version + 1;
END;
