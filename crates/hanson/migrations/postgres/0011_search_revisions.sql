-- Search pages are assembled from cached parts. `revision` changes with every update of the
-- market row, so a cached rendering is reused only while the revision read alongside it is
-- unchanged. Every write to a market's outcomes also updates its row; a claim, which drains
-- the pool and nothing else, bumps the revision itself. `data_version` stays
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
