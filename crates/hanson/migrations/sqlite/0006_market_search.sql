-- Substring search over question and description through a trigram index, kept in step
-- with markets by triggers (FTS5 external content).
CREATE VIRTUAL TABLE markets_search USING fts5(
    question_lower, description_lower, content='markets', content_rowid='rowid', tokenize='trigram'
);
INSERT INTO markets_search (rowid, question_lower, description_lower)
    SELECT rowid, question_lower, description_lower FROM markets;
CREATE TRIGGER markets_search_insert AFTER INSERT ON markets BEGIN
    INSERT INTO markets_search (rowid, question_lower, description_lower)
        VALUES (new.rowid, new.question_lower, new.description_lower);
END;
CREATE TRIGGER markets_search_delete AFTER DELETE ON markets BEGIN
    INSERT INTO markets_search (markets_search, rowid, question_lower, description_lower)
        VALUES ('delete', old.rowid, old.question_lower, old.description_lower);
END;
CREATE TRIGGER markets_search_update AFTER UPDATE OF question_lower, description_lower ON markets BEGIN
    INSERT INTO markets_search (markets_search, rowid, question_lower, description_lower)
        VALUES ('delete', old.rowid, old.question_lower, old.description_lower);
    INSERT INTO markets_search (rowid, question_lower, description_lower)
        VALUES (new.rowid, new.question_lower, new.description_lower);
END;
