//! perftest: `ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_write_lat`,
//! `ib_read_lat`, `ib_send_lat`, sharing one parser and one formatter
//! (layouts: ../shared/reference/fabric/FACTS.md §1 and its captures; numbers:
//! `crate::perf::rdma`).
//!
//! Roles are the real tools': with no host argument the tool is a server. It
//! prints its banner and parameter block and returns `Change::Listen`
//! (port 18515 or `-p`). Run in the foreground a real server would block until
//! a client comes; the emulator cannot block, so a foreground server also
//! returns at once and keeps listening (the shell's job system treats the
//! listener as the running server; `kill` or a client ends it). A client
//! (`ib_write_bw -d mlx5_0 gpu-002`) needs a listener of the same program on
//! that node and port; it prints its whole run, stops the server
//! (`Change::StopListening`) and hands the server's remaining lines to
//! `Output::background`. The server's device, size, iterations and GPU come
//! from the listener's args. Layout follows the cluster's perftest version
//! (MiB/sec and 5 spaces from 24.07, `Lock-free` from 24.10, `CQE Poll
//! Batch` and `Disabling dynamic polling` from 25.04, `Using Enhanced
//! Reorder` and CQ moderation 1 from 26.x).
//!
//! The declared examples are servers, because a client needs one running.

use crate::commands::fabric::ib_common::strtol;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::{Change, Listener};
use crate::model::fabric::{Hca, LinkLayer, PortState};
use crate::model::{Cluster, Node};
use crate::perf::rdma::{self, End, Test, Verb};
use crate::rng::Rng;

pub struct Perftest {
    signature: &'static Signature,
    verb: Verb,
    lat: bool,
}

const LINE: &str = "---------------------------------------------------------------------------------------\n";

macro_rules! flag {
    ($s:expr, $l:expr, $v:expr, $h:expr) => {
        Flag { short: $s, long: $l, value: $v, help: $h }
    };
}

macro_rules! common_flags {
    ($($extra:expr),*) => {
        &[
            flag!(Some('d'), Some("ib-dev"), Some("DEV"), "use IB device DEV (default: the first device found)"),
            flag!(Some('i'), Some("ib-port"), Some("PORT"), "use port PORT of the IB device (default 1)"),
            flag!(Some('x'), Some("gid-index"), Some("INDEX"), "test uses GID with GID index INDEX"),
            flag!(Some('s'), Some("size"), Some("SIZE"), "size of message to exchange"),
            flag!(Some('a'), Some("all"), None, "run sizes from 2 till 2^23"),
            flag!(Some('n'), Some("iters"), Some("N"), "number of exchanges"),
            flag!(Some('D'), Some("duration"), Some("SEC"), "run the test for a fixed duration in seconds"),
            flag!(Some('q'), Some("qp"), Some("N"), "number of QPs"),
            flag!(Some('F'), Some("CPU-freq"), None, "do not fail even if cpufreq_ondemand module is loaded"),
            flag!(Some('R'), Some("rdma_cm"), None, "connect QPs with rdma_cm and run test on those QPs"),
            flag!(Some('m'), Some("mtu"), Some("MTU"), "MTU size: 256 - 4096 (default: the port MTU)"),
            flag!(Some('p'), Some("port"), Some("PORT"), "listen on/connect to port PORT (default 18515)"),
            flag!(None, Some("report_gbits"), None, "report max/average BW in Gb/sec instead of MiB/sec"),
            flag!(None, Some("use_cuda"), Some("GPU"), "use CUDA memory of GPU index GPU for the buffers"),
            flag!(Some('h'), Some("help"), None, "show this help screen"),
            $($extra),*
        ]
    };
}

static BW_FLAGS: &[Flag] = common_flags!(flag!(Some('b'), Some("bidirectional"), None, "measure bidirectional bandwidth"));
static LAT_FLAGS: &[Flag] = common_flags!();

macro_rules! tool {
    ($stat:ident, $sig:ident, $name:expr, $what:expr, $verb:expr, $lat:expr, $flags:expr) => {
        static $sig: Signature = Signature {
            name: $name,
            summary: $what,
            usage: concat!($name, " [options] [server host]"),
            flags: $flags,
            examples: &[
                Example {
                    command: concat!($name, " -d mlx5_0"),
                    description: concat!("start a server on mlx5_0; then on another node run the client `", $name, " -d mlx5_0 <this host>`"),
                },
                Example { command: concat!($name, " -d mlx5_1 -p 18516"), description: "a server on mlx5_1, listening on TCP port 18516" },
            ],
        };
        pub static $stat: Perftest = Perftest { signature: &$sig, verb: $verb, lat: $lat };
    };
}

