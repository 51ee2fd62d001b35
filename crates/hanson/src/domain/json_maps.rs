//! The free-form JSON objects markets, outcomes and settlements carry, each a named schema of
//! the OpenAPI document, so a generated client has one type for each (written inline, every
//! field that holds one would get a type of its own).

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// An object whose values are all of type `values`, or anything (said explicitly, since a bare
/// `type: object` reads as "no properties" to some generators).
fn object(description: &str, values: Option<Type>) -> RefOr<Schema> {
    let values = match values {
        Some(kind) => AdditionalProperties::RefOr(RefOr::T(Schema::Object(ObjectBuilder::new().schema_type(kind).build()))),
        None => AdditionalProperties::FreeForm(true),
    };
    ObjectBuilder::new().schema_type(Type::Object).description(Some(description)).additional_properties(Some(values)).into()
}

/// Image URLs by name (`images` of a market or an outcome).
pub(crate) struct Images;

impl utoipa::PartialSchema for Images {
    fn schema() -> RefOr<Schema> {
        object("Image URLs by name, e.g. {\"logo\": \"https://...\"}.", Some(Type::String))
    }
}

impl utoipa::ToSchema for Images {}

/// A market's free-form `metadata`.
pub(crate) struct Metadata;

impl utoipa::PartialSchema for Metadata {
    fn schema() -> RefOr<Schema> {
        object("Free-form JSON. `category` and `resolution_source`, when given, are strings; markets are searched by `category`.", None)
    }
}

impl utoipa::ToSchema for Metadata {}

/// String values by name: what a provider records with a resolution or a cancellation.
pub(crate) struct StringMap;

impl utoipa::PartialSchema for StringMap {
    fn schema() -> RefOr<Schema> {
        object("String values by name.", Some(Type::String))
    }
}

impl utoipa::ToSchema for StringMap {}
