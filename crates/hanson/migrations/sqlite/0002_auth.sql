-- Login nonces: single use, bound to (provider, lower-cased address), short-lived.
CREATE TABLE nonces (
    nonce       TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    address     TEXT NOT NULL,
    expires_at  INTEGER NOT NULL,
    consumed_at INTEGER
);
CREATE INDEX nonces_expiry ON nonces(expires_at);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    wallet_id   TEXT NOT NULL REFERENCES wallets(id),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,   -- end of the refresh window
    revoked_at  INTEGER
);
CREATE INDEX sessions_wallet ON sessions(wallet_id);

-- Refresh tokens are stored as SHA-256 hashes. A spent token presented again revokes its session.
CREATE TABLE refresh_tokens (
    token_hash  BLOB PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    created_at  INTEGER NOT NULL,
    spent_at    INTEGER
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

-- Alt-network account keys, filled by providers.
CREATE TABLE alt_keys (
    provider_id TEXT NOT NULL REFERENCES providers(id),
    address     TEXT NOT NULL,
    key_id      INTEGER NOT NULL,
    public_key  TEXT NOT NULL,
    sign_algo   TEXT NOT NULL,
    hash_algo   TEXT NOT NULL,
    revoked     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (provider_id, address, key_id)
);
