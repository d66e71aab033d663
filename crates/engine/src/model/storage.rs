//! The node image's disks and mounts, as a DGX-style node has them: two
//! M.2 NVMe drives mirrored (md0, RAID-1) for the OS with the EFI
//! partition on the first, eight U.2 NVMe drives striped (md1, RAID-0) as
//! the `/raid` cache, and the kernel's virtual filesystems. `lsblk`,
//! `mount` and `/proc/mounts` read them. The shared Lustre file system
//! holds the jobs' checkpoints (`checkpoints`).

use crate::model::time::EpochSeconds;

/// A block device and what sits on it (`lsblk`'s tree).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub bytes: u64,
    /// `disk`, `part`, `raid1`, `raid0`.
    pub kind: &'static str,
    pub mountpoint: &'static str,
    pub model: &'static str,
    pub children: Vec<BlockDevice>,
}

/// One mounted filesystem, as `/proc/mounts` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    pub source: &'static str,
    pub target: String,
    pub fstype: &'static str,
    pub options: String,
}

/// The cluster's shared parallel file system: Lustre, mounted on every
/// node from its management server over the front-end network. The jobs
/// read their tokens and write their checkpoints there, so every node sees
/// the same files.
pub const SHARED_MOUNT: &str = "/lustre";
pub const SHARED_SOURCE: &str = "10.1.255.250@tcp:/lustre";
/// The monitoring team's rule files, on the shared file system, which the
/// cluster's Prometheus reads (`rule_files`).
pub const RULES_DIR: &str = "/lustre/monitoring/rules";
/// Its capacity: 2 PiB, in KiB.
pub const SHARED_KIB: u64 = 2 << 40;

/// What the cluster's other users keep on the shared file system, in KiB:
/// the same on every node, seeded per cluster.
pub fn shared_used_kib(seed: u64) -> u64 {
    crate::rng::Rng::derive(seed, &["lustre", "used"]).range_u64(SHARED_KIB / 3, SHARED_KIB / 2)
}

/// A checkpoint on the shared file system: its job, iteration, the ranks
/// that wrote it, its size when complete, and the save's times.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub job: String,
    pub dir: String,
    pub iteration: u32,
    pub ranks: u32,
    /// Bytes of the whole checkpoint (weights, master weights and Adam's
    /// moments: [`crate::model::workload::pace::CHECKPOINT_BYTES_PER_PARAM`]).
    pub bytes: u64,
    pub layers: u32,
    pub began: EpochSeconds,
    /// When its last shard was written; None while it is written, or when
    /// the run was cut off during the save.
    pub ended: Option<EpochSeconds>,
    /// The share written by now, in thousandths.
    pub written_permille: u64,
}

/// Every checkpoint the lab's jobs have begun by the cluster's now, each
/// job's in iteration order: a later run's save of an iteration replaces
/// an earlier one's, and only the newest `MAX_CHECKPOINTS_KEPT` of a job
/// are kept.
pub fn checkpoints(cluster: &super::Cluster) -> Vec<Checkpoint> {
    use crate::model::workload::pace;
    let now = cluster.now;
    // Each save with the run that made it, to keep a later run's.
    let mut found: Vec<(usize, Checkpoint)> = Vec::new();
    for (run, workload) in cluster.workloads.iter().enumerate() {
        let spec = &workload.spec;
        let bytes = (pace::parameter_count(spec.params_b) as f64 * pace::CHECKPOINT_BYTES_PER_PARAM) as u64;
        let ranks = (spec.nodes.len() as u32).saturating_mul(spec.gpus_per_node).max(1);
        let layers = pace::shape(spec.params_b).0;
        let saves = workload.saves_by(now);
        for save in saves.iter().skip(saves.len().saturating_sub(crate::limits::MAX_CHECKPOINTS_KEPT)) {
            let checkpoint = Checkpoint {
                job: spec.name.clone(),
                dir: spec.checkpoint_dir(),
                iteration: save.iteration,
                ranks,
                bytes,
                layers,
                began: save.began.floor() as EpochSeconds,
                ended: save.ended.map(|at| at.ceil() as EpochSeconds),
                written_permille: save.written_permille,
            };
            found.push((run, checkpoint));
        }
    }
    crate::sort::sort_by(&mut found, |(run_a, a), (run_b, b)| (a.dir.as_str(), a.iteration, *run_a).cmp(&(b.dir.as_str(), b.iteration, *run_b)));
    let mut kept: Vec<Checkpoint> = Vec::with_capacity(found.len());
    for (_, checkpoint) in found {
        match kept.last_mut() {
            Some(last) if last.dir == checkpoint.dir && last.iteration == checkpoint.iteration => *last = checkpoint,
            _ => kept.push(checkpoint),
        }
    }
    // The newest of each job's directory.
    kept.chunk_by(|a, b| a.dir == b.dir).flat_map(|saves| saves[saves.len().saturating_sub(crate::limits::MAX_CHECKPOINTS_KEPT)..].iter().cloned()).collect()
}

