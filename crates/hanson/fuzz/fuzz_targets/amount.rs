//! `hanson::fuzzing::amount` on any UTF-8 text: see its properties there.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        hanson::fuzzing::amount(text);
    }
});
