-- Money and share amounts are canonical decimal TEXT: exact for any u128.
-- Timestamps are INTEGER microseconds since the Unix epoch (UTC).

CREATE TABLE providers (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

-- Only a SHA-256 of each API key is kept; one live key per provider.
CREATE TABLE api_keys (
    key_hash    BLOB PRIMARY KEY,
    provider_id TEXT NOT NULL UNIQUE REFERENCES providers(id),
    created_at  INTEGER NOT NULL
);

CREATE TABLE tokens (
    id          TEXT PRIMARY KEY,
    symbol      TEXT NOT NULL,
    name        TEXT NOT NULL,
    decimals    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE wallets (
    id              TEXT PRIMARY KEY,
    provider_id     TEXT NOT NULL REFERENCES providers(id),
    address         TEXT NOT NULL,          -- lower-cased
    wallet_type     TEXT NOT NULL,          -- evm | alt
    alt_evm_address TEXT,
    created_at      INTEGER NOT NULL,
    UNIQUE (provider_id, address)
);

-- One row per ledger account: wallet:<wallet>:<token>, treasury:<provider>:<token>,
-- pool:<market>, platform:<token>.
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    owner_id    TEXT,
    token_id    TEXT NOT NULL REFERENCES tokens(id),
    balance     TEXT NOT NULL
);

-- Double-entry ledger: every balance change is one row moving `amount` from one account to
-- another. A NULL side is the outside world (deposits come from it, withdrawals go to it).
CREATE TABLE transfers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL,
    from_account TEXT REFERENCES accounts(id),
    to_account   TEXT REFERENCES accounts(id),
    token_id     TEXT NOT NULL,
    amount       TEXT NOT NULL,
    reference_id TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX transfers_from ON transfers(from_account);
CREATE INDEX transfers_to ON transfers(to_account);

-- Deposits and withdrawals are idempotent by the provider's external reference.
CREATE TABLE external_transfers (
    provider_id  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    reference    TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    response     TEXT NOT NULL,
    PRIMARY KEY (provider_id, kind, reference)
);

CREATE TABLE markets (
    id                TEXT PRIMARY KEY,
    provider_id       TEXT NOT NULL REFERENCES providers(id),
    game_id           TEXT,
    question          TEXT NOT NULL,
    question_lower    TEXT NOT NULL,
    description       TEXT NOT NULL,
    description_lower TEXT NOT NULL,
    category          TEXT,
    resolution_source TEXT,
    tags              TEXT NOT NULL,
    images            TEXT NOT NULL,
    metadata          TEXT NOT NULL,
    pricing_method    TEXT NOT NULL,
    token_id          TEXT NOT NULL REFERENCES tokens(id),
    min_bet           TEXT NOT NULL,
    max_bet           TEXT NOT NULL,
    liquidity         TEXT NOT NULL,
    b                 TEXT NOT NULL,
    starts_at         INTEGER NOT NULL,
    ends_at           INTEGER NOT NULL,
    creator_wallet_id TEXT NOT NULL REFERENCES wallets(id),
    creator_fee       INTEGER NOT NULL,     -- units of 0.0001 percent
    platform_fee      INTEGER NOT NULL,
    status            TEXT NOT NULL,        -- active | resolved | cancelled (closed is derived)
    total_volume      TEXT NOT NULL,
    trade_count       INTEGER NOT NULL,
    winning_outcome_id TEXT,
    settled_at        INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX markets_created ON markets(created_at DESC, id DESC);
CREATE INDEX markets_provider ON markets(provider_id, created_at DESC, id DESC);
CREATE INDEX markets_category ON markets(category, created_at DESC, id DESC);
CREATE INDEX markets_status ON markets(status, ends_at);

CREATE TABLE outcomes (
    id            TEXT PRIMARY KEY,
    market_id     TEXT NOT NULL REFERENCES markets(id),
    outcome_index INTEGER NOT NULL,
    title         TEXT NOT NULL,
    description   TEXT NOT NULL,
    images        TEXT NOT NULL,
    total_shares  TEXT NOT NULL,
    total_volume  TEXT NOT NULL,
    UNIQUE (market_id, outcome_index)
);
CREATE INDEX outcomes_market ON outcomes(market_id, outcome_index);

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
