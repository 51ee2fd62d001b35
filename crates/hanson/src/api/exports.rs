//! Exports for the books (provider key): the provider's trades and ledger as CSV (RFC 4180,
//! a header row, CRLF line ends) or NDJSON, streamed in apply order with constant memory.
//! Rows are read in chunks by key; each chunk is written to the connection before the next
//! is read, so a slow reader holds at most a few chunks.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body::Frame;
use serde::Deserialize;
use tokio::sync::mpsc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{ApiQuery, ProviderAuth};
use super::openapi::{E401, E404, E422};
use super::state::AppState;
use super::trading::date_filter;
use crate::error::{Error, Result, Validator};
use crate::store::exports::{self, ExportQuery, ExportRow, LEDGER_FIELDS, TRADE_FIELDS};
use crate::store::{markets, Store};

/// Rows read and written at a time.
const CHUNK: i64 = 2_000;
/// Chunks waiting for the connection.
const CHUNKS_AHEAD: usize = 2;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export_trades)).routes(routes!(export_ledger))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ExportParams {
    /// `csv` (default) or `ndjson`.
    #[param(pattern = "^(csv|ndjson)$")]
    format: Option<String>,
    /// Only rows at or after this time (RFC 3339).
    #[param(value_type = Option<crate::domain::time::Timestamp>)]
    from: Option<String>,
    /// Only rows at or before this time (RFC 3339).
    #[param(value_type = Option<crate::domain::time::Timestamp>)]
    to: Option<String>,
    /// Only this market (trades on it; transfers touching its pool). 404 if not the provider's.
    market_id: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Csv,
    Ndjson,
}

/// A response body fed chunk by chunk; a failure after the headers aborts it, so a client
/// never takes a cut export for a whole one.
struct ExportBody(mpsc::Receiver<std::result::Result<Bytes, std::io::Error>>);

impl http_body::Body for ExportBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|c| c.map(Frame::data)))
    }
}

/// One CSV field: quoted when it holds a comma, a quote or a line break, quotes doubled.
fn csv_field(out: &mut BytesMut, value: &str) {
    if value.contains([',', '"', '\r', '\n']) {
        out.extend_from_slice(b"\"");
        out.extend_from_slice(value.replace('"', "\"\"").as_bytes());
        out.extend_from_slice(b"\"");
    } else {
        out.extend_from_slice(value.as_bytes());
    }
}

fn write_row(out: &mut BytesMut, format: Format, fields: &[&str], values: &[Option<String>]) -> Result<()> {
    match format {
        Format::Csv => {
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b",");
                }
                // Null is an empty field.
                csv_field(out, v.as_deref().unwrap_or(""));
            }
            out.extend_from_slice(b"\r\n");
        }
        Format::Ndjson => {
            let object: serde_json::Map<String, serde_json::Value> = fields
                .iter()
                .zip(values)
                .map(|(f, v)| (f.to_string(), v.clone().map_or(serde_json::Value::Null, serde_json::Value::String)))
                .collect();
            serde_json::to_writer(bytes::BufMut::writer(&mut *out), &object).map_err(Error::internal)?;
            out.extend_from_slice(b"\n");
        }
    }
    Ok(())
}

type Reader = fn(&mut dyn crate::store::sql::Conn, &ExportQuery, Option<(i64, i64)>) -> Result<Vec<ExportRow>>;

fn read_trades(c: &mut dyn crate::store::sql::Conn, q: &ExportQuery, after: Option<(i64, i64)>) -> Result<Vec<ExportRow>> {
    exports::trades(c, q, after, CHUNK)
}

fn read_ledger(c: &mut dyn crate::store::sql::Conn, q: &ExportQuery, after: Option<(i64, i64)>) -> Result<Vec<ExportRow>> {
    exports::ledger(c, q, after.map(|(_, id)| id), CHUNK)
}

