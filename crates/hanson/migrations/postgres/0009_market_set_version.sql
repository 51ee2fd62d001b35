-- A counter bumped whenever the set of markets a search filter can select changes (a market
-- is added or removed, or a filtered column changes); cached search totals are kept per
-- version. Trades change only totals and timestamps, which no filter reads.
CREATE TABLE market_set_version (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  BIGINT NOT NULL
);
INSERT INTO market_set_version (id, version) VALUES (1, 0);
CREATE FUNCTION bump_market_set_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE market_set_version SET version = version + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER market_set_changed
    AFTER INSERT OR DELETE OR UPDATE OF provider_id, token_id, category, status, ends_at, question_lower, description_lower
    ON markets FOR EACH STATEMENT EXECUTE FUNCTION bump_market_set_version();
