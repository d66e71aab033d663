//! nccl-tests (`all_reduce_perf`, `all_gather_perf`, ...): the benchmark's
//! output (common.cu / util.cu layouts, FACTS §2) with numbers from the
//! collective model in `perf::collective`. Run directly, one process uses
//! `-g` GPUs of this node; `srun` and `mpirun` (launch.rs) start one process
//! per task on their nodes. NCCL_DEBUG=VERSION/WARN/INFO adds NCCL's own
//! lines (FACTS §3; the INFO log is nccl_init.rs), abbreviated for large
//! jobs: every rank of the first node, then one rank per node for up to 16
//! nodes and for any node whose network differs from the first's.
//!
//! The nccl-tests release follows the lab's NCCL: < 2.23 -> 2.13.9 (bus-only
//! PCI ids), 2.23-2.26 -> 2.14.1, 2.27 -> 2.17.1 (`Collective test
//! starting`), >= 2.28 -> 2.18.5 (version line, `unalign`, wider `#wrong`).

use std::collections::BTreeMap;

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::time::civil;
use crate::model::{Cluster, Node};
use crate::perf::collective::{Coll, Member, NodeNet, Plan};
use crate::rng::{stable_hash, Rng};

use super::nccl_init::{self, nccl_code};

pub struct NcclTest(pub Coll);

pub static ALL_GATHER: NcclTest = NcclTest(Coll::AllGather);
pub static ALL_REDUCE: NcclTest = NcclTest(Coll::AllReduce);
pub static ALLTOALL: NcclTest = NcclTest(Coll::AllToAll);
pub static BROADCAST: NcclTest = NcclTest(Coll::Broadcast);
pub static REDUCE: NcclTest = NcclTest(Coll::Reduce);
pub static REDUCE_SCATTER: NcclTest = NcclTest(Coll::ReduceScatter);
pub static SENDRECV: NcclTest = NcclTest(Coll::SendRecv);

const fn flag(short: char, long: &'static str, value: &'static str, help: &'static str) -> Flag {
    Flag { short: Some(short), long: Some(long), value: Some(value), help }
}

static FLAGS: &[Flag] = &[
    flag('t', "nthreads", "N", "num threads"),
    flag('g', "ngpus", "N", "gpus per thread"),
    flag('b', "minbytes", "SIZE", "min size in bytes"),
    flag('e', "maxbytes", "SIZE", "max size in bytes"),
    flag('i', "stepbytes", "SIZE", "increment size"),
    flag('f', "stepfactor", "N", "increment factor"),
    flag('n', "iters", "N", "iteration count"),
    flag('m', "agg_iters", "N", "aggregated iteration count"),
    flag('w', "warmup_iters", "N", "warmup iteration count"),
    flag('N', "run_cycles", "N", "cycle count run & print each cycle (default: 1; 0=infinite)"),
    flag('p', "parallel_init", "0/1", "parallel_init"),
    flag('c', "check", "N", "check iteration count"),
    flag('o', "op", "OP", "sum/prod/min/max/avg/mulsum/all"),
    flag('d', "datatype", "TYPE", "nccltype/all"),
    flag('r', "root", "N", "root"),
    flag('z', "blocking", "0/1", "blocking"),
    flag('y', "stream_null", "0/1", "stream_null"),
    flag('T', "timeout", "SECONDS", "time in seconds"),
    flag('G', "cudagraph", "N", "num graph launches"),
    flag('C', "report_cputime", "0/1", "report_cputime"),
    flag('a', "average", "0/1/2/3", "report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>"),
    Flag { short: Some('h'), long: Some("help"), value: None, help: "this help" },
];

macro_rules! signature {
    ($name:literal, $summary:literal, $examples:expr) => {
        Signature {
            name: $name,
            summary: $summary,
            usage: concat!($name, " [-b MINBYTES] [-e MAXBYTES] [-f FACTOR|-i STEP] [-g GPUS] [-n ITERS] [-w WARMUP] [-c CHECK] [-d TYPE] [-o OP]"),
            flags: FLAGS,
            examples: $examples,
        }
    };
}

