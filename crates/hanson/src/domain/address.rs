//! Wallet addresses: EVM (0x + 40 hex, EIP-55 checked when mixed-case) or alt-network
//! account addresses (0x + 16 hex). Stored lower-cased.

use wallet_auth::AddressError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WalletType {
    Evm,
    Alt,
}

impl WalletType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WalletType::Evm => "evm",
            WalletType::Alt => "alt",
        }
    }
}

pub(crate) fn parse_wallet_address(s: &str) -> Result<(String, WalletType), &'static str> {
    match s.len() {
        42 => match wallet_auth::parse_evm_address(s) {
            Ok(_) => Ok((s.to_ascii_lowercase(), WalletType::Evm)),
            Err(AddressError::BadChecksum) => Err("has an invalid EIP-55 checksum"),
            Err(_) => Err("must be 0x followed by 40 hex digits (EVM) or 16 hex digits (alt)"),
        },
        18 => match wallet_auth::parse_alt_address(s) {
            Ok(_) => Ok((s.to_ascii_lowercase(), WalletType::Alt)),
            Err(_) => Err("must be 0x followed by 40 hex digits (EVM) or 16 hex digits (alt)"),
        },
        _ => Err("must be 0x followed by 40 hex digits (EVM) or 16 hex digits (alt)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_lower_cased_and_typed() {
        assert_eq!(
            parse_wallet_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
            Ok(("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed".into(), WalletType::Evm))
        );
        assert_eq!(parse_wallet_address("0x01CF0E2F2F715450"), Ok(("0x01cf0e2f2f715450".into(), WalletType::Alt)));
        assert_eq!(parse_wallet_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"), Err("has an invalid EIP-55 checksum"));
        assert!(parse_wallet_address("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed").is_err());
        assert!(parse_wallet_address("0x123").is_err());
    }
}
