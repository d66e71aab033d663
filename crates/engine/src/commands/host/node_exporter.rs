//! What Ubuntu's `prometheus-node-exporter` (node_exporter 1.3.1) serves on
//! port 9100: `/metrics` in Prometheus' text format, the landing page for
//! every other path. Its collectors read what the node's own files say,
//! as the real ones do: `/proc/meminfo`, `/etc/os-release`,
//! `/sys/class/infiniband` and `/sys/class/net` from the file view, the
//! load and boot time `uptime` reports, the file systems `df` reports.
//!
//! The layout follows node_exporter 1.3.1 and client_golang 1.11: families
//! sorted by name (byte order), a family's samples by their label values,
//! labels by name; values as Go's `strconv.FormatFloat(v, 'g', -1, 64)`
//! (exponent form from 1e6 and below 1e-4). Of the default collectors'
//! families, those an operator reads are here (cpu, filesystem,
//! infiniband, loadavg, meminfo, netclass, os, stat, time, uname, and the
//! exporter's own); every default collector has its scrape lines. The
//! layout is pinned by the project's own end-to-end fixture
//! (`collector/fixtures/e2e-output.txt` at v1.3.1) and its collectors'
//! sources, which give the HELP texts.

use crate::commands::files::View;
use crate::commands::host::curl::Response;
use crate::model::time::EpochSeconds;
use crate::model::{Cluster, Node};
use crate::rng::Rng;

pub const PORT: u16 = 9100;

/// One metric family: its name, HELP, TYPE and samples (labels, value).
struct Family {
    name: String,
    help: String,
    kind: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
    /// A summary's `_sum` and `_count`, after its quantiles.
    totals: Option<(f64, f64)>,
}

fn family(name: impl Into<String>, help: impl Into<String>, kind: &'static str) -> Family {
    Family { name: name.into(), help: help.into(), kind, samples: Vec::new(), totals: None }
}

fn single(name: &str, help: &str, kind: &'static str, value: f64) -> Family {
    Family { samples: vec![(Vec::new(), value)], ..family(name, help, kind) }
}