static SIGNATURES: [Signature; 7] = [
    signature!(
        "all_gather_perf",
        "measure NCCL all-gather bandwidth (nccl-tests)",
        &[Example { command: "all_gather_perf -b 8M -e 1G -f 2 -g 8", description: "all-gather across this node's 8 GPUs" },]
    ),
    signature!(
        "all_reduce_perf",
        "measure NCCL all-reduce bandwidth and latency (nccl-tests)",
        &[
            Example { command: "all_reduce_perf -b 8M -e 1G -f 2 -g 8", description: "all-reduce across this node's 8 GPUs (NVLink/NVSwitch)" },
            Example { command: "all_reduce_perf -b 8 -e 128M -f 2 -g 8", description: "the whole curve from latency-bound to bandwidth-bound" },
            Example { command: "NCCL_DEBUG=INFO all_reduce_perf -b 1G -e 1G -g 8", description: "NCCL's init log: NICs used, GPUDirect, channels" },
        ]
    ),
    signature!(
        "alltoall_perf",
        "measure NCCL all-to-all bandwidth (nccl-tests)",
        &[Example { command: "alltoall_perf -b 8M -e 1G -f 2 -g 8", description: "all-to-all across this node's 8 GPUs" },]
    ),
    signature!(
        "broadcast_perf",
        "measure NCCL broadcast bandwidth (nccl-tests)",
        &[Example { command: "broadcast_perf -b 8M -e 1G -f 2 -g 8", description: "broadcast from rank 0 across this node's GPUs" },]
    ),
    signature!(
        "reduce_perf",
        "measure NCCL reduce bandwidth (nccl-tests)",
        &[Example { command: "reduce_perf -b 8M -e 1G -f 2 -g 8", description: "reduce to rank 0 across this node's GPUs" },]
    ),
    signature!(
        "reduce_scatter_perf",
        "measure NCCL reduce-scatter bandwidth (nccl-tests)",
        &[Example { command: "reduce_scatter_perf -b 8M -e 1G -f 2 -g 8", description: "reduce-scatter across this node's 8 GPUs" },]
    ),
    signature!(
        "sendrecv_perf",
        "measure NCCL send/receive bandwidth between ranks (nccl-tests)",
        &[Example { command: "sendrecv_perf -b 8M -e 1G -f 2 -g 8", description: "each GPU sends to the next over NVLink" },]
    ),
];

fn signature_of(coll: Coll) -> &'static Signature {
    let name = coll.program();
    SIGNATURES.iter().find(|s| s.name == name).unwrap_or(&SIGNATURES[1])
}

impl Command for NcclTest {
    fn signature(&self) -> &'static Signature {
        signature_of(self.0)
    }

    fn run(&self, invocation: &Invocation) -> Output {
        // NCCL reads its configuration files in any process, launched or not.
        let mut job = Job { nodes: vec![(invocation.node, 1)], label: false, env: invocation.env.clone() };
        super::launch::read_nccl_conf(invocation, &mut job.env);
        run_job(invocation.cluster, self.0, invocation.argv, &job)
    }
}

/// A launched job: nodes with their task (process) counts, in rank order.
pub struct Job<'a> {
    pub nodes: Vec<(&'a Node, u32)>,
    /// srun -l: prefix lines with the task number.
    pub label: bool,
    pub env: BTreeMap<String, String>,
}

/// Finds the nccl-tests program named `name`.
pub fn program(name: &str) -> Option<Coll> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.strip_suffix("_mpi").unwrap_or(base);
    Coll::ALL.into_iter().find(|c| c.program() == base)
}

