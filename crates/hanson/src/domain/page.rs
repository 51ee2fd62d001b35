//! The one pagination and sorting type every search uses (`docs/api.md`, "Lists").

use serde::{Deserialize, Serialize};

use crate::error::Validator;

pub(crate) const DEFAULT_PER_PAGE: i64 = 20;
pub(crate) const MAX_PER_PAGE: i64 = 100;
/// The last page that can be asked for: the rows before any page, up to `MAX_PER_PAGE` per
/// page, stay countable in an i64 (a page whose offset overflowed wrapped around to an early one).
pub(crate) const MAX_PAGE: i64 = i64::MAX / MAX_PER_PAGE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: i64,
    pub per_page: i64,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest { page: 1, per_page: DEFAULT_PER_PAGE }
    }
}

impl Default for Sort {
    fn default() -> Self {
        Sort { field: "created_at".into(), direction: Direction::Desc }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

impl Direction {
    pub(crate) fn as_sql(self) -> &'static str {
        match self {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        }
    }

    /// The SQL comparison that keeps the keys at or past a page's first key, in this order.
    pub(crate) fn at_or_past_sql(self) -> &'static str {
        match self {
            Direction::Asc => ">=",
            Direction::Desc => "<=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sort {
    pub(crate) field: String,
    pub(crate) direction: Direction,
}

/// The filters of one search endpoint, and the fields it sorts by: the first is the default,
/// sorted newest (largest) first by default.
pub(crate) trait Searchable {
    const SORT_FIELDS: &'static [&'static str];
}

/// The common search request: `{filters, pagination: {page, per_page}, sort: {field, direction}}`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct SearchRequest<F: Searchable> {
    /// Nullable, except where an endpoint requires filters (see `api::openapi::refine_request_schemas`).
    #[serde(default)]
    pub(crate) filters: Option<F>,
    #[serde(default)]
    pub(crate) pagination: Option<PaginationInput>,
    #[serde(default)]
    pub(crate) sort: Option<SortInput<F>>,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub(crate) struct PaginationInput {
    #[schema(minimum = 1, maximum = 92233720368547758i64, default = 1)]
    pub(crate) page: Option<i64>,
    #[schema(minimum = 1, maximum = 100, default = 20)]
    pub(crate) per_page: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct SortInput<F: Searchable> {
    pub(crate) field: Option<SortField<F>>,
    #[schema(value_type = Option<String>, pattern = "^(asc|desc)$", default = "desc")]
    pub(crate) direction: Option<String>,
}

/// A sort field as sent; checked against the endpoint's whitelist by [`SearchRequest::paging`]
/// (unknown: 422), and documented as that whitelist.
#[derive(Debug)]
pub(crate) struct SortField<F>(pub String, std::marker::PhantomData<F>);

impl<'de, F> Deserialize<'de> for SortField<F> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|text| SortField(text, std::marker::PhantomData))
    }
}

// utoipa composes the schemas of generic fields through ComposeSchema (what its derive
// implements for generic types); PartialSchema follows from it.
impl<F: Searchable> utoipa::__dev::ComposeSchema for SortField<F> {
    fn compose(_: Vec<utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>>) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(F::SORT_FIELDS.iter().copied()))
            .default(Some(serde_json::Value::from(F::SORT_FIELDS[0])))
            .into()
    }
}

impl<F: Searchable> utoipa::ToSchema for SortField<F> {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SortField")
    }
}

impl<F: Searchable> SearchRequest<F> {
    /// Validates paging and sorting against the endpoint's sort whitelist.
    pub(crate) fn paging(&self, v: &mut Validator) -> (PageRequest, Sort) {
        let sort_fields = F::SORT_FIELDS;
        let pagination = self.pagination.as_ref();
        let page = pagination.and_then(|p| p.page).unwrap_or(1);
        let per_page = pagination.and_then(|p| p.per_page).unwrap_or(DEFAULT_PER_PAGE);
        v.check(page >= 1, "pagination.page", "must be at least 1");
        v.check((1..=MAX_PER_PAGE).contains(&per_page), "pagination.per_page", "must be between 1 and 100");
        v.check(page <= MAX_PAGE, "pagination.page", "must be at most 92233720368547758");
        let sort = self.sort.as_ref();
        let field = sort.and_then(|s| s.field.as_ref()).map_or_else(|| sort_fields[0].to_string(), |f| f.0.clone());
        if !sort_fields.contains(&field.as_str()) {
            v.push("sort.field", format!("must be one of: {}", sort_fields.join(", ")));
        }
        let direction = match sort.and_then(|s| s.direction.as_deref()) {
            None | Some("desc") => Direction::Desc,
            Some("asc") => Direction::Asc,
            Some(_) => {
                v.push("sort.direction", "must be asc or desc");
                Direction::Desc
            }
        };
        (PageRequest { page: page.clamp(1, MAX_PAGE), per_page: per_page.clamp(1, MAX_PER_PAGE) }, Sort { field, direction })
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Pagination {
    pub page: i64,
    pub per_page: i64,
    pub total: i64,
    pub total_pages: i64,
}

/// One page of a list, with exact totals.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub pagination: Pagination,
}

impl<T> Page<T> {
    pub(crate) fn new(data: Vec<T>, request: PageRequest, total: i64) -> Self {
        let total_pages = (total + request.per_page - 1) / request.per_page;
        Page { data, pagination: Pagination { page: request.page, per_page: request.per_page, total, total_pages } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_last_page_is_max_page_and_its_offset_fits() {
        assert_eq!(MAX_PAGE, 92_233_720_368_547_758);
        assert!((MAX_PAGE - 1).checked_mul(MAX_PER_PAGE).is_some());
    }
}
