-- A nonce issued with a Sign-In with Ethereum message keeps that exact text: login checks the
-- signature, and any message the client presents, against it. NULL: the spec's message.
ALTER TABLE nonces ADD COLUMN message TEXT;
