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
    let mut text = [0u8; FORMATTED_LEN];
    String::from(write_micros(micros, &mut text))
}

/// Length of [`format_micros`]'s text for years 0 to 9999.
const FORMATTED_LEN: usize = 27;
/// Microseconds of the first instant of year 10000, past which the year takes five digits.
const YEAR_10000: Micros = 253_402_300_800_000_000;
/// Microseconds of 0000-01-01T00:00:00Z.
const YEAR_0: Micros = -62_167_219_200_000_000;

/// Writes [`format_micros`]'s text into `text` without allocating; an instant outside years
/// 0 to 9999 (none the API accepts) is written as the nearest one. Every event envelope
/// and response carries several timestamps, and `format!` showed in the profiles of SQLite's
/// writer and PostgreSQL's batch thread.
fn write_micros(micros: Micros, text: &mut [u8; FORMATTED_LEN]) -> &str {
    let micros = micros.clamp(YEAR_0, YEAR_10000 - 1);
    let days = micros.div_euclid(86_400_000_000);
    let of_day = micros.rem_euclid(86_400_000_000);
    let (year, month, day) = civil_from_days(days);
    let (second, micro) = (of_day / 1_000_000, of_day % 1_000_000);
    let mut at = 0;
    let mut put = |mut value: i64, width: usize, after: u8| {
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
        at += width;
        if after != 0 {
            text[at] = after;
            at += 1;
        }
    };
    put(year, 4, b'-');
    put(month, 2, b'-');
    put(day, 2, b'T');
    put(second / 3600, 2, b':');
    put(second / 60 % 60, 2, b':');
    put(second % 60, 2, b'.');
    put(micro, 6, b'Z');
    // Only ASCII digits and separators were written.
    std::str::from_utf8(text).unwrap_or_default()
}

/// The proleptic Gregorian (year, month, day) of a day counted from 1970-01-01
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
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
        s.serialize_str(write_micros(self.0, &mut [0u8; FORMATTED_LEN]))
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

pub(crate) fn serialize<S: serde::Serializer>(micros: &Micros, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_micros(*micros))
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

    /// The text `time`'s own calendar gives, as `format_micros` once built it.
    fn formatted_by_time(micros: Micros) -> String {
        let dt = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000).unwrap();
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

    #[test]
    fn formats_exactly_at_the_calendar_edges() {
        let cases = [
            (0, "1970-01-01T00:00:00.000000Z"),
            (-1, "1969-12-31T23:59:59.999999Z"),
            (951_782_400_000_000, "2000-02-29T00:00:00.000000Z"),
            (951_868_799_999_999, "2000-02-29T23:59:59.999999Z"),
            (4_107_542_400_000_000, "2100-03-01T00:00:00.000000Z"),
            (YEAR_10000 - 1, "9999-12-31T23:59:59.999999Z"),
            (YEAR_0, "0000-01-01T00:00:00.000000Z"),
            // Outside four-digit years the text stays fixed width, at the nearest one.
            (YEAR_10000, "9999-12-31T23:59:59.999999Z"),
            (Micros::MIN, "0000-01-01T00:00:00.000000Z"),
        ];
        for (micros, text) in cases {
            assert_eq!(format_micros(micros), text, "{micros}");
            assert_eq!(serde_json::to_string(&Timestamp(micros)).unwrap(), format!("\"{text}\""));
        }
    }

    #[test]
    fn formats_as_the_time_crate_does_across_the_years() {
        // Every day boundary, and a time of day, for a day every 997 from year 0 to 9999,
        // and every day around the turns of 1900, 2000 and 2100.
        let day = 86_400_000_000;
        let spread = (YEAR_0 / day..YEAR_10000 / day).step_by(997);
        let turns = [-25_567, 10_957, 47_482].into_iter().flat_map(|d: i64| d - 400..d + 400);
        for d in spread.chain(turns) {
            for micros in [d * day, d * day - 1, d * day + 45_296_789_012] {
                if (YEAR_0..YEAR_10000).contains(&micros) {
                    assert_eq!(format_micros(micros), formatted_by_time(micros), "{micros}");
                }
            }
        }
    }
}
