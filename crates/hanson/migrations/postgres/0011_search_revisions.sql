-- Search pages are assembled from cached parts. `revision` changes with everything a search
-- result shows of a market: its row, its outcomes and its pool balance, so a cached rendering
-- is reused only while the revision read alongside it is unchanged. `data_version` stays
-- NULL here: a counter every trade bumps would serialize all concurrent trades on its row, so
-- PostgreSQL reads the revisions of every page and does not cache volume-sorted lists.
ALTER TABLE markets ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
ALTER TABLE market_set_version ADD COLUMN data_version BIGINT;
CREATE FUNCTION next_market_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.revision = OLD.revision THEN
        NEW.revision := OLD.revision + 1;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER market_revision BEFORE UPDATE ON markets FOR EACH ROW EXECUTE FUNCTION next_market_revision();
CREATE FUNCTION bump_outcome_market_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE markets SET revision = revision + 1 WHERE id = NEW.market_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER outcome_revision AFTER INSERT OR UPDATE ON outcomes
    FOR EACH ROW EXECUTE FUNCTION bump_outcome_market_revision();
CREATE FUNCTION bump_pool_market_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE markets SET revision = revision + 1 WHERE id = NEW.owner_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER pool_revision AFTER UPDATE OF balance ON accounts
    FOR EACH ROW WHEN (NEW.kind = 'pool') EXECUTE FUNCTION bump_pool_market_revision();