tool!(WRITE_BW, WRITE_BW_SIG, "ib_write_bw", "measure RDMA write bandwidth between two hosts (perftest)", Verb::Write, false, BW_FLAGS);
tool!(READ_BW, READ_BW_SIG, "ib_read_bw", "measure RDMA read bandwidth between two hosts (perftest)", Verb::Read, false, BW_FLAGS);
tool!(SEND_BW, SEND_BW_SIG, "ib_send_bw", "measure RDMA send bandwidth between two hosts (perftest)", Verb::Send, false, BW_FLAGS);
tool!(WRITE_LAT, WRITE_LAT_SIG, "ib_write_lat", "measure RDMA write latency between two hosts (perftest)", Verb::Write, true, LAT_FLAGS);
tool!(READ_LAT, READ_LAT_SIG, "ib_read_lat", "measure RDMA read latency between two hosts (perftest)", Verb::Read, true, LAT_FLAGS);
tool!(SEND_LAT, SEND_LAT_SIG, "ib_send_lat", "measure RDMA send latency between two hosts (perftest)", Verb::Send, true, LAT_FLAGS);

/// What the command line asks for.
#[derive(Clone, Debug, Default)]
struct Params {
    dev: Option<String>,
    ib_port: i64,
    gid: Option<i64>,
    size: Option<u64>,
    all: bool,
    iters: Option<u64>,
    duration: Option<u64>,
    qps: u32,
    rdma_cm: bool,
    bidir: bool,
    mtu: Option<u32>,
    port: u16,
    gbits: bool,
    cuda: Option<u32>,
    help: bool,
    host: Option<String>,
}

/// The perftest version as (major, minor): `25.01.0` → (25, 1), `4.5-0.20` → (4, 5).
fn version(cluster: &Cluster) -> (u32, u32) {
    let mut parts = cluster.versions.perftest.split(['.', '-']).map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

fn hex(value: u64, width: usize) -> String {
    if value == 0 {
        "0".repeat(width)
    } else {
        format!("0x{value:0w$x}", w = width.saturating_sub(2))
    }
}

/// One side's queue pair as its address line shows it.
struct Addr {
    lid: u16,
    qpn: u64,
    psn: u64,
    rkey: u64,
    vaddr: u64,
    gid: String,
}

impl Addr {
    fn new(node: &Node, hca: &Hca, key: &str, seed: u64) -> Addr {
        let mut rng = Rng::derive(seed, &["perftest-qp", key, &hca.name]);
        let port = &hca.port;
        let gid: Vec<u8> = if port.link_layer == LinkLayer::Ethernet {
            // GID index 3: RoCE v2 over the rail's IPv4 address.
            let rail = node.hcas.iter().position(|h| h.name == hca.name).unwrap_or(0);
            let mut g = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255];
            g.extend(crate::model::network::rail_ipv4(&node.hostname, rail));
            g
        } else {
            let mut g = vec![254, 128, 0, 0, 0, 0, 0, 0];
            g.extend(port.guid.to_be_bytes());
            g
        };
        Addr {
            lid: port.lid,
            qpn: rng.range_u64(0x40, 0x1fff),
            psn: rng.range_u64(0, 0xff_ffff),
            rkey: rng.range_u64(0x1f_f000, 0x1f_ffff),
            vaddr: 0x7000_0000_0000 + rng.range_u64(0, 0xfff_ffff) * 0x1000,
            gid: gid.iter().map(|b| format!("{b:02}")).collect::<Vec<_>>().join(":"),
        }
    }

    fn lines(&self, side: &str, tool: &Perftest, qps: u32, show_gid: bool) -> String {
        let mut out = String::new();
        for qp in 0..u64::from(qps.max(1)) {
            out += &format!(
                " {side} address: LID {} QPN {} PSN {}",
                hex(u64::from(self.lid), 4),
                hex(self.qpn + qp, 6),
                hex((self.psn + qp * 0x1b1) & 0xff_ffff, 6)
            );
            if tool.verb == Verb::Read {
                out += " OUT 0x10";
            }
            if tool.verb != Verb::Send {
                out += &format!(" RKey {} VAddr {}", hex(self.rkey, 8), hex(self.vaddr + qp * 0x1_0000, 16));
            }
            out.push('\n');
            if show_gid {
                out += &format!(" GID: {}\n", self.gid);
            }
        }
        out
    }
}