/// Go's `strconv.FormatFloat(value, 'g', -1, 64)` as expfmt writes it.
pub fn go_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if value == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` is the shortest round-trip form too: `1.418183276e9`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return format!("{value}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// The collectors node_exporter 1.3.1 enables on Linux, and whether each
/// finds what it reads on this node image (no ZFS, NFS, Fibre Channel,
/// IPVS or tape drives: those answer "no data", a failed scrape).
const COLLECTORS: &[(&str, bool)] = &[
    ("arp", true),
    ("bcache", true),
    ("bonding", true),
    ("btrfs", true),
    ("conntrack", true),
    ("cpu", true),
    ("cpufreq", true),
    ("diskstats", true),
    ("dmi", true),
    ("edac", true),
    ("entropy", true),
    ("fibrechannel", false),
    ("filefd", true),
    ("filesystem", true),
    ("hwmon", true),
    ("infiniband", true),
    ("ipvs", false),
    ("loadavg", true),
    ("mdadm", true),
    ("meminfo", true),
    ("netclass", true),
    ("netdev", true),
    ("netstat", true),
    ("nfs", false),
    ("nfsd", false),
    ("nvme", true),
    ("os", true),
    ("powersupplyclass", true),
    ("pressure", true),
    ("rapl", true),
    ("schedstat", true),
    ("sockstat", true),
    ("softnet", true),
    ("stat", true),
    ("tapestats", false),
    ("textfile", true),
    ("thermal_zone", true),
    ("time", true),
    ("timex", true),
    ("udp_queues", true),
    ("uname", true),
    ("vmstat", true),
    ("xfs", true),
    ("zfs", false),
];

/// File systems the filesystem collector leaves out by default: by mount
/// point (`^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+)($|/)`)
/// and by type.
fn filesystem_excluded(mount: &str, fstype: &str) -> bool {
    let under = |root: &str| mount == root || mount.starts_with(&format!("{root}/"));
    let by_mount = ["/dev", "/proc", "/sys"].iter().any(|root| under(root)) || mount.starts_with("/run/credentials/") || mount.starts_with("/var/lib/docker/");
    const TYPES: &[&str] = &[
        "autofs",
        "binfmt_misc",
        "bpf",
        "cgroup",
        "cgroup2",
        "configfs",
        "debugfs",
        "devpts",
        "devtmpfs",
        "fusectl",
        "hugetlbfs",
        "iso9660",
        "mqueue",
        "nsfs",
        "overlay",
        "proc",
        "procfs",
        "pstore",
        "rpc_pipefs",
        "securityfs",
        "selinuxfs",
        "squashfs",
        "sysfs",
        "tracefs",
    ];
    by_mount || TYPES.contains(&fstype)
}

/// `/metrics` of `node` now.
pub fn metrics(cluster: &Cluster, node: &Node) -> String {
    metrics_named(cluster, node, None)
}

/// `/metrics` of `node` now, only the family `name` when one is given (a
/// scraper that keeps one series skips the collectors that cannot give it).
pub fn metrics_named(cluster: &Cluster, node: &Node, name: Option<&str>) -> String {
    let wants = |prefixes: &[&str]| name.is_none_or(|name| prefixes.iter().any(|prefix| name.starts_with(prefix)));
    let now = cluster.now;
    let uptime = (now - node.booted_at).max(1) as f64;
    // Each collector draws its own noise, so one scraped alone reads as in the whole page.
    let rng_for = |collector: &str| Rng::derive(cluster.seed, &[&node.hostname, "node-exporter", collector, &now.to_string()]);
    let view = View::of(cluster, node, "/");
    let mut families: Vec<Family> = Vec::new();
    let (started, pid) = exporter_process(cluster, node);
    if wants(&["go_"]) {
        go_families(&mut families, &mut rng_for("go"), (now - started).max(1) as f64, now);
    }
    let load = if wants(&["node_load", "node_procs_", "node_cpu", "node_context_switches", "node_intr"]) {
        crate::commands::host::uptime::load_averages(cluster, node)
    } else {
        [0; 3]
    };
    if wants(&["node_cpu", "node_context_switches", "node_forks", "node_intr", "node_procs_"]) {
        stat_families(&mut families, cluster, node, uptime, load);
    }
    families.push(single("node_boot_time_seconds", "Node boot time, in unixtime.", "gauge", node.booted_at as f64));
    families.push(Family {
        samples: vec![(
            vec![("branch", "debian/sid".into()), ("goversion", "go1.18.1".into()), ("revision", "1.3.1-1".into()), ("version", "1.3.1".into())],
            1.0,
        )],
        ..family(
            "node_exporter_build_info",
            "A metric with a constant '1' value labeled by version, revision, branch, and goversion from which node_exporter was built.",
            "gauge",
        )
    });
    if wants(&["node_filesystem_"]) {
        filesystem_families(&mut families, cluster, node);
    }
    if wants(&["node_infiniband_"]) {
        infiniband_families(&mut families, &view, node);
    }
    for (name, minutes, hundredths) in [("node_load1", "1m", load[0]), ("node_load15", "15m", load[2]), ("node_load5", "5m", load[1])] {
        families.push(single(name, &format!("{minutes} load average."), "gauge", hundredths as f64 / 100.0));
    }
    if wants(&["node_memory_"]) {
        memory_families(&mut families, &view);
    }
    if wants(&["node_network_info", "node_network_up", "node_network_carrier", "node_network_mtu", "node_network_protocol"]) {
        netclass_families(&mut families, &view, node);
    }
    if wants(&["node_network_receive", "node_network_transmit"]) {
        netdev_families(&mut families, &view);
    }
    if wants(&["node_os_"]) {
        os_families(&mut families, cluster);
    }
    if wants(&["node_scrape_collector"]) {
        scrape_families(&mut families, &mut rng_for("scrape"));
    }
    let fraction = rng_for("time").range_u64(0, 1_000_000) as f64 / 1e6;
    families.push(single("node_time_seconds", "System time in seconds since epoch (1970).", "gauge", now as f64 + fraction));
    let uname = vec![
        ("domainname", "(none)".to_string()),
        ("machine", "x86_64".to_string()),
        ("nodename", node.hostname.clone()),
        ("release", crate::model::node::KERNEL_RELEASE.to_string()),
        ("sysname", "Linux".to_string()),
        ("version", crate::model::node::KERNEL_VERSION.to_string()),
    ];
    families
        .push(Family { samples: vec![(uname, 1.0)], ..family("node_uname_info", "Labeled system information as provided by the uname system call.", "gauge") });
    if wants(&["process_"]) {
        process_families(&mut families, started, pid, (now - started).max(1) as f64);
    }
    // Prometheus scrapes each node every 15 s; the one now is in flight.
    let scrapes = ((now - started).max(0) / 15) as f64;
    let mut requests = family("promhttp_metric_handler_requests_total", "Total number of scrapes by HTTP status code.", "counter");
    for (code, count) in [("200", scrapes), ("500", 0.0), ("503", 0.0)] {
        requests.samples.push((vec![("code", code.to_string())], count));
    }
    let mut errors = family("promhttp_metric_handler_errors_total", "Total number of internal errors encountered by the promhttp metric handler.", "counter");
    for cause in ["encoding", "gathering"] {
        errors.samples.push((vec![("cause", cause.to_string())], 0.0));
    }
    families.push(errors);
    families.push(single("promhttp_metric_handler_requests_in_flight", "Current number of scrapes being served.", "gauge", 1.0));
    families.push(requests);
    if let Some(name) = name {
        families.retain(|family| name.strip_prefix(family.name.as_str()).is_some_and(|rest| matches!(rest, "" | "_sum" | "_count" | "_bucket")));
    }
    render(families)
}

/// What each collector took, and whether it worked.
fn scrape_families(families: &mut Vec<Family>, rng: &mut Rng) {
    let mut duration = family("node_scrape_collector_duration_seconds", "node_exporter: Duration of a collector scrape.", "gauge");
    let mut success = family("node_scrape_collector_success", "node_exporter: Whether a collector succeeded.", "gauge");
    for (collector, works) in COLLECTORS {
        // The per-CPU collectors walk 200-odd CPUs; the rest read a file or two.
        let base = if matches!(*collector, "cpu" | "cpufreq" | "schedstat" | "softnet") { 0.004 } else { 0.00005 };
        let seconds = (base * (1.0 + 4.0 * rng.unit_f64()) * 1e9).round() / 1e9;
        duration.samples.push((vec![("collector", collector.to_string())], seconds));
        success.samples.push((vec![("collector", collector.to_string())], if *works { 1.0 } else { 0.0 }));
    }
    families.push(duration);
    families.push(success);
}

/// The exporter's main process: when it started, and its PID.
fn exporter_process(cluster: &Cluster, node: &Node) -> (EpochSeconds, u32) {
    use crate::model::service;
    let unit = service::unit(service::NODE_EXPORTER_UNIT);
    let started = unit.map_or(node.booted_at, |unit| service::state(node, unit).1);
    (started, service::pid(cluster.seed, node, "prometheus-node-exporter", started))
}

fn render(mut families: Vec<Family>) -> String {
    crate::sort::sort_by(&mut families, |a, b| a.name.cmp(&b.name));
    let mut out = String::new();
    for mut family in families {
        if family.samples.is_empty() {
            continue;
        }
        for (labels, _) in &mut family.samples {
            crate::sort::sort_by(labels, |a, b| a.0.cmp(b.0));
        }
        crate::sort::sort_by(&mut family.samples, |a, b| a.0.iter().map(|(_, v)| v).cmp(b.0.iter().map(|(_, v)| v)));
        out += &format!("# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name, family.kind);
        for (labels, value) in &family.samples {
            out += &family.name;
            if !labels.is_empty() {
                let pairs: Vec<String> =
                    labels.iter().map(|(name, value)| format!("{name}=\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))).collect();
                out += &format!("{{{}}}", pairs.join(","));
            }
            out += &format!(" {}\n", go_float(*value));
        }
        if let Some((sum, count)) = family.totals {
            out += &format!("{}_sum {}\n{}_count {}\n", family.name, go_float(sum), family.name, go_float(count));
        }
    }
    out
}

/// The Go runtime's families (client_golang's Go collector): a small,
/// steady heap, collected about every two minutes.
fn go_families(families: &mut Vec<Family>, rng: &mut Rng, alive: f64, now: EpochSeconds) {
    let mut gc = family("go_gc_duration_seconds", "A summary of the pause duration of garbage collection cycles.", "summary");
    let mut pause = 1.9e-05;
    for quantile in ["0", "0.25", "0.5", "0.75", "1"] {
        pause *= 1.2 + rng.unit_f64();
        gc.samples.push((vec![("quantile", quantile.to_string())], (pause * 1e9).round() / 1e9));
    }
    let cycles = (alive / 120.0).floor().max(1.0);
    gc.totals = Some(((gc.samples[2].1 * cycles * 1e9).round() / 1e9, cycles));
    families.push(gc);
    let heap = (4_000_000 + rng.range_u64(0, 3_000_000)) as f64;
    let allocated = (heap * cycles * 3.1).round();
    let mallocs = (allocated / 95.0).round();
    let objects = (heap / 170.0).round();
    let (heap_sys, stack) = (11_730_944.0, 753_664.0);
    let heap_inuse = heap + 1_900_544.0;
    let (mspan_inuse, mspan_sys, mcache_inuse, mcache_sys) = (137_224.0, 163_840.0, 4_800.0, 15_600.0);
    let (buck_hash, gc_sys, other_sys) = (1_454_227.0, 4_999_464.0, 806_405.0);
    let sys = heap_sys + stack + mspan_sys + mcache_sys + buck_hash + gc_sys + other_sys;
    let last_gc = now as f64 - rng.range_u64(1_000, 119_000) as f64 / 1e3;
    for (name, help, kind, value) in [
        ("go_goroutines", "Number of goroutines that currently exist.", "gauge", 8.0),
        ("go_memstats_alloc_bytes", "Number of bytes allocated and still in use.", "gauge", heap),
        ("go_memstats_alloc_bytes_total", "Total number of bytes allocated, even if freed.", "counter", allocated),
        ("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", "gauge", buck_hash),
        ("go_memstats_frees_total", "Total number of frees.", "counter", mallocs - objects),
        ("go_memstats_gc_cpu_fraction", "The fraction of this program's available CPU time used by the GC since the program started.", "gauge", 2.1e-05),
        ("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", "gauge", gc_sys),
        ("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.", "gauge", heap),
        ("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", "gauge", heap_sys - heap_inuse),
        ("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", heap_inuse),
        ("go_memstats_heap_objects", "Number of allocated objects.", "gauge", objects),
        ("go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", "gauge", ((heap_sys - heap_inuse) * 0.6 / 8192.0).floor() * 8192.0),
        ("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system.", "gauge", heap_sys),
        ("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", last_gc),
        ("go_memstats_lookups_total", "Total number of pointer lookups.", "counter", 0.0),
        ("go_memstats_mallocs_total", "Total number of mallocs.", "counter", mallocs),
        ("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures.", "gauge", mcache_inuse),
        ("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", "gauge", mcache_sys),
        ("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures.", "gauge", mspan_inuse),
        ("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", "gauge", mspan_sys),
        ("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", "gauge", 8_927_616.0),
        ("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations.", "gauge", other_sys),
        ("go_memstats_stack_inuse_bytes", "Number of bytes in use by the stack allocator.", "gauge", stack),
        ("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", "gauge", stack),
        ("go_memstats_sys_bytes", "Number of bytes obtained from system.", "gauge", sys),
        ("go_threads", "Number of OS threads created.", "gauge", 9.0),
    ] {
        families.push(single(name, help, kind, value));
    }
    families.push(Family { samples: vec![(vec![("version", "go1.18.1".into())], 1.0)], ..family("go_info", "Information about the Go environment.", "gauge") });
}

/// The stat collector's families (`/proc/stat`) and the CPU collector's.
/// `load`: the load averages in hundredths, as `uptime` reports them.
fn stat_families(families: &mut Vec<Family>, cluster: &Cluster, node: &Node, uptime: f64, load: [u64; 3]) {
    let cpus = f64::from(cluster.preset.host.cpus().max(1));
    // The share of each CPU busy: the 15-minute load over the CPUs, now.
    let busy = (load[2] as f64 / 100.0 / cpus).clamp(0.0, 1.0);
    // The counters add up what the node did since it booted, a job's time
    // at a job's load and the rest at idle, so they only ever grow.
    let share = |running: bool| {
        let load = crate::commands::host::uptime::load_averages_when(cluster, node, running);
        (load[2] as f64 / 100.0 / cpus).clamp(0.0, 1.0)
    };
    let (idle_share, busy_share) = (share(false), share(true));
    let busy_time = cluster.busy_seconds(node).min(uptime);
    let idle_time = uptime - busy_time;
    let mut cpu = family("node_cpu_seconds_total", "Seconds the CPUs spent in each mode.", "counter");
    let mut cpu_rng = Rng::derive(cluster.seed, &[&node.hostname, "cpu-seconds", &node.booted_at.to_string()]);
    for index in 0..cluster.preset.host.cpus() {
        // Each CPU's part is fixed for the boot; the clock adds to it.
        let jitter = 0.7 + 0.6 * cpu_rng.unit_f64();
        let small = [0.0004 * cpu_rng.unit_f64(), 0.00002 * cpu_rng.unit_f64(), 0.0002 * cpu_rng.unit_f64()];
        let seconds_at =
            |fraction: &dyn Fn(f64) -> f64| idle_time * fraction((idle_share + 0.002) * jitter) + busy_time * fraction((busy_share + 0.002) * jitter);
        let modes: [(&str, f64); 8] = [
            ("idle", seconds_at(&|share| 1.0 - share)),
            ("iowait", uptime * small[0]),
            ("irq", 0.0),
            ("nice", uptime * small[1]),
            ("softirq", uptime * small[2]),
            ("steal", 0.0),
            ("system", seconds_at(&|share| share * 0.25)),
            ("user", seconds_at(&|share| share * 0.75)),
        ];
        for (mode, seconds) in modes {
            let seconds = (seconds * 100.0).floor() / 100.0;
            cpu.samples.push((vec![("cpu", index.to_string()), ("mode", mode.to_string())], seconds.max(0.0)));
        }
    }
    families.push(cpu);
    let cpus = cluster.preset.host.cpus();
    let running = 1.0 + (busy * f64::from(cpus)).round();
    for (name, help, kind, value) in [
        (
            "node_context_switches_total",
            "Total number of context switches.",
            "counter",
            // The noise is the boot's, so the counter only grows between scrapes.
            ((idle_time * (9_000.0 + 60_000.0 * idle_share) + busy_time * (9_000.0 + 60_000.0 * busy_share)) * (1.0 + 0.05 * cpu_rng.unit_f64())).round(),
        ),
        ("node_forks_total", "Total number of forks.", "counter", (uptime * 2.9).round()),
        (
            "node_intr_total",
            "Total number of interrupts serviced.",
            "counter",
            (idle_time * (21_000.0 + 90_000.0 * idle_share) + busy_time * (21_000.0 + 90_000.0 * busy_share)).round(),
        ),
        ("node_procs_blocked", "Number of processes blocked waiting for I/O to complete.", "gauge", 0.0),
        ("node_procs_running", "Number of processes in runnable state.", "gauge", running),
    ] {
        families.push(single(name, help, kind, value));
    }
}

fn filesystem_families(families: &mut Vec<Family>, cluster: &Cluster, node: &Node) {
    let names = [
        ("avail_bytes", "Filesystem space available to non-root users in bytes."),
        ("device_error", "Whether an error occurred while getting statistics for the given device."),
        ("files", "Filesystem total file nodes."),
        ("files_free", "Filesystem total free file nodes."),
        ("free_bytes", "Filesystem free space in bytes."),
        ("readonly", "Filesystem read-only status."),
        ("size_bytes", "Filesystem size in bytes."),
    ];
    let mut out: Vec<Family> = names.iter().map(|(name, help)| family(format!("node_filesystem_{name}"), *help, "gauge")).collect();
    for fs in crate::commands::host::df::filesystems(cluster, node) {
        if filesystem_excluded(fs.mount, fs.fstype) {
            continue;
        }
        let size = fs.size_kib as f64 * 1024.0;
        let free = fs.size_kib.saturating_sub(fs.used_kib) as f64 * 1024.0;
        // ext4 has an inode for every 16 KiB, tmpfs for every page;
        // FAT keeps no inodes; Lustre's metadata target counts its own.
        let files = match fs.fstype {
            "ext4" => (size / 16_384.0).floor(),
            "tmpfs" => (size / 4096.0).floor(),
            "lustre" => 3_355_443_200.0,
            _ => 0.0,
        };
        let used_files = if files > 0.0 { (files * 0.004 * (fs.used_kib as f64 / fs.size_kib.max(1) as f64 + 0.01)).round().max(1.0) } else { 0.0 };
        let labels = vec![("device", fs.source.to_string()), ("fstype", fs.fstype.to_string()), ("mountpoint", fs.mount.to_string())];
        let values = [fs.avail_kib() as f64 * 1024.0, 0.0, files, files - used_files, free, 0.0, size];
        for (family, value) in out.iter_mut().zip(values) {
            family.samples.push((labels.clone(), value));
        }
    }
    families.extend(out);
}

/// The sysfs counters the infiniband collector reads, and the family each
/// feeds (the data counters count 4-byte words).
const IB_COUNTERS: &[(&str, &str, &str)] = &[
    (
        "excessive_buffer_overrun_errors",
        "excessive_buffer_overrun_errors_total",
        "Number of times that OverrunErrors consecutive flow control update periods occurred, each having at least one overrun error.",
    ),
    ("link_downed", "link_downed_total", "Number of times the link failed to recover from an error state and went down"),
    ("link_error_recovery", "link_error_recovery_total", "Number of times the link successfully recovered from an error state"),
    (
        "local_link_integrity_errors",
        "local_link_integrity_errors_total",
        "Number of times that the count of local physical errors exceeded the threshold specified by LocalPhyErrors.",
    ),
    ("multicast_rcv_packets", "multicast_packets_received_total", "Number of multicast packets received (including errors)"),
    ("multicast_xmit_packets", "multicast_packets_transmitted_total", "Number of multicast packets transmitted (including errors)"),
    ("port_rcv_constraint_errors", "port_constraint_errors_received_total", "Number of packets received on the switch physical port that are discarded"),
    ("port_xmit_constraint_errors", "port_constraint_errors_transmitted_total", "Number of packets not transmitted from the switch physical port"),
    ("port_rcv_data", "port_data_received_bytes_total", "Number of data octets received on all links"),
    ("port_xmit_data", "port_data_transmitted_bytes_total", "Number of data octets transmitted on all links"),
    ("port_rcv_discards", "port_discards_received_total", "Number of inbound packets discarded by the port because the port is down or congested"),
    ("port_xmit_discards", "port_discards_transmitted_total", "Number of outbound packets discarded by the port because the port is down or congested"),
    ("port_rcv_errors", "port_errors_received_total", "Number of packets containing an error that were received on this port"),
    ("port_rcv_packets", "port_packets_received_total", "Number of packets received on all VLs by this port (including errors)"),
    ("port_xmit_packets", "port_packets_transmitted_total", "Number of packets transmitted on all VLs from this port (including errors)"),
    ("port_xmit_wait", "port_transmit_wait_total", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick"),
    (
        "port_rcv_remote_physical_errors",
        "port_receive_remote_physical_errors_total",
        "Number of packets marked with the EBP (End of Bad Packet) delimiter received on the port.",
    ),
    ("port_rcv_switch_relay_errors", "port_receive_switch_relay_errors_total", "Number of packets that could not be forwarded by the switch."),
    ("symbol_error", "symbol_error_total", "Number of minor link errors detected on one or more physical lanes."),
    ("unicast_rcv_packets", "unicast_packets_received_total", "Number of unicast packets received (including errors)"),
    ("unicast_xmit_packets", "unicast_packets_transmitted_total", "Number of unicast packets transmitted (including errors)"),
    ("VL15_dropped", "vl15_dropped_total", "Number of incoming VL15 packets dropped due to resource limitations."),
];

fn infiniband_families(families: &mut Vec<Family>, view: &View, node: &Node) {
    let read = |path: String| view.read(&path).ok().map(|text| text.trim().to_string());
    let mut info = family("node_infiniband_info", "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.", "gauge");
    let mut state =
        family("node_infiniband_state_id", "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)", "gauge");
    let mut physical = family(
        "node_infiniband_physical_state_id",
        "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
        "gauge",
    );
    let mut rate = family("node_infiniband_rate_bytes_per_second", "Maximum signal transfer rate", "gauge");
    let mut counters: Vec<Family> = IB_COUNTERS.iter().map(|(_, name, help)| family(format!("node_infiniband_{name}"), *help, "counter")).collect();
    for hca in &node.hcas {
        let device = format!("/sys/class/infiniband/{}", hca.name);
        let attribute = |file: &str| read(format!("{device}/{file}")).unwrap_or_default();
        info.samples.push((
            vec![
                ("board_id", attribute("board_id")),
                ("device", hca.name.clone()),
                ("firmware_version", attribute("fw_ver")),
                ("hca_type", attribute("hca_type")),
            ],
            1.0,
        ));
        let port = format!("{device}/ports/{}", hca.port.number);
        let labels = vec![("device", hca.name.clone()), ("port", hca.port.number.to_string())];
        let number = |file: &str| read(format!("{port}/{file}")).and_then(|text| text.split(':').next()?.trim().parse::<f64>().ok());
        if let Some(value) = number("state") {
            state.samples.push((labels.clone(), value));
        }
        if let Some(value) = number("phys_state") {
            physical.samples.push((labels.clone(), value));
        }
        if let Some(gbps) = read(format!("{port}/rate")).and_then(|text| text.split(' ').next()?.parse::<f64>().ok()) {
            rate.samples.push((labels.clone(), (gbps * 125_000_000.0).trunc()));
        }
        for ((file, name, _), family) in IB_COUNTERS.iter().zip(counters.iter_mut()) {
            let Some(value) = read(format!("{port}/counters/{file}")).and_then(|text| text.parse::<f64>().ok()) else { continue };
            let value = if name.starts_with("port_data_") { value * 4.0 } else { value };
            family.samples.push((labels.clone(), value));
        }
    }
    families.extend([info, physical, rate, state]);
    families.extend(counters);
}

/// meminfo's families: each `/proc/meminfo` line, `Key(x)` as `Key_x`, kB
/// as bytes with `_bytes` after the name.
fn memory_families(families: &mut Vec<Family>, view: &View) {
    let text = view.read("/proc/meminfo").map(|text| text.into_owned()).unwrap_or_default();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(key), Some(value)) = (fields.first(), fields.get(1).and_then(|v| v.parse::<f64>().ok())) else { continue };
        let key = key.trim_end_matches(':').replace('(', "_").replace(')', "");
        let (key, value) = if fields.len() == 3 { (format!("{key}_bytes"), value * 1024.0) } else { (key, value) };
        families.push(single(&format!("node_memory_{key}"), &format!("Memory information field {key}."), "gauge", value));
    }
}

/// The netclass collector's families, from `/sys/class/net/IF/`.
/// The netclass collector's families, from `/sys/class/net`.
fn netclass_families(families: &mut Vec<Family>, view: &View, node: &Node) {
    let mut info = family("node_network_info", "Non-numeric data from /sys/class/net/<iface>, value is always 1.", "gauge");
    let mut up = family("node_network_up", "Value is 1 if operstate is 'up', 0 otherwise.", "gauge");
    let mut numbers: Vec<(&str, Family)> = [("carrier", "carrier"), ("mtu", "mtu_bytes"), ("type", "protocol_type")]
        .iter()
        .map(|(file, name)| (*file, family(format!("node_network_{name}"), format!("{name} value of /sys/class/net/<iface>."), "gauge")))
        .collect();
    for iface in crate::commands::host::ip::interfaces(node) {
        let dir = format!("/sys/class/net/{}", iface.name);
        let read = |file: &str| view.read(&format!("{dir}/{file}")).ok().map(|text| text.trim().to_string());
        let operstate = read("operstate").unwrap_or_default();
        info.samples.push((
            vec![
                ("address", read("address").unwrap_or_default()),
                ("broadcast", String::new()),
                ("device", iface.name.clone()),
                ("duplex", String::new()),
                ("ifalias", String::new()),
                ("operstate", operstate.clone()),
            ],
            1.0,
        ));
        up.samples.push((vec![("device", iface.name.clone())], if operstate == "up" { 1.0 } else { 0.0 }));
        for (file, family) in &mut numbers {
            if let Some(value) = read(file).and_then(|text| text.parse::<f64>().ok()) {
                family.samples.push((vec![("device", iface.name.clone())], value));
            }
        }
    }
    families.extend([info, up]);
    families.extend(numbers.into_iter().map(|(_, family)| family));
}

/// The netdev collector's families: every column of /proc/net/dev, named from its header.
fn netdev_families(families: &mut Vec<Family>, view: &View) {
    let text = view.read("/proc/net/dev").map(|text| text.into_owned()).unwrap_or_default();
    let columns: Vec<String> = ["receive", "transmit"]
        .iter()
        .zip(text.lines().nth(1).unwrap_or_default().split('|').skip(1))
        .flat_map(|(direction, names)| names.split_whitespace().map(move |name| format!("{direction}_{name}")))
        .collect();
    let mut stats: Vec<Family> =
        columns.iter().map(|column| family(format!("node_network_{column}_total"), format!("Network device statistic {column}."), "counter")).collect();
    for line in text.lines().skip(2) {
        let Some((device, values)) = line.split_once(':') else { continue };
        for (family, value) in stats.iter_mut().zip(values.split_whitespace()) {
            family.samples.push((vec![("device", device.trim().to_string())], value.parse().unwrap_or(0.0)));
        }
    }
    families.extend(stats);
}

/// The os collector's families, from `/etc/os-release`.
fn os_families(families: &mut Vec<Family>, cluster: &Cluster) {
    let release = cluster.versions.os.os_release;
    let field = |key: &str| {
        release.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix('=')).map(|value| value.trim_matches('"').to_string()).unwrap_or_default()
    };
    let labels =
        ["build_id", "id", "id_like", "image_id", "image_version", "name", "pretty_name", "variant", "variant_id", "version", "version_codename", "version_id"]
            .into_iter()
            .map(|label| (label, field(&label.to_ascii_uppercase())))
            .collect();
    families.push(Family {
        samples: vec![(labels, 1.0)],
        ..family(
            "node_os_info",
            "A metric with a constant '1' value labeled by build_id, id, id_like, image_id, image_version, name, pretty_name, variant, variant_id, version, version_codename, version_id.",
            "gauge",
        )
    });
    let version: f64 = field("VERSION_ID").parse().unwrap_or(0.0);
    families.push(Family {
        samples: vec![(vec![("id", field("ID")), ("id_like", field("ID_LIKE")), ("name", field("NAME"))], version)],
        ..family("node_os_version", "Metric containing the major.minor part of the OS version.", "gauge")
    });
}

/// The exporter's own process (client_golang's process collector).
fn process_families(families: &mut Vec<Family>, started: EpochSeconds, pid: u32, alive: f64) {
    for (name, help, kind, value) in [
        ("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", (alive * 0.0016 * 100.0).round() / 100.0),
        ("process_max_fds", "Maximum number of open file descriptors.", "gauge", 1024.0),
        ("process_open_fds", "Number of open file descriptors.", "gauge", 9.0),
        ("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", 18_456_576.0 + f64::from(pid % 64) * 4096.0),
        ("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", started as f64 + 0.37),
        ("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", 735_502_336.0),
        ("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge", u64::MAX as f64),
    ] {
        families.push(single(name, help, kind, value));
    }
}

/// The exporter's answer to a GET of `path`: the metrics, or its landing
/// page (which it serves for every other path).
pub fn serve(cluster: &Cluster, node: &Node, path: &str) -> Response {
    let path = path.split(['?', '#']).next().unwrap_or("/");
    match path {
        "/metrics" => Response::ok("text/plain; version=0.0.4; charset=utf-8", metrics(cluster, node)),
        _ => Response::ok("text/html; charset=utf-8", LANDING.to_string()),
    }
}

/// The landing page node_exporter 1.3.1 writes (tabs included, no newline at the end).
const LANDING: &str = "<html>\n\t\t\t<head><title>Node Exporter</title></head>\n\t\t\t<body>\n\t\t\t<h1>Node Exporter</h1>\n\t\t\t<p><a href=\"/metrics\">Metrics</a></p>\n\t\t\t</body>\n\t\t\t</html>";

/// No capture of node_exporter is in `shared/reference`: the layout is
/// pinned against node_exporter 1.3.1's end-to-end fixture
/// (`collector/fixtures/e2e-output.txt`) and its collectors' sources
/// (HELP texts, label names, the meminfo and infiniband rules).
#[cfg(test)]
mod tests {
    use super::go_float;
    use crate::load;
    use crate::testing::{session, shell, Shell, TWO_NODE_LAB};

    fn scrape(shell: &mut Shell, host: &str) -> String {
        shell.run(&format!("curl -s {host}:9100/metrics")).stdout()
    }

    /// The value of the one sample that starts with `prefix`.
    fn value(text: &str, prefix: &str) -> f64 {
        let line = text.lines().find(|line| line.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix}"));
        line.rsplit_once(' ').unwrap().1.parse().unwrap()
    }

    #[test]
    fn families_sorted_each_with_help_and_type() {
        let mut shell = session();
        let text = scrape(&mut shell, "localhost");
        let names: Vec<&str> = text.lines().filter_map(|line| line.strip_prefix("# HELP ")?.split(' ').next()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert_eq!(names.first(), Some(&"go_gc_duration_seconds"));
        assert_eq!(names.last(), Some(&"promhttp_metric_handler_requests_total"));
        for pair in text.lines().collect::<Vec<_>>().windows(2) {
            if let Some(help) = pair[0].strip_prefix("# HELP ") {
                let name = help.split(' ').next().unwrap();
                assert!(pair[1].starts_with(&format!("# TYPE {name} ")), "{pair:?}");
            }
        }
        // Labels by name; samples by their label values, as strings (cpu 10 before cpu 2).
        assert!(text.contains("node_infiniband_info{board_id=\"MT_0000000838\",device=\"mlx5_0\",firmware_version=\"28.39.1002\",hca_type=\"MT4129\"} 1\n"));
        let cpus: Vec<&str> = text.lines().filter(|l| l.starts_with("node_cpu_seconds_total{") && l.contains("mode=\"idle\"")).take(3).collect();
        assert!(cpus[0].starts_with("node_cpu_seconds_total{cpu=\"0\",") && cpus[2].starts_with("node_cpu_seconds_total{cpu=\"10\","), "{cpus:?}");
        assert!(text.contains("\ngo_gc_duration_seconds_count "));
        assert!(text.contains("node_scrape_collector_success{collector=\"zfs\"} 0\n"));
        let landing = shell.run("curl -s localhost:9100/");
        assert!(landing.stdout().starts_with("<html>\n\t\t\t<head><title>Node Exporter</title></head>"));
        let head = shell.run("curl -sI localhost:9100/metrics").stdout();
        assert!(head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "{head}");
    }

    #[test]
    fn the_collectors_read_what_the_node_says() {
        let mut shell = session();
        let text = scrape(&mut shell, "gpu-001");
        let meminfo = shell.run("grep MemTotal /proc/meminfo").stdout();
        let kib: f64 = meminfo.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert_eq!(value(&text, "node_memory_MemTotal_bytes "), kib * 1024.0);
        assert!(text.contains("# HELP node_memory_Active_anon_bytes Memory information field Active_anon_bytes.\n"));
        let load: f64 = shell
            .run("cat /proc/loadavg 2>/dev/null || uptime")
            .stdout()
            .rsplit("load average: ")
            .next()
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(value(&text, "node_load1 "), load);
        let df = shell.run("df -k /lustre").stdout();
        let avail: f64 = df.lines().nth(1).unwrap().split_whitespace().nth(3).unwrap().parse().unwrap();
        assert_eq!(value(&text, "node_filesystem_avail_bytes{device=\"10.1.255.250@tcp:/lustre\""), avail * 1024.0);
        assert!(!text.contains("mountpoint=\"/dev/shm\""), "excluded as node_exporter excludes /dev");
        let words: f64 = shell.run("cat /sys/class/infiniband/mlx5_3/ports/1/counters/port_xmit_data").stdout().trim().parse().unwrap();
        assert_eq!(value(&text, "node_infiniband_port_data_transmitted_bytes_total{device=\"mlx5_3\",port=\"1\"}"), words * 4.0);
        assert_eq!(value(&text, "node_infiniband_rate_bytes_per_second{device=\"mlx5_3\",port=\"1\"}"), 5e10);
        let received: f64 =
            shell.run("grep enp170s0f0np0 /proc/net/dev").stdout().split(':').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        assert_eq!(value(&text, "node_network_receive_bytes_total{device=\"enp170s0f0np0\"}"), received);
        assert!(text.contains(&format!(
            "node_uname_info{{domainname=\"(none)\",machine=\"x86_64\",nodename=\"gpu-001\",release=\"{}\",",
            crate::model::node::KERNEL_RELEASE
        )));
    }

    #[test]
    fn a_port_down_reads_down_and_a_stopped_exporter_refuses() {
        let lab = load(&format!("{TWO_NODE_LAB}\n[[faults]]\nkind = \"hca-port-down\"\nnode = \"gpu-002\"\nhca = \"mlx5_2\"\nstate = \"Polling\"\n"))
            .expect("the lab is valid");
        let mut shell = shell(lab.instantiate(1));
        let text = scrape(&mut shell, "gpu-002");
        assert_eq!(value(&text, "node_infiniband_state_id{device=\"mlx5_2\",port=\"1\"}"), 1.0);
        assert_eq!(value(&text, "node_infiniband_physical_state_id{device=\"mlx5_2\",port=\"1\"}"), 2.0);
        shell.run("sudo systemctl stop prometheus-node-exporter");
        let refused = shell.run("curl -s localhost:9100/metrics");
        assert_eq!(refused.status, 7);
        assert!(!scrape(&mut shell, "gpu-002").is_empty(), "the other node's exporter still answers");
    }

    #[test]
    fn values_print_as_go_formats_them() {
        assert_eq!(go_float(1_418_183_276.0), "1.418183276e+09");
        assert_eq!(go_float(1_509_379.0), "1.509379e+06");
        assert_eq!(go_float(148_554.0), "148554");
        assert_eq!(go_float(10_870.69), "10870.69");
        assert_eq!(go_float(0.21), "0.21");
        assert_eq!(go_float(1.305e-06), "1.305e-06");
        assert_eq!(go_float(5e9), "5e+09");
        assert_eq!(go_float(u64::MAX as f64), "1.8446744073709552e+19");
        assert_eq!((go_float(0.0), go_float(1.0), go_float(-1.0)), ("0".into(), "1".into(), "-1".into()));
    }
}
