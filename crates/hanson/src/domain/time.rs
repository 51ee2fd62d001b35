//! Timestamps: microseconds since the Unix epoch inside, ISO 8601 UTC at the edge.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub type Micros = i64;

pub fn now_micros() -> Micros {
    let now = OffsetDateTime::now_utc();
    (now.unix_timestamp_nanos() / 1_000) as Micros
}

/// `2026-11-21T05:45:07.123456Z`: fixed width so that text order is time order.
pub fn format_micros(micros: Micros) -> String {
    let dt = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        dt.year(),
        u8::from(dt.month()),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        dt.microsecond()
    )
}

/// Parses an RFC 3339 timestamp with any offset; sub-microsecond digits are dropped.
pub fn parse_timestamp(text: &str) -> Option<Micros> {
    let dt = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    let micros = dt.unix_timestamp_nanos().div_euclid(1_000);
    Micros::try_from(micros).ok()
}

/// A point in time as the API shows it: RFC 3339 in UTC with microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub Micros);

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_micros(self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse_timestamp(&text).map(Timestamp).ok_or_else(|| serde::de::Error::custom("not an RFC 3339 timestamp"))
    }
}

impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        super::money::string_schema(None, Some("date-time"), "RFC 3339 time in UTC", "2026-01-01T00:00:00.000000Z")
    }
}

impl utoipa::ToSchema for Timestamp {}

pub fn serialize<S: serde::Serializer>(micros: &Micros, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_micros(*micros))
}

pub fn serialize_opt<S: serde::Serializer>(micros: &Option<Micros>, s: S) -> Result<S::Ok, S::Error> {
    match micros {
        Some(m) => s.serialize_str(&format_micros(*m)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_in_utc() {
        let micros = parse_timestamp("2026-11-21T07:45:07.5+02:00").unwrap();
        assert_eq!(format_micros(micros), "2026-11-21T05:45:07.500000Z");
        assert_eq!(parse_timestamp("2026-11-21"), None);
        assert_eq!(parse_timestamp("yesterday"), None);
    }
}
