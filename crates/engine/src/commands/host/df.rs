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
        let memory_kib = cluster.preset.host.memory_mib * 1024;
        let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "df"]);
        const GIB: u64 = 1024 * 1024;
        // (source, type, size KiB, used KiB, mount point)
        let mut filesystems: Vec<(&str, &str, u64, u64, &str)> = vec![
            ("tmpfs", "tmpfs", memory_kib / 10, rng.range_u64(3000, 6000), "/run"),
            ("/dev/md0", "ext4", 1_844_295_000, rng.range_u64(40 * GIB, 160 * GIB), "/"),
            ("tmpfs", "tmpfs", memory_kib / 2, 0, "/dev/shm"),
            ("tmpfs", "tmpfs", 5120, 0, "/run/lock"),
            ("/dev/nvme0n1p1", "vfat", 523_248, 6_220, "/boot/efi"),
            ("/dev/md1", "ext4", 30_005_000_000, rng.range_u64(500 * GIB, 9000 * GIB), "/raid"),
            ("tmpfs", "tmpfs", memory_kib / 10, 4, "/run/user/1000"),
        ];
        // The shared file system: the same on every node, and fuller with
        // each checkpoint the jobs write.
        let checkpoints: u64 = crate::commands::files::shared::files(cluster).iter().map(|file| file.bytes.div_ceil(4096) * 4).sum();
        let shared_used = storage::shared_used_kib(cluster.seed).saturating_add(checkpoints).min(storage::SHARED_KIB);
        filesystems.push((storage::SHARED_SOURCE, "lustre", storage::SHARED_KIB, shared_used, storage::SHARED_MOUNT));
        if !paths.is_empty() {
            let mut chosen = Vec::new();
            for path in &paths {
                if !path.starts_with('/') && !path.starts_with('~') && path != "." {
                    return Output::error(format!("df: {path}: No such file or directory\n"), 1);
                }
                let best = filesystems
                    .iter()
                    .filter(|fs| path == fs.4 || path.starts_with(&format!("{}/", fs.4.trim_end_matches('/'))) || fs.4 == "/")
                    .max_by_key(|fs| fs.4.len())
                    .copied();
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
        for (source, kind, total, used, mount) in &filesystems {
            // ext4 keeps 5% for root; Lustre keeps nothing back.
            let avail = if *kind == "lustre" { total.saturating_sub(*used) } else { total.saturating_sub(*used) * 95 / 100 };
            let pct = if used + avail == 0 { "-".to_string() } else { format!("{}%", (used * 100).div_ceil(used + avail)) };
            rows.push([source.to_string(), kind.to_string(), size(*total), size(*used), size(avail), pct, mount.to_string()]);
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
