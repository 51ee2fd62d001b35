-- A wallet's positions are found through the unique (wallet_id, outcome_id) index as well.
-- With a second index leading with wallet_id, a trade batch's generic plan for its positions
-- read, made while the table was young, probed (wallet_id, created_at) and filtered every
-- position of the wallet by outcome: 4,000 buffers and 2.4 ms of a many_markets batch
-- (`auto_explain`, README "Performance"). Each new position also wrote one index entry less.
-- Mirrors migrations/sqlite/0017.
DROP INDEX positions_wallet;
