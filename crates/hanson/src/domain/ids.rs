//! Row ids: time-ordered UUIDs (v7), so inserts append to the end of their indexes instead
//! of touching a random page each (under load, every dirty page is a WAL frame to write).
//! Provider and session ids stay random (v4): nothing orders them and nothing should be
//! inferred from them.

pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Ids that cross layers: a string that says which entity it names. Each derefs to `str`, so
/// SQL parameters and comparisons take it as it is.
macro_rules! id_type {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, utoipa::ToSchema)]
        #[serde(transparent)]
        pub(crate) struct $name(pub String);

        impl $name {
            // Generated for every id type; not every type's callers need it.
            #[allow(dead_code)]
            pub(crate) fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.0 == *other
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_string())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    )*};
}

id_type!(
    /// A market.
    MarketId,
    /// An outcome of a market.
    OutcomeId,
    /// A wallet's position in one outcome.
    PositionId,
    /// A wallet (one per provider and address).
    WalletId,
    /// A login session.
    SessionId,
    /// A provider (tenant).
    ProviderId,
    /// A bet, sale or claim.
    TradeId,
);

impl TradeId {
    pub(crate) fn new() -> TradeId {
        TradeId(new_id())
    }
}
