-- Mirrors migrations/sqlite/0002_auth.sql (types and collation as in 0001_foundation.sql).

-- Login nonces: single use, bound to (provider, lower-cased address), short-lived.
CREATE TABLE nonces (
    nonce       TEXT COLLATE "C" PRIMARY KEY,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES providers(id),
    address     TEXT COLLATE "C" NOT NULL,
    expires_at  BIGINT NOT NULL,
    consumed_at BIGINT
);
CREATE INDEX nonces_expiry ON nonces(expires_at);

CREATE TABLE sessions (
    id          TEXT COLLATE "C" PRIMARY KEY,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES providers(id),
    wallet_id   TEXT COLLATE "C" NOT NULL REFERENCES wallets(id),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,   -- end of the refresh window
    revoked_at  BIGINT
);
CREATE INDEX sessions_wallet ON sessions(wallet_id);

-- Refresh tokens are stored as SHA-256 hashes. A spent token presented again revokes its session.
CREATE TABLE refresh_tokens (
    token_hash  BYTEA PRIMARY KEY,
    session_id  TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
    created_at  BIGINT NOT NULL,
    spent_at    BIGINT
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

-- Alt-network account keys, filled by providers.
CREATE TABLE alt_keys (
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES providers(id),
    address     TEXT COLLATE "C" NOT NULL,
    key_id      BIGINT NOT NULL,
    public_key  TEXT COLLATE "C" NOT NULL,
    sign_algo   TEXT COLLATE "C" NOT NULL,
    hash_algo   TEXT COLLATE "C" NOT NULL,
    revoked     BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (provider_id, address, key_id)
);