/// The nccl-tests release that goes with an NCCL version, as (major, minor, patch).
pub fn tests_version(nccl: &str) -> (u32, u32, u32) {
    let minor: u32 = nccl.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(26);
    match minor {
        0..=22 => (2, 13, 9),
        23..=26 => (2, 14, 1),
        27 => (2, 17, 1),
        _ => (2, 18, 5),
    }
}

/// nccl-tests' parsesize: a number with an optional K/M/G suffix (powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, mult) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1u64 << 10),
        'm' | 'M' => (&text[..text.len() - 1], 1 << 20),
        'g' | 'G' => (&text[..text.len() - 1], 1 << 30),
        't' | 'T' => (&text[..text.len() - 1], 1 << 40),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// C's strtol: the leading integer, 0 when there is none.
fn atoi(text: &str) -> i64 {
    let t = text.trim();
    let end = t.char_indices().take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-')).count();
    t[..end].parse().unwrap_or(0)
}

const TYPES: &[(&str, u64)] =
    &[("int8", 1), ("uint8", 1), ("int32", 4), ("uint32", 4), ("int64", 8), ("uint64", 8), ("half", 2), ("float", 4), ("double", 8), ("bfloat16", 2)];
const OPS: &[&str] = &["sum", "prod", "max", "min", "avg"];