fn usage(tool: &Perftest) -> String {
    let name = tool.signature.name;
    let mut out = format!("Usage:\n  {name}            start a server and wait for connection\n  {name} <host>     connect to server at <host>\n\nOptions:\n");
    for flag in tool.signature.flags {
        out += &format!("  {:<28} {}\n", flag.display(), flag.help);
    }
    out
}

fn parse_error(tool: &Perftest, message: String) -> Output {
    Output { stdout: String::new(), stderr: format!("{message} Parser function exited with Error\n"), status: 1, ..Output::default() }
        .with_usage_if(message.contains("Invalid Command"), tool)
}

trait WithUsage {
    fn with_usage_if(self, cond: bool, tool: &Perftest) -> Output;
}

impl WithUsage for Output {
    fn with_usage_if(mut self, cond: bool, tool: &Perftest) -> Output {
        if cond {
            self.stdout = usage(tool);
        }
        self
    }
}

fn parse(tool: &Perftest, args: &[String]) -> Result<Params, Output> {
    let name = tool.signature.name;
    let mut p = Params { ib_port: 1, qps: 1, port: 18515, ..Params::default() };
    let range = |value: &str, label: &str, lo: i64, hi: i64| -> Result<i64, Output> {
        let n = strtol(value);
        if n < lo || n > hi {
            return Err(parse_error(tool, format!(" {label} should be between {lo} and {hi}\n")));
        }
        Ok(n)
    };
    for arg in scan(tool.signature, args) {
        match arg {
            Arg::Positional(host) if p.host.is_none() => p.host = Some(host),
            Arg::Positional(_) => {}
            Arg::Flag(flag, value) => {
                let v = value.unwrap_or_default();
                match flag.long.unwrap_or_default() {
                    "ib-dev" => p.dev = Some(v),
                    "ib-port" => p.ib_port = range(&v, "IB Port", 1, 3)?,
                    "gid-index" => p.gid = Some(range(&v, "GID index", 0, 255)?),
                    "size" => p.size = Some(range(&v, "Message Size", 1, 2_147_483_647)? as u64),
                    "all" => p.all = true,
                    "iters" => p.iters = Some(range(&v, "Iteration num", 5, 100_000_000)? as u64),
                    "duration" => p.duration = Some(range(&v, "Duration", 1, 10_000)? as u64),
                    "qp" => p.qps = range(&v, "num of QPs", 1, 16_384)? as u32,
                    "rdma_cm" => p.rdma_cm = true,
                    "bidirectional" => p.bidir = true,
                    "mtu" => {
                        let mtu = strtol(&v);
                        if ![256, 512, 1024, 2048, 4096].contains(&mtu) {
                            return Err(parse_error(tool, format!(" Invalid MTU - {mtu} \n Please choose mtu from {{256,512,1024,2048,4096}}\n")));
                        }
                        p.mtu = Some(mtu as u32);
                    }
                    "port" => p.port = range(&v, "Port", 1, 65_535)? as u16,
                    "report_gbits" => p.gbits = true,
                    "use_cuda" => p.cuda = Some(range(&v, "CUDA device", 0, 1023)? as u32),
                    "help" => p.help = true,
                    _ => {}
                }
            }
            other => {
                let complaint = crate::commands::options::complaint(name, &other);
                return Err(parse_error(tool, format!("{complaint} Invalid Command or flag.\n Please check command line and run again.\n\n")));
            }
        }
    }
    Ok(p)
}

/// One side of a run: its node, HCA, GPU and parameters.
struct Side<'a> {
    node: &'a Node,
    hca: &'a Hca,
    gpu: Option<&'a crate::model::Gpu>,
    params: Params,
}

