//! Row ids: time-ordered UUIDs (v7), so inserts append to the end of their indexes instead
//! of touching a random page each (under load, every dirty page is a WAL frame to write).
//! Provider and session ids stay random (v4): nothing orders them and nothing should be
//! inferred from them.

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