/// C's `%g`: six significant digits, trailing zeros dropped.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x == 0.0 {
            "0".into()
        } else {
            "inf".into()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if !(-4..6).contains(&exp) {
        format!("{}e{}{:02}", trim(mantissa.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        trim(format!("{:.*}", (5 - exp).max(0) as usize, x))
    }
}

fn fmt_time(t: f64) -> String {
    if t >= 10000.0 {
        format!("{t:7.0}")
    } else if t >= 100.0 {
        format!("{t:7.1}")
    } else {
        format!("{t:7.2}")
    }
}

fn fmt_bw(x: f64, wide: bool) -> String {
    if !wide || x < 1000.0 {
        format!("{x:6.2}")
    } else if x < 10000.0 {
        format!("{x:6.1}")
    } else {
        format!("{x:6.0}")
    }
}

struct Opts {
    threads: u32,
    gpus: u32,
    min: u64,
    max: u64,
    step: u64,
    factor: u64,
    iters: u32,
    agg: u32,
    warmup: u32,
    check: i64,
    graph: i64,
    types: Vec<(&'static str, u64)>,
    ops: Vec<&'static str>,
    root: i64,
}

fn usage(program: &str) -> String {
    let mut out = format!("USAGE: {program} \n");
    for f in FLAGS {
        match f.value {
            Some(_) => out += &format!("\t[-{},--{} <{}>] \n", f.short.unwrap_or('?'), f.long.unwrap_or(""), f.help),
            None => out += &format!("\t[-{},--{}]\n", f.short.unwrap_or('?'), f.long.unwrap_or("")),
        }
    }
    out
}

/// What a bad command line prints: glibc getopt's complaint on standard
/// error, then nccl-tests' own `invalid option '?'` (getopt returned `?`)
/// and its usage on standard output, and the program exits 0 (its main
/// returns 0 after the usage).
fn bad_option(program: &str, complaint: String) -> Output {
    Output { stdout: format!("invalid option '?'\n{}", usage(program)), stderr: complaint, ..Output::default() }
}

/// A value nccl-tests refuses: on standard error, and main returns -1.
fn fatal(message: String) -> Output {
    Output::error(message, 255)
}

fn parse_opts(coll: Coll, args: &[String]) -> Result<Opts, Output> {
    let mut o = Opts {
        threads: 1,
        gpus: 1,
        min: 32 << 20,
        max: 32 << 20,
        step: 1 << 20,
        factor: 1,
        iters: 20,
        agg: 1,
        warmup: 5,
        check: 1,
        graph: 0,
        types: vec![("float", 4)],
        ops: vec!["sum"],
        root: 0,
    };
    let program = coll.program();
    for arg in scan(signature_of(coll), args) {
        let (flag, value) = match arg {
            Arg::Flag(flag, value) => (flag, value.unwrap_or_default()),
            Arg::Positional(_) => continue,
            Arg::Unknown(text) => return Err(bad_option(program, crate::commands::options::unknown(program, &text))),
            Arg::MissingValue(flag) => return Err(bad_option(program, crate::commands::options::requires_argument(program, flag.short, flag.long))),
        };
        let n = atoi(&value);
        let count = n.clamp(0, 1 << 20) as u32;
        match flag.short.unwrap_or(' ') {
            't' => o.threads = count.max(1),
            'g' => o.gpus = count.max(1),
            'b' | 'e' | 'i' => {
                let what = match flag.short {
                    Some('b') => "minbytes",
                    Some('e') => "maxbytes",
                    _ => "stepbytes",
                };
                let size = parse_size(&value).ok_or_else(|| fatal(format!("invalid size specified for '{what}'\n")))?;
                match what {
                    "minbytes" => o.min = size,
                    "maxbytes" => o.max = size,
                    _ => o.step = size,
                }
            }
            'f' => o.factor = n.max(1) as u64,
            'n' => o.iters = count.max(1),
            'm' => o.agg = count.max(1),
            'w' => o.warmup = count,
            'c' => o.check = n,
            'G' => o.graph = n,
            'r' => o.root = n,
            'd' => {
                o.types = if value == "all" {
                    TYPES.to_vec()
                } else {
                    let alias = match value.as_str() {
                        "char" => "int8",
                        "int" => "int32",
                        "float16" => "half",
                        "float32" => "float",
                        "float64" => "double",
                        v => v,
                    };
                    vec![*TYPES.iter().find(|(name, _)| *name == alias).ok_or_else(|| fatal(format!("invalid type {value}\n")))?]
                }
            }
            'o' => {
                o.ops = if value == "all" {
                    OPS.to_vec()
                } else {
                    vec![*OPS.iter().find(|op| **op == value).ok_or_else(|| fatal(format!("invalid op {value}\n")))?]
                }
            }
            'h' => return Err(Output::ok(usage(program))),
            _ => {}
        }
    }
    if o.min > o.max {
        return Err(fatal(format!("invalid sizes for 'minbytes' and 'maxbytes': {} > {}\n", o.min, o.max)));
    }
    if !coll.has_op() {
        o.ops = vec!["none"];
    }
    Ok(o)
}

/// Where each rank runs.
pub(super) struct Rank<'a> {
    pub node: &'a Node,
    pub node_index: usize,
    pub task: u32,
    pub pid: u32,
    pub device: u32,
    pub local: u32,
}

/// Output lines with the task that printed them.
struct Lines {
    lines: Vec<(u32, String)>,
}

impl Lines {
    fn push(&mut self, task: u32, line: impl Into<String>) {
        self.lines.push((task, line.into()));
    }
}

fn pci(bus_id: &str, new_form: bool) -> String {
    let parts: Vec<&str> = bus_id.split([':', '.']).collect();
    let hex = |i: usize| parts.get(i).and_then(|p| u32::from_str_radix(p, 16).ok()).unwrap_or(0);
    if new_form {
        format!("{:04x}:{:02x}:{:02x}", hex(0), hex(1), hex(2))
    } else {
        format!("0x{:02x}", hex(1))
    }
}

/// The job's NCCL_DEBUG level: 0 none, 1 VERSION, 2 WARN, 3 INFO.
fn debug_level(env: &BTreeMap<String, String>) -> u8 {
    match env.get("NCCL_DEBUG").map(|v| v.to_ascii_uppercase()).as_deref() {
        Some("VERSION") => 1,
        Some("WARN") => 2,
        Some("INFO") | Some("TRACE") | Some("ABORT") => 3,
        _ => 0,
    }
}

/// Runs an nccl-tests program as `job` launches it.
pub fn run_job(cluster: &Cluster, coll: Coll, argv: &[String], job: &Job) -> Output {
    let program = coll.program();
    let opts = match parse_opts(coll, argv.get(1..).unwrap_or(&[])) {
        Ok(opts) => opts,
        Err(output) => return output,
    };
    let version = tests_version(&cluster.versions.nccl);
    let line_seed = stable_hash(argv.join(" ").as_bytes());
    let per_process = u64::from(opts.threads) * u64::from(opts.gpus);
    let mut ranks: Vec<Rank> = Vec::new();
    let mut members: Vec<Member> = Vec::new();
    let mut first_task = 0u32;
    for (node_index, (node, tasks)) in job.nodes.iter().enumerate() {
        let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "pid", &line_seed.to_string()]);
        let base = rng.range_u64(2_000, 990_000) as u32;
        // One rank per GPU: a node asked for more ranks than it has GPUs fails
        // with CUDA's error, which one rank too many shows; no more are made.
        let on_node = (u64::from(*tasks) * per_process).min(node.gpus.len() as u64 + 1) as u32;
        for local in 0..on_node {
            let t = (u64::from(local) / per_process) as u32;
            ranks.push(Rank { node, node_index, task: first_task + t, pid: base + t, device: local, local });
        }
        first_task += tasks;
        members.push(Member { node, ranks: on_node });
    }
    let nranks = ranks.len() as u64;
    let mut out = Lines { lines: Vec::new() };
    if version >= (2, 18, 0) {
        let code = nccl_code(&cluster.versions.nccl);
        out.push(0, format!("# nccl-tests version {}.{}.{} nccl-headers={code} nccl-library={code}", version.0, version.1, version.2));
    }
    if version >= (2, 17, 0) {
        out.push(0, format!("# Collective test starting: {program}"));
    }
    let (step, kind) = if opts.factor > 1 { (opts.factor, "factor") } else { (opts.step, "bytes") };
    let mut head = format!(
        "# nThread {} nGpus {} minBytes {} maxBytes {} step: {step}({kind}) warmup iters: {} iters: {} agg iters: {} validation: {} graph: {}",
        opts.threads, opts.gpus, opts.min, opts.max, opts.warmup, opts.iters, opts.agg, opts.check, opts.graph
    );
    if version >= (2, 18, 2) {
        head += " unalign: 0";
    }
    out.push(0, head);
    out.push(0, "#");
    out.push(0, "# Using devices");
    let env = |name: &str| job.env.get(name).cloned();
    let plan = Plan::new(cluster, &members, coll, &env);
    let first_pid = ranks.first().map_or(0, |r| r.pid);
    if let Err(failure) = &plan {
        let pid = ranks.iter().find(|r| r.node.hostname == failure.host).map_or(first_pid, |r| r.pid);
        out.push(0, format!("{}: Test CUDA failure common.cu:{} '{}'", failure.host, 891, failure.cuda));
        out.push(0, format!(" .. {} pid {pid}: Test failure common.cu:{}", failure.host, 842));
        return finish(job, out, 1, 2_000, Some(&failure.host));
    }
    let Ok(plan) = plan else { return Output::default() };
    for (r, rank) in ranks.iter().enumerate() {
        let Some(gpu) = rank.node.gpus.iter().filter(|g| g.is_visible()).nth(rank.device as usize) else { continue };
        out.push(
            0,
            format!(
                "#  Rank {r:2} Group {:2} Pid {:6} on {:>10} device {:2} [{}] {}",
                0,
                rank.pid,
                rank.node.hostname,
                rank.device,
                pci(&gpu.bus_id, version >= (2, 14, 1)),
                gpu.name
            ),
        );
    }
    let level = debug_level(&job.env);
    let mut connect = Vec::new();
    if level >= 3 {
        let log = nccl_init::log(cluster, &plan, &ranks, &job.env, coll, version);
        out.lines.extend(log.init);
        connect = log.connect;
    } else if level >= 1 {
        out.push(0, format!("NCCL version {}+cuda{}", cluster.versions.nccl, cluster.versions.cuda));
    }
    out.push(0, "#");
    let wide = version >= (2, 18, 0);
    let pad = if wide { " " } else { "" };
    out.push(0, format!("#                                                              out-of-place                       in-place          {pad}"));
    out.push(
        0,
        if wide {
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong".to_string()
        } else {
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong".to_string()
        },
    );
    out.push(0, format!("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)     {pad}       (us)  (GB/s)  (GB/s)       {pad}"));
    // From 2.22 NCCL connects when the first collective (the first size's warm-up) runs.
    out.lines.extend(connect);
    // A rail with a failing cable aborts large transfers with completion errors.
    let failing = (plan.nnodes > 1)
        .then(|| {
            job.nodes
                .iter()
                .zip(&plan.nets)
                .find_map(|((node, _), net)| net.hcas.iter().find(|&&i| node.hcas[i].port.symbol_errors_per_hour >= 1000).map(|&i| (*node, i)))
        })
        .flatten();
    let factor = coll.bus_factor(nranks);
    let mut sizes = Vec::new();
    let mut size = opts.min;
    while size <= opts.max && sizes.len() < 4096 {
        sizes.push(size);
        let next = if opts.factor > 1 { size.saturating_mul(opts.factor) } else { size.saturating_add(opts.step) };
        if next == size {
            break;
        }
        size = next;
    }
    let (mut bw_sum, mut bw_count, mut elapsed_us) = (0.0, 0u32, 0.0);
    // Bytes each node's collective operations moved, warm-up included.
    let mut moved = 0.0f64;
    let wrong = if opts.check == 0 { "N/A" } else { "0" };
    let root = if coll.rooted() { opts.root.to_string() } else { "-1".to_string() };
    let mut first = true;
    for (type_name, type_size) in &opts.types {
        for op in &opts.ops {
            for &requested in &sizes {
                let (bytes, count) = coll.size_count(requested, *type_size, nranks);
                if let Some((node, hca)) = failing.filter(|_| bytes >= 16 << 20) {
                    completion_error(cluster, node, hca, &ranks, level, &job.env, &mut out);
                    let pid = ranks.iter().find(|r| r.node.hostname == node.hostname).map_or(first_pid, |r| r.pid);
                    out.push(0, format!("{}: Test NCCL failure common.cu:1177 'remote process exited or there was a network error / '", node.hostname));
                    out.push(0, format!(" .. {} pid {pid}: Test failure common.cu:1040", node.hostname));
                    return finish(job, out, 1, 3_000 + (elapsed_us / 1000.0) as u64, Some(&node.hostname));
                }
                let mut row = format!("{bytes:12}  {count:12}  {type_name:>8}  {op:>6}  {root:>6}");
                for place in ["oop", "ip"] {
                    let mut rng = Rng::derive(cluster.seed, &[&line_seed.to_string(), type_name, op, &bytes.to_string(), place]);
                    let mut t = plan.measure(bytes, opts.iters, &mut rng);
                    if first && place == "oop" && t < 60.0 {
                        t *= 1.6 + 1.2 * rng.unit_f64();
                    }
                    let algbw = bytes as f64 / t / 1e3;
                    let busbw = algbw * factor;
                    bw_sum += busbw;
                    bw_count += 1;
                    elapsed_us += t * f64::from(opts.iters * opts.agg + opts.warmup);
                    moved += bytes as f64 * f64::from(opts.iters * opts.agg + opts.warmup);
                    if wide {
                        row += &format!("  {}  {}  {}  {wrong:>6}", fmt_time(t), fmt_bw(algbw, true), fmt_bw(busbw, true));
                    } else {
                        row += &format!("  {}  {}  {}  {wrong:>5}", fmt_time(t), fmt_bw(algbw, false), fmt_bw(busbw, false));
                    }
                }
                first = false;
                out.push(0, row);
            }
        }
    }
    out.push(0, "# Out of bounds values : 0 OK");
    out.push(0, format!("# Avg bus bandwidth    : {} ", fmt_g(if bw_count > 0 { bw_sum / f64::from(bw_count) } else { 0.0 })));
    out.push(0, "#");
    if version >= (2, 17, 0) {
        out.push(0, format!("# Collective test concluded: {program}"));
        out.push(0, "#");
    }
    if level >= 3 && nccl_init::init_on(&job.env, &cluster.versions.nccl) {
        for rank in nccl_init::shown(&plan, &ranks) {
            out.push(
                rank.task,
                format!(
                    "{} comm {} rank {} nranks {nranks} cudaDev {} busId {} - Destroy COMPLETE",
                    nccl_init::main_prefix(rank),
                    nccl_init::comm_ptr(cluster, rank),
                    rank_index(&ranks, rank),
                    rank.device,
                    nccl_init::bus_id(rank)
                ),
            );
        }
    }
    let init_ms = 1_500 + 150 * (64 - nranks.leading_zeros()) as u64;
    let mut output = finish(job, out, 0, init_ms + (elapsed_us / 1000.0) as u64, None);
    if !plan.socket && plan.nnodes > 1 {
        output.changes = network_traffic(&job.nodes, &plan.nets, moved * coll.bus_factor(plan.nnodes));
    }
    output
}

