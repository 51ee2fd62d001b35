//! Webhook endpoints of a provider, their deliveries, retries and test events (`docs/api.md`,
//! "Webhooks"). Another provider's endpoint is 404.

use std::net::IpAddr;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiJson, ApiPath, ApiQuery, ProviderAuth};
use super::openapi::{E401, E404, E409, E422};
use super::state::AppState;
use super::views::Message;
use crate::auth::random_bytes;
use crate::domain::page::{Page, PageRequest, DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE};
use crate::domain::time::now_micros;
use crate::domain::webhook::{
    check_description, check_event_types, check_url, is_public, new_secret, Delivery, DeliveryStatus, Endpoint, EndpointCreated,
    EndpointInput, EndpointPatch, RotatedSecret,
};
use crate::error::{Error, Result, Validator};
use crate::store::webhooks::{self as stored, EndpointChange, NewEndpoint};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_endpoint, list_endpoints))
        .routes(routes!(get_endpoint, update_endpoint, delete_endpoint))
        .routes(routes!(rotate_secret))
        .routes(routes!(list_deliveries))
        .routes(routes!(retry_delivery))
        .routes(routes!(send_test))
}

/// `?page=&per_page=` of the webhook lists.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    #[param(minimum = 1, maximum = 92233720368547758i64)]
    page: Option<i64>,
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<i64>,
}

impl ListQuery {
    fn page(&self, v: &mut Validator) -> PageRequest {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(DEFAULT_PER_PAGE);
        v.check((1..=MAX_PAGE).contains(&page), "page", "must be between 1 and 92233720368547758");
        v.check((1..=MAX_PER_PAGE).contains(&per_page), "per_page", "must be between 1 and 100");
        PageRequest { page: page.clamp(1, MAX_PAGE), per_page: per_page.clamp(1, MAX_PER_PAGE) }
    }
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveryQuery {
    #[param(minimum = 1, maximum = 92233720368547758i64)]
    page: Option<i64>,
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<i64>,
    /// Only deliveries with this status.
    #[param(value_type = Option<DeliveryStatus>)]
    status: Option<String>,
}

/// The URL's host must resolve to public addresses only (unless private ones are allowed);
/// the sender checks again at each attempt.
async fn check_address(url: &url::Url, allow_private: bool) -> Result<()> {
    if allow_private {
        return Ok(());
    }
    let refused = || Error::invalid("url", "must resolve to a public address");
    let addresses: Vec<IpAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
        Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
        Some(url::Host::Domain(name)) => {
            let lookup = tokio::net::lookup_host((name, url.port_or_known_default().unwrap_or(443)));
            match tokio::time::timeout(std::time::Duration::from_secs(5), lookup).await {
                Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                _ => return Err(Error::invalid("url", "does not resolve")),
            }
        }
        None => return Err(refused()),
    };
    if addresses.is_empty() || !addresses.iter().all(|ip| is_public(*ip)) {
        return Err(refused());
    }
    Ok(())
}

/// A checked URL, as it is stored.
async fn checked_url(app: &AppState, url: &str, v: &mut Validator) -> Result<Option<String>> {
    let allow_private = app.webhooks.allow_private;
    match check_url(url, allow_private, v) {
        Some(parsed) => {
            check_address(&parsed, allow_private).await?;
            Ok(Some(parsed.to_string()))
        }
        None => Ok(None),
    }
}

/// Create an endpoint; its signing secret is shown only in this answer (and on rotation).
#[utoipa::path(post, path = "/v1/providers/webhooks", tag = "Webhooks", security(("providerKey" = [])),
    request_body = EndpointInput,
    responses((status = 201, description = "The endpoint and its secret", body = EndpointCreated), E401, E422))]
async fn create_endpoint(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiJson(input): ApiJson<EndpointInput>,
) -> Result<(StatusCode, Json<EndpointCreated>)> {
    let mut v = Validator::default();
    let event_types = check_event_types(&input.event_types, &mut v);
    check_description(&input.description, &mut v);
    let url = checked_url(&app, &input.url, &mut v).await?;
    v.finish()?;
    let secret = new_secret(random_bytes::<32>());
    let new = NewEndpoint { url: url.unwrap_or_default(), event_types, description: input.description, secret: secret.clone() };
    let endpoint = app.store.write(move |c| stored::create_endpoint(c, &provider.id, new, now_micros())).await?;
    app.webhooks_wake.now();
    Ok((StatusCode::CREATED, Json(EndpointCreated { endpoint, secret })))
}

/// The provider's endpoints, oldest first.
#[utoipa::path(get, path = "/v1/providers/webhooks", tag = "Webhooks", security(("providerKey" = [])),
    params(ListQuery),
    responses((status = 200, description = "One page of endpoints", body = Page<Endpoint>), E401, E422))]