/// A 1.92 TB and a 3.84 TB PM9A3 (M.2 and U.2), in bytes.
const OS_DRIVE_BYTES: u64 = 1_920_383_410_176;
const DATA_DRIVE_BYTES: u64 = 3_840_755_982_336;
const EFI_BYTES: u64 = 512 << 20;
/// md's superblock and bitmap take the first 128 MiB of each member.
const MD_OVERHEAD_BYTES: u64 = 128 << 20;
const DATA_DRIVES: u32 = 8;

/// The NVMe major number (block extended devt) and md's.
const NVME_MAJOR: u32 = 259;
const MD_MAJOR: u32 = 9;

/// A device of `kind` with nothing of the model's own (no drive model).
fn device(name: String, major: u32, minor: u32, bytes: u64, kind: &'static str, mountpoint: &'static str, children: Vec<BlockDevice>) -> BlockDevice {
    BlockDevice { name, major, minor, bytes, kind, mountpoint, model: "", children }
}

/// The drives in the order the kernel names them.
pub fn block_devices() -> Vec<BlockDevice> {
    let os_part = OS_DRIVE_BYTES - EFI_BYTES - (1 << 20);
    let md0 = device("md0".into(), MD_MAJOR, 0, os_part - MD_OVERHEAD_BYTES, "raid1", "/", Vec::new());
    let md1 = device("md1".into(), MD_MAJOR, 1, (DATA_DRIVE_BYTES - MD_OVERHEAD_BYTES) * u64::from(DATA_DRIVES), "raid0", "/raid", Vec::new());
    let mut minor = 0;
    let mut next = || {
        minor += 1;
        minor - 1
    };
    let mut drives = Vec::new();
    for drive in 0..2 {
        let name = format!("nvme{drive}n1");
        let disk_minor = next();
        let efi = device(format!("{name}p1"), NVME_MAJOR, next(), EFI_BYTES, "part", if drive == 0 { "/boot/efi" } else { "" }, Vec::new());
        let root = device(format!("{name}p2"), NVME_MAJOR, next(), os_part, "part", "", vec![md0.clone()]);
        let disk = device(name, NVME_MAJOR, disk_minor, OS_DRIVE_BYTES, "disk", "", vec![efi, root]);
        drives.push(BlockDevice { model: "SAMSUNG MZ1L21T9HCLS-00A07", ..disk });
    }
    for drive in 2..2 + DATA_DRIVES {
        let disk = device(format!("nvme{drive}n1"), NVME_MAJOR, next(), DATA_DRIVE_BYTES, "disk", "", vec![md1.clone()]);
        drives.push(BlockDevice { model: "SAMSUNG MZQL23T8HCLS-00A07", ..disk });
    }
    drives
}

