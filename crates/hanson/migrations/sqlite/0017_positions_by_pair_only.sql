-- A wallet's positions are found through the unique (wallet_id, outcome_id) index as well,
-- and each new position writes one index entry less. Mirrors migrations/postgres/0017.
DROP INDEX positions_wallet;