/// What crosses the network: a node sends and receives `per_node` bytes
/// (the collective's volume times its bus factor over the nodes), spread
/// evenly over the ports NCCL uses there.
fn network_traffic(nodes: &[(&Node, u32)], nets: &[NodeNet], per_node: f64) -> Vec<Change> {
    let mut changes = Vec::new();
    for ((node, _), net) in nodes.iter().zip(nets) {
        let share = (per_node / net.hcas.len().max(1) as f64).min(u64::MAX as f64) as u64;
        for &index in &net.hcas {
            if let Some(hca) = node.hcas.get(index) {
                changes.push(Change::Traffic { node: node.hostname.clone(), device: hca.name.clone(), sent_bytes: share, received_bytes: share });
            }
        }
    }
    changes
}

fn finish(job: &Job, out: Lines, status: i32, duration_ms: u64, failed_host: Option<&str>) -> Output {
    let tasks: u32 = job.nodes.iter().map(|(_, t)| t).sum();
    let width = (tasks.saturating_sub(1)).to_string().len();
    let mut stdout = String::new();
    for (task, line) in out.lines {
        if job.label {
            stdout += &format!("{task:>width$}: ");
        }
        stdout += &line;
        stdout.push('\n');
    }
    let mut stderr = String::new();
    if let (Some(host), true) = (failed_host, tasks > 1 || job.label) {
        stderr = format!("srun: error: {host}: task 0: Exited with exit code 1\n");
    }
    Output { stdout, stderr, status, duration_ms, ..Output::default() }
}

