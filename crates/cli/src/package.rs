//! The built app as an LMS imports it: `clusterlab build LABS --app DIR`
//! writes the labs' data into `DIR/labs`, names the service worker's cache
//! after the build, writes `DIR/cmi5.xml` (each lab and its exam an
//! assignable unit) and zips the whole folder into `DIR/clusterlab-cmi5.zip`
//! with `cmi5.xml` at its root: the cmi5 course package.
//!
//! The zip is written here, stored (not deflated: the .wasm and JSON are
//! served as they are), with fixed timestamps, so the same build gives the
//! same bytes.

use std::path::{Path, PathBuf};

use clusterlab_engine::cmi5::{course_structure, CourseLab};
use clusterlab_engine::lab::catalog::Catalog;
use clusterlab_engine::rng::stable_hash;

/// The package's file name, inside the app folder.
pub const PACKAGE: &str = "clusterlab-cmi5.zip";

/// The course's IRI unless `CLUSTERLAB_COURSE_ID` names the organisation's own.
pub const DEFAULT_COURSE_ID: &str = "https://clusterlab.invalid/course";

/// Every file under `dir`, relative and sorted, the package itself left out.
fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().is_some_and(|name| name != PACKAGE) {
                out.push(path.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(path));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Names the service worker's cache after this build's files (`__BUILD__`
/// in sw.js), so that a new build installs beside the old one.
pub fn stamp_service_worker(dir: &Path) -> std::io::Result<()> {
    let worker = dir.join("sw.js");
    let Ok(text) = std::fs::read_to_string(&worker) else { return Ok(()) };
    let mut content = Vec::new();
    for file in files(dir)? {
        let name = file.to_string_lossy();
        let counted = name.ends_with(".js") || name.ends_with(".wasm") || name == "index.html" || (name.starts_with("labs/") && name.ends_with(".json"));
        if counted && name != "sw.js" {
            content.extend_from_slice(name.as_bytes());
            content.extend_from_slice(&std::fs::read(dir.join(&file))?);
        }
    }
    let build = format!("{:016x}", stable_hash(&content));
    std::fs::write(worker, text.replace("__BUILD__", &build))
}

/// `cmi5.xml` for the catalog, then the folder zipped.
pub fn write_package(dir: &Path, catalog: &Catalog) -> std::io::Result<()> {
    let course_id = std::env::var("CLUSTERLAB_COURSE_ID").ok().filter(|id| !id.is_empty()).unwrap_or_else(|| DEFAULT_COURSE_ID.to_string());
    let labs: Vec<CourseLab> =
        catalog.labs.iter().map(|entry| CourseLab { id: &entry.id, title: &entry.title, summary: &entry.summary, pass: entry.pass }).collect();
    std::fs::write(dir.join("cmi5.xml"), course_structure(&course_id, "ClusterLab", &labs))?;
    let mut zip = Zip::default();
    for file in files(dir)? {
        let name = file.to_string_lossy().replace('\\', "/");
        zip.add(&name, &std::fs::read(dir.join(&file))?);
    }
    std::fs::write(dir.join(PACKAGE), zip.finish())
}

/// CRC-32 (IEEE), as zip records it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A zip archive of stored entries (ZIP64 is not needed: an app is far
/// below 4 GiB).
#[derive(Default)]
struct Zip {
    body: Vec<u8>,
    directory: Vec<u8>,
    count: u16,
}

/// 1 January 2026, 00:00, in MS-DOS form: every entry the same.
const DOS_TIME: u16 = 0;
const DOS_DATE: u16 = ((2026 - 1980) << 9) | (1 << 5) | 1;

impl Zip {
    fn add(&mut self, name: &str, data: &[u8]) {
        let crc = crc32(data);
        let size = data.len() as u32;
        let offset = self.body.len() as u32;
        let header = |signature: u32, central: bool| {
            let mut out = Vec::new();
            out.extend_from_slice(&signature.to_le_bytes());
            if central {
                out.extend_from_slice(&20u16.to_le_bytes()); // made by
            }
            out.extend_from_slice(&20u16.to_le_bytes()); // version needed
            out.extend_from_slice(&0x0800u16.to_le_bytes()); // flags: UTF-8 names
            out.extend_from_slice(&0u16.to_le_bytes()); // stored
            out.extend_from_slice(&DOS_TIME.to_le_bytes());
            out.extend_from_slice(&DOS_DATE.to_le_bytes());
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes()); // extra
            if central {
                out.extend_from_slice(&0u16.to_le_bytes()); // comment
                out.extend_from_slice(&0u16.to_le_bytes()); // disk
                out.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
                out.extend_from_slice(&0u32.to_le_bytes()); // external attributes
                out.extend_from_slice(&offset.to_le_bytes());
            }
            out.extend_from_slice(name.as_bytes());
            out
        };
        self.body.extend(header(0x0403_4b50, false));
        self.body.extend_from_slice(data);
        self.directory.extend(header(0x0201_4b50, true));
        self.count += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        let directory_at = self.body.len() as u32;
        let directory_len = self.directory.len() as u32;
        self.body.append(&mut self.directory);
        let mut end = Vec::new();
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        end.extend_from_slice(&[0, 0, 0, 0]); // disks
        end.extend_from_slice(&self.count.to_le_bytes());
        end.extend_from_slice(&self.count.to_le_bytes());
        end.extend_from_slice(&directory_len.to_le_bytes());
        end.extend_from_slice(&directory_at.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        self.body.extend(end);
        self.body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_zips() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn a_zip_lists_its_entries_in_its_directory() {
        let mut zip = Zip::default();
        zip.add("cmi5.xml", b"<x/>");
        zip.add("labs/a.json", b"{}");
        let bytes = zip.finish();
        assert_eq!(&bytes[..4], b"PK\x03\x04");
        let end = &bytes[bytes.len() - 22..];
        assert_eq!(&end[..4], b"PK\x05\x06");
        assert_eq!(u16::from_le_bytes([end[10], end[11]]), 2);
    }
}