impl<'a> Side<'a> {
    /// Opens the device as perftest does; the error is perftest's stderr.
    fn open(cluster: &'a Cluster, node: &'a Node, params: Params, out: &mut String) -> Result<Side<'a>, String> {
        let hca = match &params.dev {
            Some(dev) => node.hca(dev).ok_or_else(|| format!("IB device {dev} not found\n Unable to find the Infiniband/RoCE device\n"))?,
            None => node.hcas.first().ok_or_else(|| " No IB devices found\n".to_string())?,
        };
        if params.ib_port != 1 {
            return Err(format!(" Unable to query port {} attributes\n Couldn't get context for the device\n", params.ib_port));
        }
        if hca.port.state != PortState::Active {
            let state = ["Nop", "Down", "Init", "Armed", ""][usize::from(hca.port.state.code()).min(4)];
            return Err(format!(" Port number 1 state is {state}\n Couldn't get context for the device\n"));
        }
        let gpu = match params.cuda {
            // libcuda of a newer driver than the loaded module: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH.
            Some(_) if node.driver_mismatch() => return Err("initializing CUDA\ncuInit(0) returned 803\n Couldn't init GPU context\n".to_string()),
            Some(index) => {
                let gpu = node
                    .gpu(index)
                    .filter(|g| g.is_visible())
                    .ok_or_else(|| format!("initializing CUDA\nNo CUDA device {index}\n Couldn't init GPU context\n"))?;
                let bus = gpu.kernel_bus_id();
                *out += &format!(
                    "initializing CUDA\nListing all CUDA devices in system:\nCUDA device {index}: PCIe address is {}\n\nPicking device No. {index}\n[pid = {}, dev = {index}] device name = [{}]\ncreating CUDA Ctx\nmaking it the current CUDA Ctx\n",
                    bus.get(5..10).unwrap_or("00:00").to_uppercase(),
                    10_000 + Rng::derive(cluster.seed, &["perftest-pid", &node.hostname]).range_u64(0, 89_999),
                    gpu.name
                );
                Some(gpu)
            }
            None => None,
        };
        Ok(Side { node, hca, gpu, params })
    }

    fn end(&self) -> End<'a> {
        End { hca: self.hca, gpu: self.gpu }
    }
}

