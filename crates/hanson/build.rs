//! Embeds the web app (`web/`) into the binary: a generated list of every file under `web/`,
//! so adding a page or an asset needs no change to the Rust code.

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

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
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
