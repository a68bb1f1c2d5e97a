//! Reads each zip named on stdin (one path a line) as cairo-vm's `CairoPie::from_zip_archive`
//! opens a PIE's files: `ZipArchive::new`, then `by_name` and `read_to_end` for each. Prints one
//! JSON line a zip: `{"entries": {"name": "length:crc32", ...}}` (version.json only when present),
//! or `{"error": "..."}` where the crate refuses it.
use std::io::{BufRead, Read};

const NAMES: [&str; 5] = ["version.json", "metadata.json", "memory.bin", "execution_resources.json", "additional_data.json"];

fn read(path: &str) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for name in NAMES {
        match zip.by_name(name) {
            Ok(mut entry) => {
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
                out.push(format!("\"{name}\": \"{}:{:08x}\"", bytes.len(), crc32fast::hash(&bytes)));
            }
            Err(zip::result::ZipError::FileNotFound) if name == "version.json" => {}
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
    Ok(out.join(", "))
}

fn main() {
    for line in std::io::stdin().lock().lines() {
        match read(&line.expect("a path")) {
            Ok(entries) => println!("{{\"entries\": {{{entries}}}}}"),
            Err(error) => println!("{{\"error\": {error:?}}}"),
        }
    }
}
