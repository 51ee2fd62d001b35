-- One position per (wallet, outcome).
CREATE TABLE positions (
    id              TEXT PRIMARY KEY,
    market_id       TEXT NOT NULL REFERENCES markets(id),
    outcome_id      TEXT NOT NULL REFERENCES outcomes(id),
    wallet_id       TEXT NOT NULL REFERENCES wallets(id),
    shares          TEXT NOT NULL,
    total_invested  TEXT NOT NULL,          -- net cost basis (average-cost method on sells)
    status          TEXT NOT NULL,          -- active | closed | won | lost | claimed | refunded
    claimed_amount  TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (wallet_id, outcome_id)
);
CREATE INDEX positions_market ON positions(market_id, status);
CREATE INDEX positions_wallet ON positions(wallet_id, created_at);

-- Trade records, in the order they were applied (`seq`).
CREATE TABLE trades (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    market_id        TEXT NOT NULL REFERENCES markets(id),
    outcome_id       TEXT NOT NULL REFERENCES outcomes(id),
    wallet_id        TEXT NOT NULL REFERENCES wallets(id),
    wallet_address   TEXT NOT NULL,
    session_id       TEXT NOT NULL,
    transaction_type TEXT NOT NULL,          -- buy | sell
    amount           TEXT NOT NULL,          -- buy: gross amount; sell: gross proceeds
    net_amount       TEXT NOT NULL,          -- buy: amount - fee; sell: proceeds - fee
    fee              TEXT NOT NULL,
    shares           TEXT NOT NULL,
    price            TEXT NOT NULL,          -- average price, 18-digit decimal
    created_at       INTEGER NOT NULL
);
CREATE INDEX trades_market ON trades(market_id, created_at, seq);
CREATE INDEX trades_wallet ON trades(wallet_address, created_at, seq);
CREATE INDEX trades_time ON trades(created_at, seq);

-- The price of every outcome after every trade.
CREATE TABLE price_points (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    market_id   TEXT NOT NULL REFERENCES markets(id),
    outcome_id  TEXT NOT NULL REFERENCES outcomes(id),
    price       TEXT NOT NULL,               -- 10^-36 units, exact
    volume      TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX price_points_market ON price_points(market_id, at, seq);
CREATE INDEX price_points_outcome ON price_points(outcome_id, at, seq);

-- Settlement terms: a winning share pays floor(shares * payout_num / payout_den);
-- a cancelled position is refunded floor(total_invested * payout_num / payout_den).
ALTER TABLE markets ADD COLUMN payout_num TEXT;
ALTER TABLE markets ADD COLUMN payout_den TEXT;
ALTER TABLE markets ADD COLUMN resolver_wallet_id TEXT;
ALTER TABLE markets ADD COLUMN settlement TEXT;         -- the resolve/cancel response, as JSON

-- Responses to requests carrying an Idempotency-Key, per principal, kept 24 hours.
CREATE TABLE idempotency_keys (
    principal     TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,
    status        INTEGER NOT NULL,
    response      TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