/// Validates the request and starts the stream.
async fn export(
    app: AppState,
    provider_id: String,
    params: ExportParams,
    name: &str,
    fields: &'static [&'static str],
    read: Reader,
) -> Result<Response> {
    let mut v = Validator::default();
    let format = match params.format.as_deref() {
        None | Some("csv") => Format::Csv,
        Some("ndjson") => Format::Ndjson,
        Some(_) => {
            v.push("format", "must be csv or ndjson");
            Format::Csv
        }
    };
    let from = date_filter(params.from.as_deref(), "from", &mut v);
    let to = date_filter(params.to.as_deref(), "to", &mut v);
    v.finish()?;
    if let Some(market_id) = params.market_id.clone() {
        let m = app.store.read(move |c| markets::market(c, &market_id, false)).await?;
        if m.is_none_or(|m| m.provider_id.as_str() != provider_id) {
            return Err(Error::NotFound);
        }
    }
    let q = ExportQuery { provider_id, market_id: params.market_id, from, to };
    let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
    tokio::spawn(produce(app.store.clone(), q, format, fields, read, tx));
    let (content_type, extension) = match format {
        Format::Csv => ("text/csv; charset=utf-8", "csv"),
        Format::Ndjson => ("application/x-ndjson", "ndjson"),
    };
    let mut response = axum::body::Body::new(ExportBody(rx)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let disposition = format!("attachment; filename=\"{name}.{extension}\"");
    headers.insert(header::CONTENT_DISPOSITION, HeaderValue::from_str(&disposition).map_err(Error::internal)?);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

async fn produce(
    store: Store,
    q: ExportQuery,
    format: Format,
    fields: &'static [&'static str],
    read: Reader,
    tx: mpsc::Sender<std::result::Result<Bytes, std::io::Error>>,
) {
    let mut out = BytesMut::new();
    if format == Format::Csv {
        let header: Vec<Option<String>> = fields.iter().map(|f| Some(f.to_string())).collect();
        let _ = write_row(&mut out, format, fields, &header);
    }
    let mut cursor = None;
    loop {
        let (query, after) = (q.clone(), cursor);
        let rows = match store.read(move |c| read(c, &query, after)).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "an export failed part-way");
                let _ = tx.send(Err(std::io::Error::other("the export failed part-way"))).await;
                return;
            }
        };
        let done = (rows.len() as i64) < CHUNK;
        for row in &rows {
            if write_row(&mut out, format, fields, &row.values).is_err() {
                let _ = tx.send(Err(std::io::Error::other("the export failed part-way"))).await;
                return;
            }
        }
        cursor = rows.last().map(|r| r.cursor).or(cursor);
        if !out.is_empty() && tx.send(Ok(out.split().freeze())).await.is_err() {
            return;
        }
        if done {
            return;
        }
    }
}

/// Export the provider's trades (every trade of its markets, in apply order).
///
/// The trade record's fields; CSV with a header row of their names. Streamed: the body ends
/// early (the connection is cut, not closed cleanly) if the export fails part-way.
#[utoipa::path(get, path = "/v1/providers/exports/trades", tag = "Provider", security(("providerKey" = [])),
    params(ExportParams),
    responses(
        (status = 200, description = "The trades, CSV (text/csv) or NDJSON (application/x-ndjson), as an attachment", content((String = "text/csv"), (String = "application/x-ndjson"))),
        E401, E404, E422,
    ))]
async fn export_trades(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiQuery(params): ApiQuery<ExportParams>,
) -> Result<Response> {
    export(app, provider.id.to_string(), params, "trades", &TRADE_FIELDS, read_trades).await
}

/// Export the provider's ledger (every transfer touching its treasury, its markets' pools or its wallets, by id).
///
/// `{id, created_at, kind, token_id, amount, from_account, to_account, market_id,
/// wallet_address, reference}`; `market_id` names the pool's market when a pool is a side,
/// `wallet_address` the wallet's address when a wallet is (the sender's first), `reference`
/// the transfer's reference (a trade, claim or deposit id). Null in CSV is an empty field.
#[utoipa::path(get, path = "/v1/providers/exports/ledger", tag = "Provider", security(("providerKey" = [])),
    params(ExportParams),
    responses(
        (status = 200, description = "The transfers, CSV (text/csv) or NDJSON (application/x-ndjson), as an attachment", content((String = "text/csv"), (String = "application/x-ndjson"))),
        E401, E404, E422,
    ))]
async fn export_ledger(
    State(app): State<AppState>,
    ProviderAuth(provider): ProviderAuth,
    ApiQuery(params): ApiQuery<ExportParams>,
) -> Result<Response> {
    export(app, provider.id.to_string(), params, "ledger", &LEDGER_FIELDS, read_ledger).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_as_rfc_4180_says() {
        let mut out = BytesMut::new();
        let values = [Some("plain".to_string()), Some("a,b".into()), Some("say \"hi\"".into()), Some("two\r\nlines".into()), None];
        write_row(&mut out, Format::Csv, &["a", "b", "c", "d", "e"], &values).unwrap();
        assert_eq!(&out[..], b"plain,\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\",\r\n");
    }
}