impl Perftest {
    fn kind(&self) -> &'static str {
        match self.verb {
            Verb::Write => "RDMA_Write",
            Verb::Read => "RDMA_Read",
            Verb::Send => "Send",
        }
    }

    fn default_iters(&self) -> u64 {
        if !self.lat && self.verb == Verb::Write {
            5000
        } else {
            1000
        }
    }

    fn inline(&self, v: (u32, u32)) -> u64 {
        match (self.lat, self.verb) {
            (_, Verb::Read) | (false, _) => 0,
            _ if v.0 >= 24 => 236,
            _ => 220,
        }
    }

    /// The title and parameter block, ending with a RESULT_LINE.
    fn header(&self, v: (u32, u32), side: &Side, mtu: u32, server: bool) -> String {
        let p = &side.params;
        let bidir = p.bidir && !self.lat;
        let mut out = format!(
            "{LINE}                    {} {}{}Test\n",
            self.kind(),
            if bidir { "Bidirectional " } else { "" },
            if self.lat { "Latency " } else { "BW " }
        );
        out += &format!(" Dual-port       : OFF\t\tDevice         : {}\n", side.hca.name);
        out += &format!(" Number of qps   : {}\t\tTransport type : IB\n", p.qps);
        out += " Connection type : RC\t\tUsing SRQ      : OFF\n";
        out +=
            &format!(" PCIe relax order: {}{}\n", if self.lat && v.0 < 24 { "OFF" } else { "ON" }, if v >= (24, 10) { "\t\tLock-free      : OFF" } else { "" });
        out += &format!(" ibv_wr* API     : ON{}\n", if v.0 >= 26 { "\t\tUsing Enhanced Reorder      : OFF" } else { "" });
        let iters = p.iters.unwrap_or(self.default_iters());
        if !server || bidir {
            out += &format!(" TX depth        : {}\n", if self.lat { 1 } else { iters.min(128) });
        }
        if self.verb == Verb::Send && (server || bidir) {
            out += " RX depth        : 512\n";
        }
        if !self.lat {
            out += &format!(" CQ Moderation   : {}\n", if v.0 >= 26 { 1 } else { 100 });
            if v >= (25, 4) {
                out += &format!(" CQE Poll Batch  : {}\n", if self.verb == Verb::Write { "Dynamic" } else { "16" });
            }
        }
        let ethernet = side.hca.port.link_layer == LinkLayer::Ethernet;
        out += &format!(" Mtu             : {mtu}[B]\n Link type       : {}\n", if ethernet { "Ethernet" } else { "IB" });
        if let Some(gid) = p.gid.or(ethernet.then_some(3)) {
            out += &format!(" GID index       : {gid}\n");
        }
        out += &match self.verb {
            Verb::Read => " Outstand reads  : 16\n".to_string(),
            _ => format!(" Max inline data : {}[B]\n", self.inline(v)),
        };
        out += &format!(" rdma_cm QPs\t : {}\n Data ex. method : {}", if p.rdma_cm { "ON" } else { "OFF" }, if p.rdma_cm { "rdma_cm" } else { "Ethernet" });
        if p.rdma_cm && server {
            out += &format!("\n{LINE} Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP");
        }
        out + "\n" + LINE
    }

    /// Server start: banner and parameter block, then listen.
    fn serve(&self, inv: &Invocation, params: Params) -> Output {
        let v = version(inv.cluster);
        let mut out = String::new();
        let side = match Side::open(inv.cluster, inv.node, params, &mut out) {
            Ok(side) => side,
            Err(error) => return Output { stdout: out, stderr: error, status: 1, ..Output::default() },
        };
        out += "\n************************************\n* Waiting for client to connect... *\n************************************\n";
        if v >= (25, 4) && self.verb != Verb::Write {
            out += "Disabling dynamic polling\n";
        }
        let mtu = side.params.mtu.unwrap_or(4096).min(side.hca.port.active_mtu);
        out += &self.header(v, &side, mtu, true);
        let pid = Rng::derive(inv.cluster.seed, &["perftest-pid", &inv.node.hostname, &inv.argv.join(" ")]).range_u64(3000, 99_999) as u32;
        let listener = Listener { program: self.signature.name.to_string(), args: inv.args().to_vec(), port: side.params.port, pid };
        Output { stdout: out, changes: vec![Change::Listen { node: inv.node.hostname.clone(), listener }], ..Output::default() }
    }

    fn client(&self, inv: &Invocation, params: Params, host: &str) -> Output {
        let cluster = inv.cluster;
        let v = version(cluster);
        let port = params.port;
        let fail = |stdout: String, stderr: String| Output { stdout, stderr, status: 1, duration_ms: 1000, ..Output::default() };
        let mut out = String::new();
        let client = match Side::open(cluster, inv.node, params, &mut out) {
            Ok(side) => side,
            Err(error) => return fail(out, error),
        };
        let target = if host == "localhost" || host == "127.0.0.1" { Some(inv.node) } else { cluster.node(host) };
        let is_ip = host.split('.').count() == 4 && host.split('.').all(|o| o.parse::<u8>().is_ok());
        let Some(target) = target else {
            let refused = format!("Couldn't connect to {host}:{port}\n Unable to init the socket connection\n");
            let unknown =
                format!("Name or service not known for {host}:{port}\nProblem in resolving basic address and port\n Unable to init the socket connection\n");
            return fail(out, if is_ip { refused } else { unknown });
        };
        let listener = target.listeners.iter().find(|l| l.port == port && l.program == self.signature.name && target.up(cluster.now));
        let Some(listener) = listener else {
            return fail(out, format!("Couldn't connect to {host}:{port}\n Unable to init the socket connection\n"));
        };
        let mut server_out = String::new(); // its CUDA lines were printed when it started
        let server_params = parse(self, &listener.args).unwrap_or_default();
        let server = match Side::open(cluster, target, server_params, &mut server_out) {
            Ok(side) => side,
            Err(error) => return fail(out, error),
        };
        if v >= (25, 4) && self.verb != Verb::Write {
            out += "Disabling dynamic polling\n";
        }
        let p = &client.params;
        let mtu = p.mtu.unwrap_or(4096).min(client.hca.port.active_mtu).min(server.hca.port.active_mtu);
        out += &self.header(v, &client, mtu, false);
        let key = inv.argv.join(" ");
        let local = Addr::new(client.node, client.hca, &format!("{key}/client"), cluster.seed);
        let remote = Addr::new(server.node, server.hca, &format!("{key}/server"), cluster.seed);
        let gid = |side: &Side| side.params.gid.is_some() || side.hca.port.link_layer == LinkLayer::Ethernet;
        out += &local.lines("local", self, p.qps, gid(&client));
        out += &remote.lines("remote", self, p.qps, gid(&client));
        out += LINE;
        let mut back = remote.lines("local", self, server.params.qps, gid(&server));
        back += &local.lines("remote", self, server.params.qps, gid(&server));
        back += LINE;

        let test = Test { verb: self.verb, qps: p.qps, mtu, bidirectional: p.bidir && !self.lat, cq_mod: if v.0 >= 26 { 1 } else { 100 } };
        let sizes: Vec<u64> = if p.all { (1..=23).map(|e| 1u64 << e).collect() } else { vec![p.size.unwrap_or(if self.lat { 2 } else { 65536 })] };
        let iters = p.iters.unwrap_or(self.default_iters());
        let (a, b) = (client.end(), server.end());
        let mut elapsed_us = 1_000_000.0;
        // Bytes the client's port sent and received (the server's the other way).
        let (mut sent, mut received) = (0u64, 0u64);
        if self.lat {
            let header = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
            out += header;
            back += header;
            for &size in &sizes {
                for (role, text, sep) in [("client", &mut out, "\t\t"), ("server", &mut back, "\t\t")] {
                    let mut rng = Rng::derive(cluster.seed, &["perftest", &key, &size.to_string(), role]);
                    let r = rdma::latency(&test, a, b, size, self.inline(v), &mut rng);
                    *text += &format!(
                        " {size:<7} {iters}          {:<7.2}        {:<7.2}      {:<7.2}  \t       {:<7.2}     \t{:<7.2}\t\t{:<7.2} {sep}{:<7.2}\n",
                        r.min, r.max, r.typical, r.average, r.stdev, r.p99, r.p999
                    );
                    if role == "client" {
                        elapsed_us += r.average * iters as f64 * 2.0;
                        // A ping-pong: each message goes there and back.
                        let moved = iters.saturating_mul(size);
                        sent = sent.saturating_add(moved);
                        received = received.saturating_add(moved);
                    }
                }
            }
            out += LINE;
            back += LINE;
        } else {
            let unit = if p.gbits {
                "Gb/sec"
            } else if v >= (24, 7) {
                "MiB/sec"
            } else {
                "MB/sec"
            };
            let header = format!(" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n");
            out += &header;
            back += &header;
            let gap = if v >= (24, 7) { "     " } else { "   " };
            let mut last = String::new();
            for &size in &sizes {
                let mut rng = Rng::derive(cluster.seed, &["perftest", &key, &size.to_string()]);
                let r = rdma::bandwidth(&test, a, b, size, &mut rng);
                let factor = if p.gbits { 125_000_000.0 } else { 1_048_576.0 };
                let (peak, avg, rate) = (r.peak / factor, r.average / factor, r.msg_rate / 1e6);
                let (n, peak) = match p.duration {
                    Some(d) => ((r.msg_rate * d as f64) as u64, 0.0),
                    None => (iters * u64::from(p.qps), peak),
                };
                elapsed_us += n as f64 * size as f64 / r.average.max(1.0) * 1e6;
                let moved = n.saturating_mul(size);
                // A read pulls the server's memory to the client.
                if self.verb == Verb::Read || test.bidirectional {
                    received = received.saturating_add(moved);
                }
                if self.verb != Verb::Read || test.bidirectional {
                    sent = sent.saturating_add(moved);
                }
                last = if p.gbits && avg < 0.1 {
                    format!(" {size:<7}    {n}           {peak:<7.6}            {avg:<7.6}            {rate:<7.6}\n")
                } else {
                    format!(" {size:<7}    {n:<10}       {peak:<7.2}            {avg:<7.2}\t\t{gap}{rate:<7.6}\n")
                };
                out += &last;
                if test.bidirectional {
                    back += &last;
                }
            }
            if !test.bidirectional && self.verb == Verb::Write && p.all {
                back += &last;
            }
            out += LINE;
            if test.bidirectional || self.verb == Verb::Write {
                back += LINE;
            } else {
                back.truncate(back.len() - header.len());
            }
        }
        Output {
            stdout: out,
            background: back,
            duration_ms: (elapsed_us / 1000.0).min(3.6e6) as u64,
            changes: vec![
                Change::StopListening { node: target.hostname.clone(), port },
                Change::Traffic { node: inv.node.hostname.clone(), device: client.hca.name.clone(), sent_bytes: sent, received_bytes: received },
                Change::Traffic { node: target.hostname.clone(), device: server.hca.name.clone(), sent_bytes: received, received_bytes: sent },
            ],
            ..Output::default()
        }
    }
}

impl Command for Perftest {
    fn signature(&self) -> &'static Signature {
        self.signature
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let params = match parse(self, invocation.args()) {
            Ok(params) => params,
            Err(output) => return output,
        };
        if params.help {
            return Output::ok(usage(self));
        }
        match params.host.clone() {
            Some(host) => self.client(invocation, params, &host),
            None => self.serve(invocation, params),
        }
    }
}
