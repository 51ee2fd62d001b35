//! Entry points of the cargo-fuzz targets (`crates/hanson/fuzz`): the request parsers as a
//! request reaches them, each with the properties it must keep whatever the bytes. Not an API.

use axum::http::{HeaderMap, HeaderValue};

use crate::api::extract::parse_json;
use crate::api::streams::{resume_point, ResumeQuery};
use crate::domain::market_input::CreateMarketInput;
use crate::domain::money::{parse_amount, MAX_INPUT_AMOUNT};
use crate::domain::session::LoginInput;
use crate::domain::webhook::EndpointInput;
use crate::events::Start;

/// A wei or share amount: accepted only as the canonical text of a value up to 10^36.
pub fn amount(text: &str) {
    if let Ok(value) = parse_amount(text) {
        assert!(value <= MAX_INPUT_AMOUNT, "{text} accepted above the limit");
        assert_eq!(value.to_string(), text, "accepted a non-canonical amount");
    }
}

/// Fee percentages and price bounds: accepted only in range, and the same value for the
/// same digits however they are padded.
pub fn decimals(text: &str) {
    if let Some(units) = crate::domain::fees::parse_percentage(text) {
        assert!(units < 1_000 * crate::domain::fees::PERCENT_UNITS, "{text}: {units}");
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let expected: u64 = int.parse::<u64>().unwrap() * 10_000 + format!("{frac:0<4}").parse::<u64>().unwrap();
        assert_eq!(u64::from(units), expected, "{text}");
    }
    if let Some(price) = crate::domain::trade::bounds::parse_price_bound(text) {
        assert!(price.raw() > 0 && price.raw() < 10u128.pow(36), "{text}: {}", price.raw());
        assert!(text.starts_with("0.") && text.len() <= 20, "{text}");
    }
}

/// A request body through the strict JSON extractor into a few request types: an answer
/// (a value or a 4xx error), never a panic; a body that is not an object is refused.
pub fn strict_json(bytes: &[u8]) {
    let object = serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| v.is_object());
    let outcomes = [
        parse_json::<LoginInput>(bytes).map(drop),
        parse_json::<CreateMarketInput>(bytes).map(|input| drop(input.validate("00000000-0000-4000-8000-000000000000"))),
        parse_json::<EndpointInput>(bytes).map(drop),
    ];
    for outcome in outcomes {
        match outcome {
            Ok(()) => assert!(object, "accepted a body that is not a JSON object"),
            Err(e) => assert!(e.status().as_u16() < 500, "{e}"),
        }
    }
}

/// A stream's resume point from `Last-Event-ID` (raw header bytes, if sent) and `after_seq`
/// (if not empty): a seq is taken only from plain digits, the header winning; anything else
/// is a 422.
pub fn resume_id(header: Option<&[u8]>, query: &str) {
    let mut headers = HeaderMap::new();
    // None: no header; Some(None): a header that is not text.
    let header_text = match header.map(HeaderValue::from_bytes) {
        Some(Ok(value)) => {
            let text = value.to_str().ok().map(|t| t.trim().to_string());
            headers.insert("last-event-id", value);
            Some(text)
        }
        // Bytes no header can carry never reach the service.
        Some(Err(_)) | None => None,
    };
    let query_text = (!query.is_empty()).then(|| query.to_string());
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && t.parse::<i64>().is_ok();
    let result = resume_point(&headers, &ResumeQuery { after_seq: query_text.clone() });
    let header_ok = match &header_text {
        None => true,
        Some(Some(t)) => digits(t),
        Some(None) => false,
    };
    let query_ok = query_text.as_deref().is_none_or(digits);
    match result {
        Ok(Start::After(seq)) => {
            assert!(seq >= 0 && header_ok && query_ok);
            let from = match &header_text {
                Some(Some(t)) => t.as_str(),
                _ => query,
            };
            assert_eq!(Some(seq), from.parse::<i64>().ok(), "{from}");
        }
        Ok(Start::Snapshot) => assert!(header_text.is_none() && query_text.is_none()),
        Err(e) => {
            assert!(!(header_ok && query_ok), "refused good resume ids: {header:?} {query:?}");
            assert_eq!(e.status().as_u16(), 422);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The committed corpus (`crates/hanson/fuzz/corpus/`) through every entry point, so the
    //! properties hold in every `cargo test`, without nightly or cargo-fuzz.

    fn corpus(target: &str) -> Vec<Vec<u8>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten().map(|e| e.path()).collect();
        files.sort();
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    }

    #[test]
    fn the_corpus_keeps_every_property() {
        for input in corpus("amount") {
            super::amount(std::str::from_utf8(&input).unwrap_or_default());
        }
        for input in corpus("decimals") {
            super::decimals(std::str::from_utf8(&input).unwrap_or_default());
        }
        for input in corpus("strict_json") {
            super::strict_json(&input);
        }
        for input in corpus("resume_id") {
            let (header, query) = match input.iter().position(|b| *b == 0) {
                Some(at) => (Some(&input[..at]), &input[at + 1..]),
                None => (None, &input[..]),
            };
            super::resume_id(header, std::str::from_utf8(query).unwrap_or_default());
        }
    }
}