async fn list_endpoints(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<Page<Endpoint>>> {
    let mut v = Validator::default();
    let page = query.page(&mut v);
    v.finish()?;
    Ok(Json(app.store.read(move |c| stored::list_endpoints(c, &provider.id, page)).await?))
}

/// One endpoint (without its secret).
#[utoipa::path(get, path = "/v1/providers/webhooks/{webhook_id}", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path)),
    responses((status = 200, description = "The endpoint", body = Endpoint), E401, E404))]
async fn get_endpoint(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Endpoint>> {
    Ok(Json(app.store.read(move |c| stored::endpoint(c, &provider.id, &id)).await?))
}

/// Change an endpoint: the fields given change. Enabling it again clears why it was disabled.
#[utoipa::path(put, path = "/v1/providers/webhooks/{webhook_id}", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path)), request_body = EndpointPatch,
    responses((status = 200, description = "The endpoint after the change", body = Endpoint), E401, E404, E422))]
async fn update_endpoint(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<EndpointPatch>,
) -> Result<Json<Endpoint>> {
    let mut v = Validator::default();
    let event_types = patch.event_types.as_ref().map(|types| check_event_types(types, &mut v));
    check_description(&patch.description, &mut v);
    let url = match &patch.url {
        Some(url) => checked_url(&app, url, &mut v).await?,
        None => None,
    };
    v.finish()?;
    let enabling = patch.enabled == Some(true);
    let change = EndpointChange { url, event_types, description: patch.description, enabled: patch.enabled };
    let endpoint = app.store.write(move |c| stored::update_endpoint(c, &provider.id, &id, change, now_micros())).await?;
    if enabling {
        app.webhooks_wake.now();
    }
    Ok(Json(endpoint))
}

/// Delete an endpoint and its deliveries.
#[utoipa::path(delete, path = "/v1/providers/webhooks/{webhook_id}", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path)),
    responses((status = 200, description = "Deleted", body = Message), E401, E404))]
async fn delete_endpoint(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Message>> {
    app.store.write(move |c| stored::delete_endpoint(c, &provider.id, &id)).await?;
    Ok(Json(Message { message: "webhook endpoint deleted" }))
}

/// A new signing secret; for 24 hours deliveries are signed with the old one as well.
#[utoipa::path(post, path = "/v1/providers/webhooks/{webhook_id}/rotate-secret", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path)),
    responses((status = 200, description = "The new secret", body = RotatedSecret), E401, E404))]
async fn rotate_secret(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RotatedSecret>> {
    let secret = new_secret(random_bytes::<32>());
    let stored_secret = secret.clone();
    app.store.write(move |c| stored::rotate_secret(c, &provider.id, &id, &stored_secret, now_micros())).await?;
    Ok(Json(RotatedSecret { secret }))
}

/// The endpoint's deliveries, newest first.
#[utoipa::path(get, path = "/v1/providers/webhooks/{webhook_id}/deliveries", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path), DeliveryQuery),
    responses((status = 200, description = "One page of deliveries", body = Page<Delivery>), E401, E404, E422))]
async fn list_deliveries(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<DeliveryQuery>,
) -> Result<Json<Page<Delivery>>> {
    let mut v = Validator::default();
    let page = ListQuery { page: query.page, per_page: query.per_page }.page(&mut v);
    let status = match query.status.as_deref().map(DeliveryStatus::parse).transpose() {
        Ok(status) => status,
        Err(_) => {
            v.push("status", "must be pending, succeeded or failed");
            None
        }
    };
    v.finish()?;
    Ok(Json(app.store.read(move |c| stored::deliveries(c, &provider.id, &id, status, page)).await?))
}

/// Send a delivery again now: one more attempt, whatever its status, not retried after.
#[utoipa::path(post, path = "/v1/providers/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", tag = "Webhooks",
    security(("providerKey" = [])), params(("webhook_id" = String, Path), ("delivery_id" = String, Path)),
    responses((status = 202, description = "The delivery, due now", body = Delivery), E401, E404, E409))]
async fn retry_delivery(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath((id, delivery_id)): ApiPath<(String, String)>,
) -> Result<(StatusCode, Json<Delivery>)> {
    let delivery = app.store.write(move |c| stored::retry_delivery(c, &provider.id, &id, &delivery_id, now_micros())).await?;
    app.webhooks_wake.now();
    Ok((StatusCode::ACCEPTED, Json(delivery)))
}

/// Send a `webhook.test` event to this endpoint, whatever it subscribes to.
#[utoipa::path(post, path = "/v1/providers/webhooks/{webhook_id}/test", tag = "Webhooks", security(("providerKey" = [])),
    params(("webhook_id" = String, Path)),
    responses((status = 202, description = "The test event's delivery, due now", body = Delivery), E401, E404))]
async fn send_test(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<Delivery>)> {
    let delivery = app.store.write(move |c| stored::send_test(c, &provider.id, &id, now_micros())).await?;
    app.webhooks_wake.now();
    Ok((StatusCode::ACCEPTED, Json(delivery)))
}
