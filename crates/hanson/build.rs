//! Embeds the web app (`web/`) into the binary: a generated list of every file under `web/`,
//! so adding a page or an asset needs no change to the Rust code. Also names the commit built
//! (`HANSON_COMMIT`, for `hanson --version`): `unknown` outside a git checkout.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// The checkout's commit (12 hex digits).
fn commit(manifest: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(manifest).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]).filter(|h| !h.is_empty())?;
    // Rebuilt when HEAD moves (a commit, a checkout).
    for file in ["HEAD", "logs/HEAD"] {
        if let Some(path) = git(&["rev-parse", "--git-path", file]) {
            println!("cargo:rerun-if-changed={}", manifest.join(path).display());
        }
    }
    Some(head)
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
    println!("cargo:rerun-if-env-changed=HANSON_COMMIT");
    let commit = std::env::var("HANSON_COMMIT").ok().filter(|c| !c.is_empty()).or_else(|| commit(&manifest));
    println!("cargo:rustc-env=HANSON_COMMIT={}", commit.as_deref().unwrap_or("unknown"));
    let mut files = Vec::new();
    files_under(&web, &mut files);
    files.sort();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("web_files.rs");
    let mut code = String::from("pub(crate) static WEB_FILES: &[(&str, &[u8])] = &[\n");
    for file in &files {
        let relative = file.strip_prefix(&web).expect("under web/").to_string_lossy().replace('\\', "/");
        // Named from the manifest directory at compile time, not as an absolute path written
        // here: a target directory shared by two checkouts keeps this file from the one built
        // first, and must not embed that checkout's files into the other.
        let under_manifest = format!("/web/{relative}");
        code.push_str(&format!("    ({relative:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {under_manifest:?}))),\n"));
    }
    code.push_str("];\n");
    fs::File::create(out).and_then(|mut f| f.write_all(code.as_bytes())).expect("OUT_DIR is writable");
}
