//! Administration around PostgreSQL databases (creating and dropping whole databases), for
//! the test harness and the load generator.

/// Runs statements on a fresh connection to `admin_url`, on a plain thread: the sync client
/// drives its own runtime and must not run inside tokio's.
pub fn execute(admin_url: &str, sql: String) -> Result<(), String> {
    let url = admin_url.to_string();
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(&sql).map_err(|e| e.to_string())
    })
    .join()
    .unwrap_or_else(|_| Err("PostgreSQL admin thread panicked".into()))
}

/// `admin_url` with its database name replaced by `name` (query string kept).
pub fn with_database(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority..].find('/') {
        Some(slash) => &base[..authority + slash],
        None => base,
    };
    format!("{base}/{name}{query}")
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_names_are_replaced() {
        assert_eq!(with_database("postgres://u@h:5432/postgres", "x"), "postgres://u@h:5432/x");
        assert_eq!(with_database("postgres://u@h/postgres?sslmode=disable", "x"), "postgres://u@h/x?sslmode=disable");
        assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    }
}