/// What is mounted, in `/proc/mounts`' order (Ubuntu 22.04 with systemd);
/// the tmpfs sizes follow the memory as the kernel's defaults do
/// (`memory_kib`: MemTotal).
pub fn mounts(memory_kib: u64) -> Vec<Mount> {
    let kernel = "rw,nosuid,nodev,noexec,relatime";
    let mount = |source: &'static str, target: &str, fstype: &'static str, options: String| Mount { source, target: target.to_string(), fstype, options };
    vec![
        mount("sysfs", "/sys", "sysfs", kernel.into()),
        mount("proc", "/proc", "proc", kernel.into()),
        mount("udev", "/dev", "devtmpfs", format!("rw,nosuid,relatime,size={}k,nr_inodes={},mode=755,inode64", memory_kib / 2, memory_kib / 8)),
        mount("devpts", "/dev/pts", "devpts", "rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=000".into()),
        mount("tmpfs", "/run", "tmpfs", format!("rw,nosuid,nodev,noexec,relatime,size={}k,mode=755,inode64", memory_kib / 10)),
        mount("/dev/md0", "/", "ext4", "rw,relatime".into()),
        mount("securityfs", "/sys/kernel/security", "securityfs", kernel.into()),
        mount("tmpfs", "/dev/shm", "tmpfs", "rw,nosuid,nodev,inode64".into()),
        mount("tmpfs", "/run/lock", "tmpfs", "rw,nosuid,nodev,noexec,relatime,size=5120k,inode64".into()),
        mount("cgroup2", "/sys/fs/cgroup", "cgroup2", format!("{kernel},nsdelegate,memory_recursiveprot")),
        mount("pstore", "/sys/fs/pstore", "pstore", kernel.into()),
        mount("efivarfs", "/sys/firmware/efi/efivars", "efivarfs", kernel.into()),
        mount("bpf", "/sys/fs/bpf", "bpf", format!("{kernel},mode=700")),
        mount("hugetlbfs", "/dev/hugepages", "hugetlbfs", "rw,relatime,pagesize=2M".into()),
        mount("mqueue", "/dev/mqueue", "mqueue", kernel.into()),
        mount("debugfs", "/sys/kernel/debug", "debugfs", kernel.into()),
        mount("tracefs", "/sys/kernel/tracing", "tracefs", kernel.into()),
        mount("fusectl", "/sys/fs/fuse/connections", "fusectl", kernel.into()),
        mount("configfs", "/sys/kernel/config", "configfs", kernel.into()),
        mount(
            "/dev/nvme0n1p1",
            "/boot/efi",
            "vfat",
            "rw,relatime,fmask=0077,dmask=0077,codepage=437,iocharset=iso8859-1,shortname=mixed,errors=remount-ro".into(),
        ),
        // A RAID-0 of eight drives with 512 KiB chunks: a 1024-block stride of 4 KiB blocks times 8.
        mount("/dev/md1", "/raid", "ext4", "rw,relatime,stripe=1024".into()),
        mount(SHARED_SOURCE, SHARED_MOUNT, "lustre", "rw,flock,lazystatfs".into()),
        mount(
            "tmpfs",
            "/run/user/1000",
            "tmpfs",
            format!("rw,nosuid,nodev,relatime,size={}k,nr_inodes={},mode=700,uid=1000,gid=1000,inode64", memory_kib / 10, memory_kib / 40),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raids_sit_on_their_members_and_the_mounts_agree() {
        let devices = block_devices();
        assert_eq!(devices.len(), 10);
        assert_eq!(devices[0].children[1].children[0].name, "md0");
        assert!(devices[2..].iter().all(|d| d.children[0].name == "md1"));
        let minors: Vec<u32> =
            devices.iter().flat_map(|d| std::iter::once(d.minor).chain(d.children.iter().filter(|c| c.kind == "part").map(|c| c.minor))).collect();
        assert_eq!(minors, (0..14).collect::<Vec<_>>());
        let mounted: Vec<&str> = mounts(1 << 30).iter().filter(|m| m.source.starts_with("/dev/")).map(|m| m.source).collect();
        assert_eq!(mounted, ["/dev/md0", "/dev/nvme0n1p1", "/dev/md1"]);
    }
}
