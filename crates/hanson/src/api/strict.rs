//! Strict reading of a parsed JSON body into request types: a struct is read only from a
//! JSON object. serde's derive also accepts an array of the fields in order, so
//! `"pagination": [1, 2]` used to be taken as `{page: 1, per_page: 2}`; here it is refused,
//! naming the field. An integer field also takes a number written with a fraction or an
//! exponent whose value is a whole number (`1.0`, `1e2`): JSON Schema's `integer`, which the
//! OpenAPI document declares, is any number without a fractional part. Everything else reads
//! exactly as serde_json's `Value` reads.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde_json::Value;

pub(crate) struct Strict<'a>(pub &'a Value);

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(_) => Unexpected::Other("a number"),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

impl<'de> Deserializer<'de> for Strict<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Items(items.iter())),
            Value::Object(map) => visitor.visit_map(Fields(map.iter(), None)),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Fields(map.iter(), None)),
            other => Err(de::Error::invalid_type(unexpected(other), &"an object")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(_) | Value::Object(_) => visitor.visit_newtype_struct(self),
            // Scalars as serde_json reads them (its arbitrary-precision numbers included).
            other => other.deserialize_newtype_struct(name, visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.integer(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i128 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

impl<'de> Strict<'de> {
    /// A whole number written as `1.0` or `1e2` is read as the integer it is; anything else
    /// reads as before (a fraction is still refused by the integer type's visitor).
    fn integer<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        if let Value::Number(n) = self.0 {
            if n.as_i64().is_none() && n.as_u64().is_none() {
                if let Some(i) = whole_number(&n.to_string()) {
                    return match (u64::try_from(i), i64::try_from(i)) {
                        (Ok(u), _) => visitor.visit_u64(u),
                        (_, Ok(i)) => visitor.visit_i64(i),
                        _ => visitor.visit_i128(i),
                    };
                }
            }
        }
        self.deserialize_any(visitor)
    }
}

/// The value of a JSON number literal if it is a whole number within i64 or u64 (as an i128
/// here, exactly: no float is involved), e.g. `1.0`, `-2.50e1`, `1e2`, `0.0e999`.
fn whole_number(literal: &str) -> Option<i128> {
    let (negative, unsigned) = match literal.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int_part}{frac_part}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some(0);
    }
    // The position of the decimal point within `digits` (leading zeros removed).
    let leading_zeros = int_part.len() + frac_part.len() - digits.len();
    let point = (int_part.len() as i64).checked_sub(leading_zeros as i64)?.checked_add(exponent)?;
    if point > 20 {
        return None;
    }
    let point = usize::try_from(point).ok()?;
    if point < digits.len() && !digits[point..].bytes().all(|b| b == b'0') {
        return None;
    }
    let whole = if point <= digits.len() { digits[..point].to_string() } else { format!("{digits}{}", "0".repeat(point - digits.len())) };
    let magnitude: i128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let value = if negative { -magnitude } else { magnitude };
    (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&value).then_some(value)
}

struct Items<'a>(std::slice::Iter<'a, Value>);

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        self.0.next().map(|v| seed.deserialize(Strict(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Fields<'a>(serde_json::map::Iter<'a>, Option<&'a Value>);

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        match self.0.next() {
            Some((key, value)) => {
                self.1 = Some(value);
                seed.deserialize(de::value::BorrowedStrDeserializer::<serde_json::Error>::new(key.as_str())).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let value = self.1.take().ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(Strict(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn whole_numbers_with_a_fraction_or_exponent_are_integers() {
        for (literal, value) in [
            ("1.0", Some(1)),
            ("-2.50e1", Some(-25)),
            ("1e2", Some(100)),
            ("1E+2", Some(100)),
            ("0.0e999", Some(0)),
            ("0.000", Some(0)),
            ("-0.0", Some(0)),
            ("120e-1", Some(12)),
            ("0.5e1", Some(5)),
            ("9223372036854775807.0", Some(i128::from(i64::MAX))),
            ("18446744073709551615.0", Some(i128::from(u64::MAX))),
            ("18446744073709551616.0", None),
            ("-9223372036854775809.0", None),
            ("1.5", None),
            ("15e-1", None),
            ("1e-999", None),
            ("1e999", None),
        ] {
            assert_eq!(whole_number(literal), value, "{literal}");
        }
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Paging {
        page: Option<i64>,
        per_page: Option<u8>,
    }

    fn read(json: &str) -> Result<Paging, serde_json::Error> {
        let value: Value = serde_json::from_str(json).unwrap();
        Paging::deserialize(Strict(&value))
    }

    #[test]
    fn integer_fields_take_whole_numbers_and_refuse_fractions() {
        assert_eq!(read(r#"{"page": 2.0, "per_page": 1e1}"#).unwrap(), Paging { page: Some(2), per_page: Some(10) });
        assert_eq!(read(r#"{"page": -3, "per_page": null}"#).unwrap(), Paging { page: Some(-3), per_page: None });
        assert!(read(r#"{"page": 2.5}"#).is_err());
        assert!(read(r#"{"per_page": 256.0}"#).is_err(), "out of the field's range");
        assert!(read(r#"{"page": "2"}"#).is_err());
        assert!(read(r#"{"page": [2]}"#).is_err());
    }
}