fn rank_index(ranks: &[Rank], rank: &Rank) -> usize {
    ranks.iter().position(|r| std::ptr::eq(r, rank)).unwrap_or(0)
}

/// NET/IB completion errors (status 12, retry exceeded) on a rail with a failing link.
fn completion_error(cluster: &Cluster, node: &Node, hca: usize, ranks: &[Rank], level: u8, env: &BTreeMap<String, String>, out: &mut Lines) {
    if level < 2 {
        return;
    }
    // The rank whose GPU shares the HCA's PCIe switch: the one sending through it.
    let switch = node.hcas.get(hca).map(|h| h.pcie_switch);
    let on_rail = |r: &&Rank| r.node.hostname == node.hostname && node.gpus.get(r.local as usize).map(|g| g.pcie_switch) == switch;
    let fallback = |r: &&Rank| r.node.hostname == node.hostname && r.local as usize % node.hcas.len().max(1) == hca;
    let Some(rank) = ranks.iter().find(on_rail).or_else(|| ranks.iter().find(fallback)) else { return };
    let when = if nccl_code(&cluster.versions.nccl) >= 22600 {
        let c = civil(cluster.now);
        format!("[{:04}-{:02}-{:02} {:02}:{:02}:{:02}] ", c.year, c.month, c.day, c.hour, c.minute, c.second)
    } else {
        String::new()
    };
    let peer = ranks.iter().find(|r| r.node.hostname != node.hostname).map_or(node, |r| r.node);
    // The GID the connection uses, as inet_ntop prints it: on RoCE the
    // site's GID index 3 (RoCE v2 over the rail's address), on IB the port's.
    let gid = |n: &Node| {
        let Some(found) = n.hcas.get(hca) else { return String::new() };
        let table = crate::commands::fabric::roce::gid_table(n, found);
        if let Some(ip) = table.iter().find(|g| g.index == 3).and_then(|g| g.ipv4.clone()) {
            return format!("::ffff:{ip}");
        }
        let g = found.port.guid;
        format!("fe80::{:x}:{:x}:{:x}:{:x}", g >> 48, (g >> 32) & 0xffff, (g >> 16) & 0xffff, g & 0xffff)
    };
    let host = nccl_init::prefix(rank).trim_end_matches(" NCCL INFO").to_string();
    let peer_ip = nccl_init::oob(peer, env);
    let peer_ip = peer_ip.split(':').nth(1).unwrap_or("").trim_end_matches("<0>");
    let name = node.hcas.get(hca).map_or("mlx5_0", |h| h.name.as_str());
    out.push(rank.task, format!("{when}{host} transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer {peer_ip}<{}> with status=12 opcode=32224 len=0 vendor err 129 (Recv) localGid {} remoteGids{} hca {name}", 39000 + rank.pid % 20000, gid(node), gid(peer)));
    if level >= 3 {
        for text in ["transport/net.cc:1362 -> 6", "proxy.cc:728 -> 6", "proxy.cc:912 -> 6 [Progress Thread]"] {
            out.push(rank.task, format!("{} {text}", nccl_init::prefix(rank)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_options_answer_as_getopt_and_nccl_tests_do() {
        // getopt complains on stderr and returns '?'; nccl-tests prints that
        // and its usage on stdout, and main returns 0 (src/common.cu).
        let out = crate::testing::run_on_first_node("all_reduce_perf -x");
        assert_eq!(out.stderr, "all_reduce_perf: invalid option -- 'x'\n");
        assert!(out.stdout.starts_with("invalid option '?'\nUSAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] \n"), "{}", out.stdout);
        assert_eq!(out.status, 0);
        let out = crate::testing::run_on_first_node("all_reduce_perf --bogus");
        assert_eq!(out.stderr, "all_reduce_perf: unrecognized option '--bogus'\n");
        let out = crate::testing::run_on_first_node("all_reduce_perf -b 8G -e 8");
        assert_eq!((out.stderr.as_str(), out.status), ("invalid sizes for 'minbytes' and 'maxbytes': 8589934592 > 8\n", 255));
        assert_eq!(crate::testing::run_on_first_node("all_reduce_perf -h").status, 0);
    }

    #[test]
    fn formats_like_c() {
        assert_eq!(fmt_g(139.56), "139.56");
        assert_eq!(fmt_g(85.52941), "85.5294");
        assert_eq!(fmt_g(0.0), "0");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_time(68652.3), "  68652");
        assert_eq!(fmt_time(132.64), "  132.6");
        assert_eq!(parse_size("16g"), Some(16 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(pci("00000000:19:00.0", true), "0000:19:00");
        assert_eq!(pci("00000000:19:00.0", false), "0x19");
    }
}
