//! `df`: a DGX-like fixed set of filesystems (RAID-1 OS volume, EFI
//! partition, the RAID-0 NVMe `/raid` cache, tmpfs) and the shared Lustre
//! file system, whose use grows with the jobs' checkpoints; sizes from the host's
//! memory where Linux derives them from it, usage seeded per node. Columns
//! are sized as GNU df does (at least the header's width).

use crate::commands::options::gnu_complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::storage;
use crate::rng::Rng;

pub struct Df;

static SIGNATURE: Signature = Signature {
    name: "df",
    summary: "report file system disk space usage",
    usage: "df [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('h'), long: Some("human-readable"), value: None, help: "print sizes in powers of 1024 (e.g., 1023M)" },
        Flag { short: Some('k'), long: None, value: None, help: "like --block-size=1K" },
        Flag { short: Some('T'), long: Some("print-type"), value: None, help: "print file system type" },
    ],
    examples: &[Example { command: "df -h", description: "disk space of the node's filesystems" }],
};

/// GNU's human-readable size (coreutils' `-h`, in `df` and `ls`): bytes
/// under 1 KiB as they are, then one decimal under 10, rounded up, `K` to `P`.
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return bytes.to_string();
    }
    let mut value = bytes as f64 / 1024.0;
    for unit in ["K", "M", "G", "T", "P"] {
        if value < 1024.0 || unit == "P" {
            return if value < 10.0 { format!("{:.1}{unit}", (value * 10.0).ceil() / 10.0) } else { format!("{}{unit}", value.ceil() as u64) };
        }
        value /= 1024.0;
    }
    String::new()
}

/// A mounted file system's space, as `statfs` reports it (and so `df` and
/// node_exporter's filesystem collector).
#[derive(Clone, Debug, PartialEq)]
pub struct Filesystem {
    pub source: &'static str,
    pub fstype: &'static str,
    pub size_kib: u64,
    pub used_kib: u64,
    pub mount: &'static str,
}

impl Filesystem {
    /// What a user may still write: ext4 keeps 5% for root; the others
    /// keep nothing back.
    pub fn avail_kib(&self) -> u64 {
        let free = self.size_kib.saturating_sub(self.used_kib);
        if self.fstype == "ext4" {
            free * 95 / 100
        } else {
            free
        }
    }
}

/// The node's file systems in `df`'s order, their use seeded per node, the
/// shared file system's the same on every node and fuller with each
/// checkpoint the jobs write.
pub fn filesystems(cluster: &crate::model::Cluster, node: &crate::model::Node) -> Vec<Filesystem> {
    let memory_kib = cluster.preset.host.memory_mib * 1024;
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "df"]);
    const GIB: u64 = 1024 * 1024;
    let fs = |source, fstype, size_kib, used_kib, mount| Filesystem { source, fstype, size_kib, used_kib, mount };
    let checkpoints: u64 = crate::commands::files::shared::files(cluster).iter().map(|file| file.bytes.div_ceil(4096) * 4).sum();
    let shared_used = storage::shared_used_kib(cluster.seed).saturating_add(checkpoints).min(storage::SHARED_KIB);
    vec![
        fs("tmpfs", "tmpfs", memory_kib / 10, rng.range_u64(3000, 6000), "/run"),
        fs("/dev/md0", "ext4", 1_844_295_000, rng.range_u64(40 * GIB, 160 * GIB), "/"),
        fs("tmpfs", "tmpfs", memory_kib / 2, 0, "/dev/shm"),
        fs("tmpfs", "tmpfs", 5120, 0, "/run/lock"),
        fs("/dev/nvme0n1p1", "vfat", 523_248, 6_220, "/boot/efi"),
        fs("/dev/md1", "ext4", 30_005_000_000, rng.range_u64(500 * GIB, 9000 * GIB), "/raid"),
        fs("tmpfs", "tmpfs", memory_kib / 10, 4, "/run/user/1000"),
        fs(storage::SHARED_SOURCE, "lustre", storage::SHARED_KIB, shared_used, storage::SHARED_MOUNT),
    ]
}

impl Command for Df {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut readable, mut types, mut paths) = (false, false, Vec::new());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('h') => readable = true,
                    Some('T') => types = true,
                    _ => readable = false,
                },
                Arg::Positional(path) => paths.push(path),
                other => return gnu_complaint("df", &other, 1),
            }
        }
        let (cluster, node) = (invocation.cluster, invocation.node);
        let mut filesystems = filesystems(cluster, node);
        if !paths.is_empty() {
            let mut chosen = Vec::new();
            for path in &paths {
                if !path.starts_with('/') && !path.starts_with('~') && path != "." {
                    return Output::error(format!("df: {path}: No such file or directory\n"), 1);
                }
                let best = filesystems
                    .iter()
                    .filter(|fs| *path == fs.mount || path.starts_with(&format!("{}/", fs.mount.trim_end_matches('/'))) || fs.mount == "/")
                    .max_by_key(|fs| fs.mount.len())
                    .cloned();
                chosen.extend(best);
            }
            filesystems = chosen;
        }
        let size = |kib: u64| if readable { human_bytes(kib.saturating_mul(1024)) } else { kib.to_string() };
        let mut rows = vec![[
            "Filesystem".to_string(),
            "Type".to_string(),
            (if readable { "Size" } else { "1K-blocks" }).to_string(),
            "Used".to_string(),
            (if readable { "Avail" } else { "Available" }).to_string(),
            "Use%".to_string(),
            "Mounted on".to_string(),
        ]];
        for fs in &filesystems {
            let (used, avail) = (fs.used_kib, fs.avail_kib());
            let pct = if used + avail == 0 { "-".to_string() } else { format!("{}%", (used * 100).div_ceil(used + avail)) };
            rows.push([fs.source.to_string(), fs.fstype.to_string(), size(fs.size_kib), size(used), size(avail), pct, fs.mount.to_string()]);
        }
        let mut widths = [14usize, 4, 5, 5, 5, 4, 0];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.len());
            }
        }
        let mut out = String::new();
        for row in &rows {
            out += &format!("{:<w$} ", row[0], w = widths[0]);
            if types {
                out += &format!("{:<w$} ", row[1], w = widths[1]);
            }
            for i in 2..6 {
                out += &format!("{:>w$} ", row[i], w = widths[i]);
            }
            out += &row[6];
            out.push('\n');
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn reads_like_gnu_df() {
        let out = run_on_first_node("df -h").stdout;
        // The widest source (the shared file system's) sets the first column, as in GNU df.
        assert!(out.starts_with("Filesystem                Size  Used Avail Use% Mounted on\n"), "{out}");
        assert!(out.lines().any(|line| line.starts_with("10.1.255.250@tcp:/lustre  2.0P ") && line.ends_with(" /lustre")), "{out}");
        assert!(out.contains(" /raid\n") && out.contains(" /boot/efi\n"));
        assert_eq!(run_on_first_node("df -h /raid/data").stdout.lines().count(), 2);
        assert_eq!(run_on_first_node("df -x").status, 1);
    }
}
