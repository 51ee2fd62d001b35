//! `hanson::fuzzing::resume_id`: the bytes up to the first NUL are the `Last-Event-ID`
//! header, the rest (if UTF-8) `after_seq`; no NUL, no header.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (header, query) = match data.iter().position(|b| *b == 0) {
        Some(at) => (Some(&data[..at]), &data[at + 1..]),
        None => (None, data),
    };
    if let Ok(query) = std::str::from_utf8(query) {
        hanson::fuzzing::resume_id(header, query);
    }
});
