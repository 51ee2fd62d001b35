//! `hanson::fuzzing::strict_json` on any bytes as a request body: see its properties there.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hanson::fuzzing::strict_json(data);
});
