//! NCCL's own INFO log for an nccl-tests job (NCCL_DEBUG=INFO): the whole
//! initialisation of the communicator for the lab's NCCL version, from the
//! bootstrap through network and plugin loading, topology, rings and trees,
//! buffers, proxy threads, tuning and environment overrides to `Init
//! COMPLETE`, and, from 2.22 on (runtime connect), the connections NCCL makes
//! when the first collective runs. The formats are NCCL's printf formats per
//! release (init.cc, bootstrap.cc, graph/, transport/, proxy.cc and plugin
//! loading, read in NVIDIA/nccl's tags 2.18.5 to 2.28.9; 2.28 and later are
//! printed as 2.27 except where noted); the values come from the model: the
//! job's ranks and nodes, the GPUs' NVLinks and NUMA nodes, the HCAs NCCL
//! uses (`Plan::nets`).
//!
//! Rings and trees model NCCL's graph search on NVSwitch nodes, where every
//! GPU reaches every other: search channel c enters each node at the GPU of
//! rail c; rings walk down from it and trees up, nodes in order; channels are
//! duplicated as ncclTopoPostset does (twice, and twice again across Hopper
//! nodes), and the two trees across nodes are NCCL's double binary tree.
//!
//! Real NCCL prints every rank's lines as its threads run; these are printed
//! phase by phase for the ranks `shown` picks, each rank's lines in its own
//! order.

use std::collections::{BTreeMap, BTreeSet};

use super::nccl_tests::Rank;
use crate::model::fabric::LinkLayer;
use crate::model::gpu::{FabricState, Gpu};
use crate::model::network::{frontend_ip, rail_ip, FRONTEND_NIC};
use crate::model::{Cluster, Node};
use crate::perf::collective::{Algo, Coll, Intra, Plan};
use crate::rng::Rng;

/// NCCL's debug subsystems (nccl_common.h).
mod sys {
    pub const INIT: u64 = 0x1;
    pub const COLL: u64 = 0x2;
    pub const P2P: u64 = 0x4;
    pub const SHM: u64 = 0x8;
    pub const NET: u64 = 0x10;
    pub const GRAPH: u64 = 0x20;
    pub const TUNING: u64 = 0x40;
    pub const ENV: u64 = 0x80;
    pub const ALLOC: u64 = 0x100;
    pub const CALL: u64 = 0x200;
    pub const PROXY: u64 = 0x400;
    pub const NVLS: u64 = 0x800;
    pub const BOOTSTRAP: u64 = 0x1000;
    pub const REG: u64 = 0x2000;
    pub const PROFILE: u64 = 0x4000;
    pub const RAS: u64 = 0x8000;
    pub const ALL: u64 = !0;
}

/// At most this many ranks print NCCL lines: each prints a few hundred at
/// most (one connection line per channel and peer), so the log stays within
/// a few MiB whatever the job.
pub(super) const MAX_SHOWN_RANKS: usize = 64;

/// What NCCL prints for a job: its initialisation (before the results
/// table) and the connections made at the first collective (after the
/// table's header; empty before 2.22, which connects during init).
pub(super) struct Log {
    pub init: Vec<(u32, String)>,
    pub connect: Vec<(u32, String)>,
}

/// The NCCL version as a code, 2.26.2 -> 22602.
pub(super) fn nccl_code(nccl: &str) -> u32 {
    let parts: Vec<u32> = nccl.split(['.', '+', '-']).take(3).map(|p| p.parse().unwrap_or(0).min(99)).collect();
    parts.first().unwrap_or(&2) * 10000 + parts.get(1).unwrap_or(&0) * 100 + parts.get(2).unwrap_or(&0)
}

/// The ranks whose NCCL lines are shown: all of the first node's, then
/// local rank 0 of up to 16 more nodes and of every node whose network
/// differs from the first node's; at most [`MAX_SHOWN_RANKS`].
pub(super) fn shown<'r, 'a>(plan: &Plan, ranks: &'r [Rank<'a>]) -> Vec<&'r Rank<'a>> {
    let normal = plan.nets.first().map(|n| n.hcas.len());
    ranks
        .iter()
        .filter(|r| r.node_index == 0 || (r.local == 0 && (r.node_index < 16 || plan.nets.get(r.node_index).map(|n| n.hcas.len()) != normal)))
        .take(MAX_SHOWN_RANKS)
        .collect()
}

/// A rank's init thread (the one ncclCommInitRank's job runs on).
pub(super) fn init_tid(rank: &Rank) -> u32 {
    rank.pid + 50 + rank.local % 64
}

/// `host:pid:tid [dev] NCCL INFO` of a rank's init thread.
pub(super) fn prefix(rank: &Rank) -> String {
    format!("{}:{}:{} [{}] NCCL INFO", rank.node.hostname, rank.pid, init_tid(rank), rank.device)
}

/// `host:pid:pid [dev] NCCL INFO` of the process's main thread, which
/// destroys the communicators when the test ends.
pub(super) fn main_prefix(rank: &Rank) -> String {
    format!("{}:{}:{} [{}] NCCL INFO", rank.node.hostname, rank.pid, rank.pid, rank.device)
}

/// The communicator's address in this rank's process (`%p`).
pub(super) fn comm_ptr(cluster: &Cluster, rank: &Rank) -> String {
    let mut rng = Rng::derive(cluster.seed, &[&rank.node.hostname, "comm", &rank.pid.to_string(), &rank.local.to_string()]);
    format!("0x{:x}", 0x5500_0000_0000u64 + (rng.range_u64(0, 0xffff_ffff) << 4))
}

fn gpu_of<'a>(rank: &Rank<'a>) -> Option<&'a Gpu> {
    rank.node.gpus.iter().filter(|g| g.is_visible()).nth(rank.device as usize)
}

/// NCCL's int64 bus id (`%lx`): the PCI address's hex digits, so
/// `00000000:19:00.0` is `19000` and domain 1 gives `101b000`.
pub(super) fn bus_id(rank: &Rank) -> String {
    let id = gpu_of(rank).map_or("", |g| g.bus_id.as_str());
    let parts: Vec<u64> = id.split([':', '.']).map(|p| u64::from_str_radix(p, 16).unwrap_or(0)).collect();
    let get = |i: usize| parts.get(i).copied().unwrap_or(0);
    format!("{:x}", (get(0) & 0xffff) << 20 | (get(1) & 0xff) << 12 | (get(2) & 0xff) << 4 | (get(3) & 0xf))
}

/// The socket NCCL's bootstrap and IB OOB use: `ncclFindInterfaces` takes the
/// first interface whose name matches NCCL_SOCKET_IFNAME, else an `ib*` one
/// with an address (IPoIB netdevs carry none here), else the first other
/// interface: the front-end NIC. `iface:ip<0>`.
pub(super) fn oob(node: &Node, env: &BTreeMap<String, String>) -> String {
    let mut ifaces = vec![(FRONTEND_NIC.to_string(), frontend_ip(&node.hostname))];
    let mut rail = 0;
    for hca in &node.hcas {
        if hca.port.link_layer == LinkLayer::Ethernet {
            ifaces.push((hca.netdev.clone(), rail_ip(&node.hostname, rail)));
            rail += 1;
        }
    }
    let wanted = env.get("NCCL_SOCKET_IFNAME").filter(|v| v.len() > 1).map(|v| if_list_matches(v));
    let (name, ip) = match wanted {
        Some(matches) => ifaces.iter().find(|(name, _)| matches(name)).or(ifaces.first()),
        None => ifaces.first(),
    }
    .cloned()
    .unwrap_or_default();
    format!("{name}:{ip}<0>")
}

/// NCCL's interface list syntax (`ib,eth`, `^docker`, `=eth0`): prefixes
/// match unless `=` asks for exact names.
fn if_list_matches(list: &str) -> impl Fn(&str) -> bool + '_ {
    move |name: &str| {
        let (negate, rest) = list.strip_prefix('^').map_or((false, list), |r| (true, r));
        let (exact, rest) = rest.strip_prefix('=').map_or((false, rest), |r| (true, r));
        let found =
            rest.split(',').map(|s| s.split(':').next().unwrap_or("")).filter(|s| !s.is_empty()).any(|s| if exact { name == s } else { name.starts_with(s) });
        found != negate
    }
}

/// The NCCL_DEBUG_SUBSYS mask: default INIT and ENV (and BOOTSTRAP from
/// 2.23), `^` inverts, ALL is every subsystem (debug.cc).
fn subsys_mask(env: &BTreeMap<String, String>, code: u32) -> u64 {
    let Some(value) = env.get("NCCL_DEBUG_SUBSYS") else {
        return sys::INIT | sys::ENV | if code >= 22300 { sys::BOOTSTRAP } else { 0 };
    };
    let (invert, list) = value.strip_prefix('^').map_or((false, value.as_str()), |r| (true, r));
    let mut mask = if invert { sys::ALL } else { 0 };
    for token in list.split(',') {
        let bit = match token.trim().to_ascii_uppercase().as_str() {
            "INIT" => sys::INIT,
            "COLL" => sys::COLL,
            "P2P" => sys::P2P,
            "SHM" => sys::SHM,
            "NET" => sys::NET,
            "GRAPH" => sys::GRAPH,
            "TUNING" => sys::TUNING,
            "ENV" => sys::ENV,
            "ALLOC" => sys::ALLOC,
            "CALL" => sys::CALL,
            "PROXY" => sys::PROXY,
            "NVLS" => sys::NVLS,
            "BOOTSTRAP" => sys::BOOTSTRAP,
            "REG" => sys::REG,
            "PROFILE" => sys::PROFILE,
            "RAS" => sys::RAS,
            "ALL" => sys::ALL,
            _ => 0,
        };
        if invert {
            mask &= !bit;
        } else {
            mask |= bit;
        }
    }
    mask
}

/// Whether INIT lines print (the Destroy line at the end of the job).
pub(super) fn init_on(env: &BTreeMap<String, String>, nccl: &str) -> bool {
    subsys_mask(env, nccl_code(nccl)) & sys::INIT != 0
}

/// C's strtoll(s, NULL, 0): the leading integer (hex after 0x, octal after
/// 0), 0 without digits; None when it overflows (ERANGE).
fn strtoll(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if (t.starts_with("0x") || t.starts_with("0X")) && t[2..].starts_with(|c: char| c.is_ascii_hexdigit()) {
        (16, &t[2..])
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let mut value: i128 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        value = value * i128::from(radix) + i128::from(d);
        if value > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let value = if negative { -value } else { value };
    i64::try_from(value).ok()
}

/// A GPU's compute capability, from its name.
fn compute_cap(gpu: Option<&Gpu>) -> u32 {
    let name = gpu.map_or("", |g| g.name.as_str());
    if ["B200", "B300", "GB200", "GB300"].iter().any(|p| name.contains(p)) {
        100
    } else if ["H100", "H200", "H800", "H20", "GH200"].iter().any(|p| name.contains(p)) {
        90
    } else {
        80
    }
}

fn pow2_up(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// One of NCCL's binary trees over `n` nodes (trees.cc): (parent, child 0,
/// child 1, which child of its parent this node is).
fn btree(n: i64, rank: i64) -> (i64, i64, i64, u8) {
    let mut bit = 1;
    while bit < n && bit & rank == 0 {
        bit <<= 1;
    }
    if rank == 0 {
        return (-1, -1, if n > 1 { bit >> 1 } else { -1 }, 0);
    }
    let mut up = (rank ^ bit) | (bit << 1);
    if up >= n {
        up = rank ^ bit;
    }
    let kind = u8::from(rank >= up);
    let mut low = bit >> 1;
    let down0 = if low == 0 { -1 } else { rank - low };
    let mut down1 = if low == 0 { -1 } else { rank + low };
    while down1 >= n {
        down1 = if low == 0 { -1 } else { rank + low };
        low >>= 1;
    }
    (up, down0, down1, kind)
}

/// NCCL's double binary tree: the second tree mirrors the first (even
/// counts) or shifts it by one (odd counts).
fn dtree(n: i64, rank: i64) -> [(i64, i64, i64, u8); 2] {
    let first = btree(n, rank);
    let second = if n % 2 == 1 {
        let (u, d0, d1, kind) = btree(n, (rank - 1 + n) % n);
        let shift = |x: i64| if x == -1 { -1 } else { (x + 1) % n };
        (shift(u), shift(d0), shift(d1), kind)
    } else {
        let (u, d0, d1, kind) = btree(n, n - 1 - rank);
        let mirror = |x: i64| if x == -1 { -1 } else { n - 1 - x };
        (mirror(u), mirror(d0), mirror(d1), kind)
    };
    [first, second]
}

/// The communicator's rings and trees, channel by channel.
struct Topo {
    nnodes: usize,
    /// Global ranks of each node, in local order.
    nodes: Vec<Vec<usize>>,
    node_of: Vec<usize>,
    /// Search channels (what the graph search found) and the final count.
    search: usize,
    channels: usize,
    /// Per search channel: the ring over all ranks, each rank's place in
    /// it, and each node's tree chain.
    rings: Vec<Vec<usize>>,
    places: Vec<Vec<usize>>,
    chains: Vec<Vec<Vec<usize>>>,
}

impl Topo {
    fn new(plan: &Plan, ranks: &[Rank], search: usize, channels: usize) -> Topo {
        let mut nodes: Vec<Vec<usize>> = Vec::new();
        let mut node_of = Vec::with_capacity(ranks.len());
        let mut last = None;
        for (r, rank) in ranks.iter().enumerate() {
            if last != Some(rank.node_index) {
                nodes.push(Vec::new());
                last = Some(rank.node_index);
            }
            node_of.push(nodes.len() - 1);
            if let Some(list) = nodes.last_mut() {
                list.push(r);
            }
        }
        let nnodes = nodes.len();
        let mut rings = Vec::with_capacity(search);
        let mut places = Vec::with_capacity(search);
        let mut chains = Vec::with_capacity(search);
        for c in 0..search {
            let mut ring = Vec::with_capacity(ranks.len());
            let mut per_node = Vec::with_capacity(nnodes);
            for list in &nodes {
                let len = list.len();
                let entry = if nnodes > 1 { entry_of(plan, ranks, list, c) } else { 0 };
                if nnodes > 1 {
                    ring.extend((0..len).map(|i| list[(entry + len - i) % len]));
                } else {
                    ring.extend(list.iter().copied());
                }
                per_node.push((0..len).map(|i| list[(entry + i) % len]).collect());
            }
            let mut place = vec![0; ring.len()];
            for (at, &r) in ring.iter().enumerate() {
                place[r] = at;
            }
            rings.push(ring);
            places.push(place);
            chains.push(per_node);
        }
        Topo { nnodes, nodes, node_of, search, channels, rings, places, chains }
    }

    fn search_channel(&self, channel: usize) -> (usize, usize) {
        let base = channel % (2 * self.search);
        (base % self.search, base / self.search)
    }

    /// (prev, next) of `r` in a channel's ring.
    fn ring(&self, channel: usize, r: usize) -> (usize, usize) {
        let s = self.search_channel(channel).0;
        let ring = &self.rings[s];
        let n = ring.len();
        let at = self.places[s].get(r).copied().unwrap_or(0);
        (ring[(at + n - 1) % n], ring[(at + 1) % n])
    }

    /// (parent, children) of `r` in a channel's tree: the node's chain, and
    /// across nodes the double binary tree between the chains' heads (the
    /// parent and second child on the head, the first child on the next GPU,
    /// NCCL's balanced tree).
    fn tree(&self, channel: usize, r: usize) -> (i64, [i64; 3]) {
        let (s, which) = self.search_channel(channel);
        let node = self.node_of[r];
        let chain = &self.chains[s][node];
        let at = chain.iter().position(|&x| x == r).unwrap_or(0);
        let mut up = if at == 0 { -1 } else { chain[at - 1] as i64 };
        let mut down = [chain.get(at + 1).map_or(-1, |&x| x as i64), -1, -1];
        if self.nnodes > 1 {
            let head = |n: usize| self.chains[s][n][0] as i64;
            let second = |n: usize| self.chains[s][n].get(1).map_or(head(n), |&x| x as i64);
            let (u, d0, d1, kind) = dtree(self.nnodes as i64, node as i64)[which];
            let add = |down: &mut [i64; 3], child: i64| {
                if let Some(slot) = down.iter_mut().find(|d| **d < 0) {
                    *slot = child;
                }
            };
            if r as i64 == head(node) && u != -1 {
                up = if kind == 0 { second(u as usize) } else { head(u as usize) };
            }
            if r as i64 == second(node) && d0 != -1 {
                add(&mut down, head(d0 as usize));
            }
            if r as i64 == head(node) && d1 != -1 {
                add(&mut down, head(d1 as usize));
            }
        }
        (up, down)
    }
}

/// Where search channel `c` enters a node: the GPU of rail c (the first rank
/// sending through that HCA), else the c-th GPU.
fn entry_of(plan: &Plan, ranks: &[Rank], list: &[usize], c: usize) -> usize {
    let len = list.len().max(1);
    let Some(net) = list.first().and_then(|&r| plan.nets.get(ranks[r].node_index)) else { return c % len };
    if net.hcas.is_empty() {
        return c % len;
    }
    let hca = net.hcas[c % net.hcas.len()];
    list.iter().position(|&r| net.paths.get(ranks[r].local as usize).is_some_and(|p| p.0 == hca)).unwrap_or(c % len)
}

/// The collected lines, filtered by the subsystem mask.
struct Out {
    mask: u64,
    lines: Vec<(u32, String)>,
}

impl Out {
    fn info(&mut self, who: &Who, tid: u32, flags: u64, text: impl AsRef<str>) {
        if flags & self.mask != 0 {
            self.lines.push((who.rank.task, format!("{}:{}:{} [{}] NCCL INFO {}", who.rank.node.hostname, who.rank.pid, tid, who.rank.device, text.as_ref())));
        }
    }
}

/// A shown rank.
struct Who<'r, 'a> {
    rank: &'r Rank<'a>,
    /// Its global rank.
    r: usize,
    /// Its index among its process's ranks; the first prints the process's lines.
    slot: u32,
}

impl Who<'_, '_> {
    fn tid(&self) -> u32 {
        init_tid(self.rank)
    }
    fn first(&self) -> bool {
        self.slot == 0
    }
}

/// Everything the log needs, computed once.
struct Ctx<'c, 'r, 'a> {
    cluster: &'c Cluster,
    plan: &'c Plan,
    ranks: &'r [Rank<'a>],
    env: &'c BTreeMap<String, String>,
    code: u32,
    coll: Coll,
    tests: (u32, u32, u32),
    topo: Topo,
    nranks: usize,
    comm_hash: u64,
    nvls: bool,
    nvls_channels: usize,
    p2p_channels: usize,
    p2p_per_peer: usize,
    chunk: u64,
    /// Rank 0's process runs alone (ncclCommInitAll) or with others.
    single_process: bool,
}

impl Ctx<'_, '_, '_> {
    fn env(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }

    /// `ncclCommInitRank` and friends, as the Init START/COMPLETE lines name
    /// the call: nccl-tests' release calls ncclCommInitRankConfig from 2.17,
    /// before that ncclCommInitAll from one process.
    fn func(&self) -> &'static str {
        if self.tests >= (2, 17, 0) {
            "ncclCommInitRankConfig"
        } else if self.single_process {
            "ncclCommInitAll"
        } else {
            "ncclCommInitRank"
        }
    }

    fn net_name(&self) -> &'static str {
        if self.plan.socket {
            "Socket"
        } else {
            "IB"
        }
    }

    /// The NET device index and GPUDirect RDMA of a rank's path.
    fn net_dev(&self, r: usize) -> (usize, bool) {
        let rank = &self.ranks[r];
        let Some(net) = self.plan.nets.get(rank.node_index) else { return (0, false) };
        if self.plan.socket {
            return (0, false);
        }
        let (hca, gdr) = net.paths.get(rank.local as usize).copied().unwrap_or((net.hcas.first().copied().unwrap_or(0), false));
        (net.hcas.iter().position(|&i| i == hca).unwrap_or(0), gdr)
    }

    /// How `from` sends to `to`, as the sending side prints it, or the
    /// receiving side (only the network's receive side prints).
    fn via(&self, from: usize, to: usize, send: bool) -> Option<String> {
        let (a, b) = (&self.ranks[from], &self.ranks[to]);
        if a.node_index == b.node_index && self.plan.intra == Intra::Shm {
            return send.then(|| "via SHM/direct/direct".to_string());
        }
        if a.node_index == b.node_index && self.plan.intra == Intra::P2p {
            if !send {
                return None;
            }
            let read = compute_cap(gpu_of(a)) == 80 && compute_cap(gpu_of(b)) == 80;
            let read = if read { "/read" } else { "" };
            return Some(if a.pid == b.pid {
                format!("via P2P/direct pointer{read}")
            } else if self.code >= 21900 {
                format!("via P2P/CUMEM{read}")
            } else {
                format!("via P2P/IPC{read}")
            });
        }
        let (dev, gdr) = self.net_dev(if send { from } else { to });
        let gdr = if gdr { "/GDRDMA" } else { "" };
        Some(format!("[{}] via NET/{}/{dev}{gdr}", if send { "send" } else { "receive" }, self.net_name()))
    }

    /// One side of ncclTransportP2pSetup for rank `r`: receive connections
    /// then send connections, peer by peer ((r-i) and (r+i) for i = 1..n),
    /// channels in order; connections already made are skipped.
    fn setup(&self, r: usize, wanted: &[(usize, Vec<usize>, Vec<usize>)], done: &mut BTreeSet<(usize, usize, bool)>) -> Vec<String> {
        let n = self.nranks;
        let mut rounds: BTreeMap<usize, (BTreeSet<(usize, usize)>, BTreeSet<(usize, usize)>)> = BTreeMap::new();
        for (channel, recv, send) in wanted {
            for &p in recv.iter().filter(|&&p| p != r && p < n) {
                if !done.contains(&(*channel, p, false)) {
                    rounds.entry((r + n - p) % n).or_default().0.insert((*channel, p));
                }
            }
            for &p in send.iter().filter(|&&p| p != r && p < n) {
                if !done.contains(&(*channel, p, true)) {
                    rounds.entry((p + n - r) % n).or_default().1.insert((*channel, p));
                }
            }
        }
        let mut lines = Vec::new();
        let dev = |x: usize| self.ranks[x].device;
        for (recv, send) in rounds.values() {
            for &(c, p) in recv {
                done.insert((c, p, false));
                if let Some(via) = self.via(p, r, false) {
                    lines.push(format!("Channel {c:02}{} : {p}[{}] -> {r}[{}] {via}", connection(&via), dev(p), dev(r)));
                }
            }
            for &(c, p) in send {
                done.insert((c, p, true));
                if let Some(via) = self.via(r, p, true) {
                    lines.push(format!("Channel {c:02}{} : {r}[{}] -> {p}[{}] {via}", connection(&via), dev(r), dev(p)));
                }
            }
        }
        lines
    }

    fn ring_wanted(&self, r: usize) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
        (0..self.topo.channels)
            .map(|c| {
                let (prev, next) = self.topo.ring(c, r);
                (c, vec![prev], vec![next])
            })
            .collect()
    }

    fn tree_wanted(&self, r: usize) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
        (0..self.topo.channels)
            .map(|c| {
                let (up, down) = self.topo.tree(c, r);
                let mut peers: Vec<usize> = down.iter().filter(|&&d| d >= 0).map(|&d| d as usize).collect();
                if up >= 0 {
                    peers.push(up as usize);
                }
                (c, peers.clone(), peers)
            })
            .collect()
    }

    /// Ring PXN and GPUDirect RDMA for "Connected all rings".
    fn ring_gdr(&self) -> bool {
        (0..self.nranks).all(|r| {
            (0..self.topo.channels).all(|c| {
                let (_, next) = self.topo.ring(c, r);
                self.ranks[next].node_index == self.ranks[r].node_index || self.net_dev(r).1
            })
        })
    }

    /// NVLS heads: the GPU of each rail (one head per GPU on one node).
    fn nvls_heads(&self, node: usize) -> Vec<usize> {
        let list = &self.topo.nodes[node];
        if self.topo.nnodes == 1 {
            return list.clone();
        }
        let rails = self.plan.nets.get(self.ranks[list[0]].node_index).map_or(1, |n| n.hcas.len().max(1)).min(list.len());
        (0..rails).map(|h| list[entry_of(self.plan, self.ranks, list, h)]).collect()
    }

    fn nvls_line(&self, who: &Who) -> String {
        let node = self.topo.node_of[who.r];
        let heads = self.nvls_heads(node);
        let head = heads.iter().position(|&h| h == who.r).map_or(-1, |i| i as i64);
        let n_heads = heads.len();
        let buff: u64 = 128 * 1024 * 8;
        let comm = comm_ptr(self.cluster, who.rank);
        let ch = self.nvls_channels as u64;
        if self.code < 22200 {
            let mem: u64 = 1 << 21;
            let per = ch * 2 * (buff + mem);
            format!(
                "NVLS comm {comm} headRank {head} nHeads {n_heads} buffSize {buff} memSize {mem} nvlsPerRankSize {per} nvlsTotalSize {}",
                per * n_heads as u64
            )
        } else {
            let per = ch * 2 * buff;
            let ranks = if self.code >= 22700 { format!(" nvlsRanks {}", self.topo.nodes[node].len()) } else { String::new() };
            format!("NVLS comm {comm} headRank {head} nHeads {n_heads}{ranks} buffSize {buff} nvlsPerRankSize {per} nvlsTotalSize {}", per * n_heads as u64)
        }
    }
}

/// The GPU's NUMA node's CPUs, hyperthreads included (lscpu's numbering).
fn numa_cpus(cluster: &Cluster, gpu: Option<&Gpu>) -> Vec<u32> {
    let host = &cluster.preset.host;
    let sockets = host.sockets.max(1);
    let socket = gpu.map_or(0, |g| g.numa_node).min(sockets - 1);
    let cores = sockets * host.cores_per_socket;
    (0..host.threads_per_core.max(1)).flat_map(|t| (0..host.cores_per_socket).map(move |c| t * cores + socket * host.cores_per_socket + c)).collect()
}

/// ncclCpusetToStr: the mask's bytes from the highest set one, in hex, a
/// comma every four bytes.
fn cpuset_hex(cpus: &[u32]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0) as usize;
    let mut bytes = vec![0u8; top / 8 + 1];
    for &c in cpus {
        bytes[c as usize / 8] |= 1 << (c % 8);
    }
    let mut out = String::new();
    for o in (0..bytes.len()).rev() {
        if out.is_empty() && bytes[o] == 0 {
            continue;
        }
        out += &format!("{:02x}", bytes[o]);
        if o > 0 && o % 4 == 0 {
            out.push(',');
        }
    }
    out
}

/// ncclCpusetToRangeStr: `0-55,112-167`.
fn cpuset_ranges(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    crate::sort::sort(&mut sorted);
    sorted.dedup();
    let mut parts = Vec::new();
    let mut at = 0;
    while at < sorted.len() {
        let start = sorted[at];
        while at + 1 < sorted.len() && sorted[at + 1] == sorted[at] + 1 {
            at += 1;
        }
        parts.push(if sorted[at] == start { start.to_string() } else { format!("{start}-{}", sorted[at]) });
        at += 1;
    }
    parts.join(",")
}

/// A ring as rank 0 prints it (graph/rings.cc dumpLine). Before 2.23 the
/// line is "Channel cc/nn : " and the first 20 ranks as " %3d"; from 2.23
/// each rank is as wide as the largest, and a line past 127 characters ends
/// in "...".
fn dump_ring(code: u32, channel: usize, nchannels: usize, ring: &[usize]) -> String {
    if code < 22300 {
        // A 116-byte buffer of spaces: the prefix cut to 15 characters,
        // then " %3d" every 4 bytes from byte 16; the last number ends it.
        let mut line = vec![b' '; 116];
        let prefix = format!("Channel {channel:02}/{nchannels:02} : ");
        for (i, b) in prefix.bytes().take(15).enumerate() {
            line[i] = b;
        }
        let start = prefix.len().min(40);
        let mut end = start;
        for (i, v) in ring.iter().take(20).enumerate() {
            let text = format!(" {v:3}");
            let at = start + 4 * i;
            if at + text.len() > line.len() {
                line.resize(at + text.len(), b' ');
            }
            line[at..at + text.len()].copy_from_slice(text.as_bytes());
            end = at + text.len();
        }
        if ring.is_empty() {
            end = 15.min(prefix.len());
        }
        String::from_utf8_lossy(&line[..end]).into_owned()
    } else {
        let width = ring.len().saturating_sub(1).to_string().len();
        let mut line = format!("Channel {channel:02}/{nchannels:02} :");
        for v in ring {
            if line.len() >= 127 {
                break;
            }
            line += &format!(" {v:width$}");
        }
        if line.len() >= 128 {
            line.truncate(124);
            line += "...";
        }
        line
    }
}

/// How NCCL_NET_GDR_LEVEL names a level (ncclGetLevel): the path type's
/// name, or an old number (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4+ SYS).
fn gdr_level_name(value: &str, code: u32) -> Option<&'static str> {
    let mut names = vec!["LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS"];
    if code >= 21900 {
        names.insert(3, "C2C");
    }
    if code >= 22000 {
        names.push("NET");
    }
    if let Some(name) = names.into_iter().find(|n| *n == value) {
        return Some(name);
    }
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        let old = strtoll(value).unwrap_or(i64::MAX).clamp(0, 5);
        return Some(["LOC", "PIX", "PXB", "PHB", "SYS", "SYS"][old as usize]);
    }
    None
}

/// The connection index after a channel: P2P and NET print it (`00/0`);
/// SHM prints its own line, with the channel alone.
fn connection(via: &str) -> &'static str {
    if via.contains("SHM/") {
        ""
    } else {
        "/0"
    }
}

/// NCCL_* integer parameters NCCL reads (ncclLoadParam), once per process,
/// when it first needs them: "X set by environment to N.".
fn int_param(out: &mut Out, who: &Who, tid: u32, ctx: &Ctx, name: &str) {
    let Some(value) = ctx.env(name).filter(|v| !v.is_empty()) else { return };
    if !who.first() {
        return;
    }
    let text = match strtoll(value) {
        Some(v) => format!("{name} set by environment to {v}."),
        None => format!("Invalid value {value} for {name}, using default {}.", param_default(name)),
    };
    let flags = if text.starts_with("Invalid") { sys::ALL } else { sys::ENV };
    out.info(who, tid, flags, text);
}

fn param_default(name: &str) -> i64 {
    match name {
        "NCCL_NVLS_ENABLE" => 2,
        "NCCL_BUFFSIZE" | "NCCL_MIN_NCHANNELS" | "NCCL_MAX_NCHANNELS" | "NCCL_NVLS_NCHANNELS" => -2,
        "NCCL_IB_TIMEOUT" => 20,
        "NCCL_IB_RETRY_CNT" => 7,
        "NCCL_IB_QPS_PER_CONNECTION" => 1,
        "NCCL_NCHANNELS_PER_NET_PEER" => -1,
        _ => 0,
    }
}

/// The integer value NCCL uses for a parameter: the environment's (strtoll),
/// else the default.
fn int_value(ctx_env: &BTreeMap<String, String>, name: &str) -> i64 {
    ctx_env.get(name).filter(|v| !v.is_empty()).and_then(|v| strtoll(v)).unwrap_or_else(|| param_default(name))
}

/// The channel counts NCCL ends with (ncclTopoCompute, ncclTopoPostset):
/// (search channels, channels).
fn channel_counts(plan: &Plan, ranks: &[Rank], env: &BTreeMap<String, String>, code: u32, cap: u32, nvls_channels: usize) -> (usize, usize) {
    let max_channels = if code >= 22500 { 64 } else { 32 };
    let nnodes = plan.nnodes as usize;
    let local = plan.local as usize;
    let nvlink = ranks.iter().all(|r| gpu_of(r).is_some_and(|g| g.active_nvlinks() > 0));
    let (search, mut channels) = if nnodes <= 1 {
        // NVSwitch: 12 search channels of 20 GB/s, doubled; PCIe: one.
        let search = if nvlink && ranks.len() > 1 { 12 } else { 1 };
        (search, 2 * search)
    } else {
        let rails = plan.nets.iter().map(|n| n.hcas.len()).min().unwrap_or(0).max(1);
        let usable = rails.min(local).max(1);
        let search = if cap >= 90 { (2 * usable).min(8).max(usable) } else { usable };
        let mut channels = 2 * search;
        // "4 compute channels per search channel" on Hopper across nodes.
        let hopper = if code >= 22500 { cap >= 90 } else { cap == 90 };
        if hopper && nvlink && ((code < 22000 && 2 * channels <= max_channels) || (code >= 22000 && channels < 16)) {
            channels *= 2;
        }
        (search, channels)
    };
    let max = int_value(env, "NCCL_MAX_NCHANNELS");
    if max != -2 {
        channels = channels.min(max.clamp(1, max_channels as i64) as usize);
    }
    let min = int_value(env, "NCCL_MIN_NCHANNELS");
    if min != -2 {
        channels = channels.max(min.clamp(0, max_channels as i64) as usize);
    }
    if code >= 22000 && channels < nvls_channels {
        channels = nvls_channels;
    }
    (search, channels.clamp(1, max_channels))
}

/// NCCL's INFO log for the job.
pub(super) fn log(cluster: &Cluster, plan: &Plan, ranks: &[Rank], env: &BTreeMap<String, String>, coll: Coll, tests: (u32, u32, u32)) -> Log {
    let code = nccl_code(&cluster.versions.nccl);
    let mut out = Out { mask: subsys_mask(env, code), lines: Vec::new() };
    let mut late = Out { mask: out.mask, lines: Vec::new() };
    let Some(r0) = ranks.first() else { return Log { init: Vec::new(), connect: Vec::new() } };
    let nranks = ranks.len();
    let cap = ranks.iter().map(|r| compute_cap(gpu_of(r))).min().unwrap_or(80);
    let per_node_max = plan.local as usize;
    let nvls_enable = int_value(env, "NCCL_NVLS_ENABLE");
    let multicast = |r: &Rank| gpu_of(r).is_some_and(|g| compute_cap(Some(g)) >= 90 && g.active_nvlinks() > 0 && g.fabric == FabricState::Completed);
    let nvls = nvls_enable != 0 && per_node_max > 2 && ranks.iter().all(multicast);
    let nvls_channels = if nvls {
        let n = int_value(env, "NCCL_NVLS_NCHANNELS");
        if n >= 0 {
            n.min(64) as usize
        } else if cap >= 100 {
            32
        } else {
            16
        }
    } else {
        0
    };
    let (search, channels) = channel_counts(plan, ranks, env, code, cap, nvls_channels);
    let topo = Topo::new(plan, ranks, search.max(1), channels);
    let max_channels = if code >= 22500 { 64 } else { 32 };
    let p2p_base = channels.min(max_channels);
    let p2p_channels = pow2_up(p2p_base).min(max_channels);
    let mut least = p2p_base;
    let links = ranks.iter().filter_map(|r| gpu_of(r)).map(Gpu::active_nvlinks).min().unwrap_or(0);
    if per_node_max > 1 {
        least = least.min(if links > 0 { 2 * links } else { 2 });
    }
    if plan.nnodes > 1 {
        let wanted = int_value(env, "NCCL_NCHANNELS_PER_NET_PEER");
        let per_net = if wanted >= 0 {
            wanted.clamp(1, 64) as usize
        } else {
            let mut m = 2usize;
            while m * nranks > p2p_base * 4 && m > 1 {
                m /= 2;
            }
            m.max(1)
        };
        least = least.min(per_net);
    }
    let p2p_per_peer = pow2_up(least).min(p2p_channels);
    let all_nvlink = links > 0;
    let buff = match int_value(env, "NCCL_BUFFSIZE") {
        -2 => 4 << 20,
        b => b.clamp(0, 1 << 40) as u64,
    };
    let mut chunk: u64 = if plan.nnodes > 1 || !all_nvlink { 1 << 17 } else { 1 << 19 };
    if chunk * 8 > buff {
        chunk = buff / 8;
    }
    let single_process = ranks.iter().all(|r| r.pid == r0.pid && r.node_index == r0.node_index);
    let ctx = Ctx {
        cluster,
        plan,
        ranks,
        env,
        code,
        coll,
        tests,
        topo,
        nranks,
        comm_hash: Rng::derive(cluster.seed, &["commId", &r0.pid.to_string()]).next_u64(),
        nvls,
        nvls_channels,
        p2p_channels,
        p2p_per_peer,
        chunk,
        single_process,
    };
    let shown: Vec<Who> = {
        let picked = shown(plan, ranks);
        picked
            .iter()
            .map(|rank| {
                let r = ranks.iter().position(|x| std::ptr::eq(x, *rank)).unwrap_or(0);
                let slot = ranks[..r].iter().filter(|x| x.pid == rank.pid && x.node_index == rank.node_index).count() as u32;
                Who { rank, r, slot }
            })
            .collect()
    };
    main_thread(&mut out, &ctx, &shown);
    for who in &shown {
        net_phase(&mut out, &ctx, who);
    }
    for who in &shown {
        start_phase(&mut out, &ctx, who);
    }
    for who in &shown {
        topo_phase(&mut out, &ctx, who);
    }
    graph_phase(&mut out, &ctx, &shown);
    for who in &shown {
        buffers_phase(&mut out, &ctx, who);
    }
    let mut done: Vec<BTreeSet<(usize, usize, bool)>> = vec![BTreeSet::new(); shown.len()];
    if code < 22200 {
        connect_phase(&mut out, &ctx, &shown, &mut done, true);
    }
    for who in &shown {
        tune_phase(&mut out, &ctx, who);
    }
    if code >= 22200 {
        connect_phase(&mut late, &ctx, &shown, &mut done, false);
    }
    Log { init: out.lines, connect: late.lines }
}

/// The process's main thread: bootstrap network, CUDA driver, version (and
/// before 2.22 the net plugin), rank 0's process first as it creates the
/// unique id before it initialises.
fn main_thread(out: &mut Out, ctx: &Ctx, shown: &[Who]) {
    let code = ctx.code;
    let cuda: Vec<u32> = ctx.cluster.versions.cuda.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    let driver = cuda.first().unwrap_or(&12).saturating_mul(1000).saturating_add(cuda.get(1).unwrap_or(&0).saturating_mul(10));
    let version = format!("NCCL version {}+cuda{}", ctx.cluster.versions.nccl, ctx.cluster.versions.cuda);
    for who in shown.iter().filter(|w| w.first()) {
        let tid = who.rank.pid;
        let bootstrap = |out: &mut Out| {
            if let Some(ifname) = ctx.env("NCCL_SOCKET_IFNAME").filter(|v| v.len() > 1) {
                out.info(who, tid, sys::ENV, format!("NCCL_SOCKET_IFNAME set by environment to {ifname}"));
            }
            let (label, flags) = if code >= 22400 {
                ("Bootstrap: Using", sys::BOOTSTRAP)
            } else if code >= 22300 {
                ("Bootstrap : Using", sys::BOOTSTRAP)
            } else {
                ("Bootstrap : Using", sys::INIT)
            };
            out.info(who, tid, flags, format!("{label} {}", oob(who.rank.node, ctx.env)));
            if code < 22200 {
                net_plugin(out, ctx, who, tid);
            }
        };
        if who.r == 0 {
            bootstrap(out);
            out.info(who, tid, sys::INIT, format!("cudaDriverVersion {driver}"));
        } else {
            out.info(who, tid, sys::INIT, format!("cudaDriverVersion {driver}"));
            bootstrap(out);
        }
        if code >= 22200 {
            out.info(who, tid, sys::ALL, &version);
        } else if who.r == 0 {
            out.lines.push((who.rank.task, version.clone()));
        }
        if code >= 22800 {
            // nccl-tests 2.18 asks for NVLink-centric scheduling in its config.
            let same: Vec<&Who> = shown.iter().filter(|w| w.rank.pid == who.rank.pid && w.rank.node_index == who.rank.node_index).collect();
            for _ in same {
                out.info(who, tid, sys::ENV, "Comm config nvlinkCentricSched set to 1");
            }
        }
    }
}

/// The net plugin's lines: a library NCCL looks for and does not find.
fn net_plugin(out: &mut Out, ctx: &Ctx, who: &Who, tid: u32) {
    let flags = sys::INIT | sys::NET;
    let missing = "libnccl-net.so: cannot open shared object file: No such file or directory";
    let lines: Vec<String> = match ctx.code {
        0..=21899 => vec![
            format!("NET/Plugin : Plugin load (libnccl-net.so) returned 2 : {missing}"),
            "NET/Plugin : No plugin found, using internal implementation".into(),
        ],
        21900..=22099 => vec![format!("NET/Plugin : dlerror={missing} No plugin found (libnccl-net.so), using internal implementation")],
        22100..=22199 => vec![
            "NET/Plugin: No plugin found (libnccl-net.so)".into(),
            format!("NET/Plugin: Plugin load returned 2 : {missing} : when loading libnccl-net.so"),
            "NET/Plugin: Using internal network plugin.".into(),
        ],
        22200..=22599 => vec!["NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.".into()],
        22600..=22699 => vec!["NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.".into()],
        22700..=22799 => vec!["NET/Plugin: Could not find: libnccl-net.so. ".into()],
        _ => vec!["NET/Plugin: Could not find: libnccl-net.so".into()],
    };
    for line in lines {
        out.info(who, tid, flags, line);
    }
}

/// commAlloc: the net plugin (2.22+), the network's devices, the profiler
/// plugin (2.23+), the network chosen, DMA-BUF.
fn net_phase(out: &mut Out, ctx: &Ctx, who: &Who) {
    let (tid, code) = (who.tid(), ctx.code);
    let net = &ctx.plan.nets[who.rank.node_index];
    if who.first() {
        if code >= 22200 {
            net_plugin(out, ctx, who, tid);
        }
        let flags = sys::INIT | sys::NET;
        if let Some(ifname) = ctx.env("NCCL_SOCKET_IFNAME").filter(|v| v.len() > 1) {
            out.info(who, tid, sys::ENV, format!("NCCL_SOCKET_IFNAME set by environment to {ifname}"));
        }
        if let Some(hca) = ctx.env("NCCL_IB_HCA") {
            out.info(who, tid, sys::NET | sys::ENV, format!("NCCL_IB_HCA set to {hca}"));
        }
        let oob = oob(who.rank.node, ctx.env);
        if ctx.plan.ib_disabled {
            // ncclIbInit reads the switch and gives up without a word.
            int_param(out, who, tid, ctx, "NCCL_IB_DISABLE");
            out.info(who, tid, flags, format!("NET/Socket : Using [0]{oob}"));
        } else if net.hcas.is_empty() {
            out.info(who, tid, flags, "NET/IB : No device found.");
            if code >= 22400 {
                out.info(who, tid, flags, format!("NET/IB : Using [RO]; OOB {oob}"));
            }
            out.info(who, tid, flags, format!("NET/Socket : Using [0]{oob}"));
        } else {
            let node = who.rank.node;
            let list: Vec<String> = net
                .hcas
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let layer = if node.hcas[i].port.link_layer == LinkLayer::Ethernet { "RoCE" } else { "IB" };
                    format!(" [{k}]{}:{}/{layer}", node.hcas[i].name, node.hcas[i].port.number)
                })
                .collect();
            out.info(who, tid, flags, format!("NET/IB : Using{} [RO]; OOB {oob}", list.concat()));
        }
        if code >= 22700 {
            out.info(who, tid, flags, format!("Initialized NET plugin {}", if net.hcas.is_empty() { "Socket" } else { "IB" }));
        }
    }
    if code >= 22700 {
        out.info(who, tid, sys::INIT | sys::NET, format!("Assigned NET plugin {} to comm", ctx.net_name()));
    }
    if who.first() {
        match code {
            0..=22299 => {}
            22300..=22599 => out.info(who, tid, sys::ENV, "PROFILER/Plugin: Could not find: libnccl-profiler.so."),
            22600..=22799 => out.info(who, tid, sys::INIT, "PROFILER/Plugin: Could not find: libnccl-profiler.so. "),
            _ => out.info(who, tid, sys::INIT, "PROFILER/Plugin: Could not find: libnccl-profiler.so"),
        }
    }
    out.info(who, tid, sys::INIT, format!("Using network {}", ctx.net_name()));
    if !ctx.plan.socket {
        out.info(who, tid, sys::INIT, format!("DMA-BUF is available on GPU device {}", who.rank.device));
    }
}

fn init_line(ctx: &Ctx, who: &Who, what: &str) -> String {
    let prefix = if ctx.code >= 22100 { format!("{} ", ctx.func()) } else { String::new() };
    format!(
        "{prefix}comm {} rank {} nranks {} cudaDev {d} nvmlDev {d} busId {} commId 0x{:x} - Init {what}",
        comm_ptr(ctx.cluster, who.rank),
        who.r,
        ctx.nranks,
        bus_id(who.rank),
        ctx.comm_hash,
        d = who.rank.device
    )
}

fn timing_rng(ctx: &Ctx, who: &Who, what: &str) -> Rng {
    Rng::derive(ctx.cluster.seed, &["nccl-init", what, &who.rank.node.hostname, &who.rank.pid.to_string(), &who.rank.local.to_string()])
}

/// Init START and the bootstrap (its RAS thread and timings from 2.23/2.24;
/// before 2.23 the bootstrap runs first, silently).
fn start_phase(out: &mut Out, ctx: &Ctx, who: &Who) {
    let tid = who.tid();
    out.info(who, tid, sys::INIT, init_line(ctx, who, "START"));
    if ctx.code >= 22400 && who.first() {
        out.info(who, tid, sys::INIT | sys::RAS, "RAS client listening socket at ::1<28028>");
    }
    if ctx.code >= 22300 {
        let mut rng = timing_rng(ctx, who, "bootstrap");
        let create = 0.000015 + 0.00002 * rng.unit_f64();
        let send = 0.00008 + 0.00005 * rng.unit_f64();
        let wait = if ctx.plan.nnodes > 1 { 0.02 * rng.unit_f64() } else { 0.0 };
        let recv = 0.00015 + 0.00035 * rng.unit_f64() + wait;
        let ring = 0.00004 + 0.00006 * rng.unit_f64();
        let total = create + send + recv + ring + 0.00002 * rng.unit_f64();
        out.info(
            who,
            tid,
            sys::BOOTSTRAP | sys::PROFILE,
            format!("Bootstrap timings total {total:.6} (create {create:.6}, send {send:.6}, recv {recv:.6}, ring {ring:.6}, delay 0.000000)"),
        );
    }
}

/// Topology: the fabric info NVML gives on Hopper (2.20+), the GDR level,
/// CPU affinity, NVLink SHARP.
fn topo_phase(out: &mut Out, ctx: &Ctx, who: &Who) {
    let (tid, code) = (who.tid(), ctx.code);
    let gpu = gpu_of(who.rank);
    if code >= 22000 && compute_cap(gpu) >= 90 && gpu.is_some_and(|g| g.fabric != FabricState::NotSupported) {
        out.info(who, tid, sys::INIT, format!("MNNVL busId 0x{} fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x0", bus_id(who.rank)));
    }
    if who.first() {
        // ncclGetLevel: NCCL_P2P_DISABLE=1 is the P2P level LOC.
        if ctx.plan.intra != Intra::P2p {
            out.info(who, tid, sys::ALL, "NCCL_P2P_LEVEL set by environment to LOC");
        }
        if let Some(name) = ctx.env("NCCL_NET_GDR_LEVEL").and_then(|v| gdr_level_name(v, code)) {
            out.info(who, tid, sys::ALL, format!("NCCL_NET_GDR_LEVEL set by environment to {name}"));
        }
    }
    let cpus = numa_cpus(ctx.cluster, gpu);
    if code >= 22800 {
        let all: Vec<u32> = (0..ctx.cluster.preset.host.cpus()).collect();
        let set = cpuset_ranges(&cpus);
        out.info(
            who,
            tid,
            sys::INIT,
            format!("ncclTopoGetCpuAffinity: Affinity for GPU {} is {set}. (GPU affinity = {set} ; CPU affinity = {}).", who.rank.device, cpuset_ranges(&all)),
        );
    } else {
        out.info(who, tid, sys::INIT, format!("Setting affinity for GPU {} to {}", who.rank.device, cpuset_hex(&cpus)));
    }
    int_param(out, who, tid, ctx, "NCCL_NVLS_ENABLE");
    let node_ranks = ctx.topo.nodes[ctx.topo.node_of[who.r]].len();
    if int_value(ctx.env, "NCCL_NVLS_ENABLE") != 0 && node_ranks > 2 {
        let available = gpu.is_some_and(|g| compute_cap(Some(g)) >= 90 && g.active_nvlinks() > 0 && g.fabric == FabricState::Completed);
        let not = if available { "" } else { "not " };
        let suffix = if code >= 22700 { format!(" (NVLS_NCHANNELS {})", if available { ctx.nvls_channels } else { 0 }) } else { String::new() };
        out.info(who, tid, sys::INIT, format!("NVLS multicast support is {not}available on dev {}{suffix}", who.rank.device));
    }
}

/// The communicator's shape, then ncclTopoPostset's rings (rank 0) and
/// NVLS heads (the first node's ranks), then each rank's trees.
fn graph_phase(out: &mut Out, ctx: &Ctx, shown: &[Who]) {
    let code = ctx.code;
    for who in shown {
        let tid = who.tid();
        let node = ctx.topo.node_of[who.r];
        if code >= 22000 {
            let local = ctx.topo.nodes[node].iter().position(|&x| x == who.r).unwrap_or(0);
            out.info(
                who,
                tid,
                sys::INIT,
                format!(
                    "comm {} rank {} nRanks {} nNodes {} localRanks {} localRank {local} MNNVL 0",
                    comm_ptr(ctx.cluster, who.rank),
                    who.r,
                    ctx.nranks,
                    ctx.topo.nnodes,
                    ctx.topo.nodes[node].len()
                ),
            );
        }
        int_param(out, who, tid, ctx, "NCCL_MAX_NCHANNELS");
        int_param(out, who, tid, ctx, "NCCL_MIN_NCHANNELS");
        if ctx.nvls && ctx.topo.nnodes > 1 && node == 0 {
            let heads: Vec<Vec<usize>> = (0..ctx.topo.nnodes).map(|n| ctx.nvls_heads(n)).collect();
            for h in 0..heads[0].len() {
                let values: String = heads.iter().take(20).map(|list| format!(" {:2}", list.get(h).copied().unwrap_or(0))).collect();
                out.info(who, tid, sys::INIT, format!("NVLS Head {h:2}:{values}"));
            }
        }
        if who.r == 0 {
            for c in 0..ctx.topo.channels {
                let ring = &ctx.topo.rings[ctx.topo.search_channel(c).0];
                let at = ring.iter().position(|&x| x == 0).unwrap_or(0);
                let from_zero: Vec<usize> = ring[at..].iter().chain(&ring[..at]).copied().collect();
                out.info(who, tid, sys::INIT, dump_ring(code, c, ctx.topo.channels, &from_zero));
            }
        }
        for c in 0..ctx.topo.channels {
            let (prev, next) = ctx.topo.ring(c, who.r);
            out.info(who, tid, sys::GRAPH, format!("Ring {c:02} : {prev} -> {} -> {next}", who.r));
        }
        let mut trees = String::new();
        for c in 0..ctx.topo.channels {
            let (up, down) = ctx.topo.tree(c, who.r);
            trees += &format!(" [{c}] {}/{}/{}->{}->{up}", down[0], down[1], down[2], who.r);
            if trees.len() >= 1022 {
                break;
            }
        }
        let trees: String = trees.chars().take(1022).collect();
        out.info(who, tid, sys::INIT, format!("Trees{trees}"));
    }
}

/// Buffers, the P2P type (2.24+), the proxy service threads (2.23+).
fn buffers_phase(out: &mut Out, ctx: &Ctx, who: &Who) {
    let (tid, code) = (who.tid(), ctx.code);
    int_param(out, who, tid, ctx, "NCCL_BUFFSIZE");
    out.info(who, tid, sys::INIT, format!("P2P Chunksize set to {}", ctx.chunk));
    int_param(out, who, tid, ctx, "NCCL_NCHANNELS_PER_NET_PEER");
    if code >= 22400 && who.r == 0 {
        let local = ctx.topo.nodes[0].len();
        let direct = ctx.topo.nodes[0].iter().any(|&x| x != 0 && ctx.ranks[x].pid == who.rank.pid);
        let label = if code >= 22700 { "isAllDirectP2p" } else { "intraNodeP2pSupport" };
        out.info(who, tid, sys::INIT, format!("Check P2P Type {label} {} directMode {}", u8::from(local > 1), u8::from(direct)));
    }
    if code >= 22300 {
        let mut rng = timing_rng(ctx, who, "proxy");
        let cpus = numa_cpus(ctx.cluster, gpu_of(who.rank));
        let mut core = || rng.pick(&cpus).copied().unwrap_or(0);
        let base = who.rank.pid + 120 + 3 * who.slot;
        out.info(who, base, sys::INIT, format!("[Proxy Service] Device {} CPU core {}", who.rank.device, core()));
        out.info(who, base + 1, sys::INIT, format!("[Proxy Service UDS] Device {} CPU core {}", who.rank.device, core()));
    }
}

/// Rings, trees and NVLS connected: during init before 2.22, at the first
/// collective after (only what it needs: rings, trees across nodes for
/// all-reduce, NVLS when the plan uses it).
fn connect_phase(out: &mut Out, ctx: &Ctx, shown: &[Who], done: &mut [BTreeSet<(usize, usize, bool)>], at_init: bool) {
    let code = ctx.code;
    let trees = at_init || (ctx.topo.nnodes > 1 && ctx.coll == Coll::AllReduce);
    let nvls_used = if at_init { ctx.nvls } else { ctx.nvls && matches!(ctx.plan.algo, Algo::Nvls | Algo::NvlsTree) };
    let gdr = ctx.ring_gdr();
    for (who, done) in shown.iter().zip(done.iter_mut()) {
        let tid = if at_init { who.tid() } else { who.rank.pid + 200 + who.slot };
        if code >= 22300 {
            let mut rng = timing_rng(ctx, who, "progress");
            let cpus = numa_cpus(ctx.cluster, gpu_of(who.rank));
            let core = rng.pick(&cpus).copied().unwrap_or(0);
            out.info(who, who.rank.pid + 122 + 3 * who.slot, sys::INIT, format!("[Proxy Progress] Device {} CPU core {core}", who.rank.device));
        }
        if ctx.nranks <= 1 {
            if code < 22200 {
                out.info(who, tid, sys::INIT, "Connected all rings");
                out.info(who, tid, sys::INIT, "Connected all trees");
            }
            continue;
        }
        let ring = ctx.setup(who.r, &ctx.ring_wanted(who.r), done);
        if ctx.plan.intra != Intra::P2p {
            // shmCanConnect reads its switch as the first connection is chosen.
            int_param(out, who, tid, ctx, "NCCL_SHM_DISABLE");
        }
        net_params(out, ctx, who, tid, &ring);
        for line in ring {
            out.info(who, tid, if line.contains("NET/") { sys::INIT | sys::NET } else { sys::INIT | sys::P2P }, line);
        }
        let rings = if code >= 22400 { format!("Connected all rings, use ring PXN 0 GDR {}", u8::from(gdr)) } else { "Connected all rings".to_string() };
        out.info(who, tid, sys::INIT, rings);
        if trees {
            for line in ctx.setup(who.r, &ctx.tree_wanted(who.r), done) {
                out.info(who, tid, if line.contains("NET/") { sys::INIT | sys::NET } else { sys::INIT | sys::P2P }, line);
            }
            out.info(who, tid, sys::INIT, "Connected all trees");
        }
        if nvls_used {
            out.info(who, tid, sys::INIT | sys::NVLS, ctx.nvls_line(who));
            let tree = if code < 22200 { ctx.topo.nodes[ctx.topo.node_of[who.r]].len() > 1 } else { ctx.topo.nnodes > 1 };
            if tree {
                out.info(who, tid, sys::INIT, "Connected NVLS tree");
            }
        }
    }
}

/// The IB parameters NCCL reads when it makes its first network connection.
fn net_params(out: &mut Out, ctx: &Ctx, who: &Who, tid: u32, lines: &[String]) {
    if ctx.plan.socket || !lines.iter().any(|l| l.contains("NET/")) {
        return;
    }
    for name in ["NCCL_IB_GID_INDEX", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_IB_SL", "NCCL_IB_TC", "NCCL_IB_QPS_PER_CONNECTION"] {
        int_param(out, who, tid, ctx, name);
    }
}

/// Tuning (and the user's algorithm and protocol), channel counts, the
/// device work FIFO (2.22+), the tuner plugin (2.21+), Init COMPLETE and its
/// timings (2.22+).
fn tune_phase(out: &mut Out, ctx: &Ctx, who: &Who) {
    let (tid, code) = (who.tid(), ctx.code);
    for name in ["NCCL_PROTO", "NCCL_ALGO"] {
        if let Some(value) = ctx.env(name) {
            out.info(who, tid, sys::ENV, format!("{name} set by environment to {value}"));
        }
    }
    out.info(who, tid, sys::INIT, format!("threadThresholds 8/8/64 | {}/8/64 | 512 | 512", 8 * ctx.nranks));
    let ch = ctx.topo.channels;
    let collnet = match code {
        0..=21999 => String::new(),
        22000..=22099 => "0 collnet channels, ".to_string(),
        _ => format!("{ch} collnet channels, "),
    };
    out.info(
        who,
        tid,
        sys::INIT,
        format!(
            "{ch} coll channels, {collnet}{} nvls channels, {} p2p channels, {} p2p channels per peer",
            ctx.nvls_channels, ctx.p2p_channels, ctx.p2p_per_peer
        ),
    );
    if who.first() {
        if let Some(mode) = ctx.env("NCCL_LAUNCH_MODE").filter(|v| !v.is_empty()) {
            let mode = if mode.eq_ignore_ascii_case("GROUP") { "GROUP" } else { "PARALLEL" };
            out.info(who, tid, sys::ENV, format!("NCCL_LAUNCH_MODE set by environment to {mode}"));
        }
    }
    if who.r == 0 {
        match code {
            0..=22199 => {}
            22200..=22399 => out.info(who, tid, sys::INIT, "CC Off, Multi-GPU CC Off, workFifoBytes 1048576"),
            _ => out.info(who, tid, sys::INIT, "CC Off, workFifoBytes 1048576"),
        }
    }
    if who.first() {
        let missing = "libnccl-net.so: cannot open shared object file: No such file or directory";
        match code {
            0..=22099 => {}
            22100..=22199 => {
                out.info(who, tid, sys::ENV | sys::TUNING, "TUNER/Plugin: No plugin found (libnccl-tuner.so)");
                out.info(who, tid, sys::ENV | sys::TUNING, "TUNER/Plugin: No plugin found (libnccl-net.so)");
                out.info(who, tid, sys::ENV | sys::TUNING, format!("TUNER/Plugin: Plugin load returned 2 : {missing} : when loading libnccl-tuner.so"));
                out.info(who, tid, sys::ENV | sys::TUNING, "TUNER/Plugin: Using internal tuner plugin.");
            }
            22200..=22599 => out.info(who, tid, sys::ENV | sys::TUNING, "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin."),
            22600..=22799 => out.info(who, tid, sys::INIT | sys::TUNING, "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin."),
            _ => out.info(who, tid, sys::INIT | sys::TUNING, "TUNER/Plugin: Could not find: libnccl-tuner.so"),
        }
    }
    out.info(who, tid, sys::INIT, init_line(ctx, who, "COMPLETE"));
    if code >= 22200 {
        let mut rng = timing_rng(ctx, who, "init");
        let scale = (ctx.nranks as f64).log2().max(0.0);
        let kernels = 0.15 + 0.2 * rng.unit_f64();
        let alloc = 0.02 + 0.08 * rng.unit_f64();
        let bootstrap = 0.05 + 0.05 * scale + 0.3 * rng.unit_f64();
        let allgathers = 0.01 + 0.005 * scale + 0.02 * rng.unit_f64();
        let topo = 0.05 + 0.15 * rng.unit_f64();
        let graphs = 0.01 + 0.02 * rng.unit_f64();
        let connections = 0.05 + 0.1 * rng.unit_f64();
        let rest = 0.01 * rng.unit_f64();
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        let parts = [kernels, alloc, bootstrap, allgathers, topo, graphs, connections, rest].map(r2);
        let total: f64 = parts.iter().sum();
        let [kernels, alloc, bootstrap, allgathers, topo, graphs, connections, rest] = parts;
        if code >= 22300 {
            out.info(who, tid, sys::INIT | sys::PROFILE, format!(
                "Init timings - {}: rank {} nranks {} total {total:.2} (kernels {kernels:.2}, alloc {alloc:.2}, bootstrap {bootstrap:.2}, allgathers {allgathers:.2}, topo {topo:.2}, graphs {graphs:.2}, connections {connections:.2}, rest {rest:.2})",
                ctx.func(), who.r, ctx.nranks
            ));
        } else {
            let total = total - alloc;
            out.info(who, tid, sys::INIT | sys::PROFILE, format!(
                "Init timings: rank {} nranks {} total {total:.2} (kernels {kernels:.2}, bootstrap {bootstrap:.2}, allgathers {allgathers:.2}, topo {topo:.2}, graphs {graphs:.2}, connections {connections:.2}, rest {rest:.2})",
                who.r, ctx.nranks
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_helpers_behave_as_in_nccl() {
        assert_eq!(strtoll("0x10"), Some(16));
        assert_eq!(strtoll("010"), Some(8));
        assert_eq!(strtoll("abc"), Some(0));
        assert_eq!(strtoll("-3x"), Some(-3));
        assert_eq!(strtoll("99999999999999999999"), None);
        assert_eq!(nccl_code("2.26.2"), 22602);
        assert_eq!(nccl_code("2.18.5+cuda12.2"), 21805);
        assert_eq!(nccl_code("x"), 0);
        assert_eq!(gdr_level_name("PHB", 22602), Some("PHB"));
        assert_eq!(gdr_level_name("3", 22602), Some("PHB"));
        assert_eq!(gdr_level_name("NODE", 22602), None);
        // Two sockets of 48 cores with hyperthreads: socket 0 is 0-47,96-143.
        let cpus: Vec<u32> = (0..48).chain(96..144).collect();
        assert_eq!(cpuset_hex(&cpus), "ffff,ffffffff,00000000,0000ffff,ffffffff");
        assert_eq!(cpuset_ranges(&cpus), "0-47,96-143");
    }

    #[test]
    fn binary_trees_match_ncclgetdtree() {
        // Two nodes: node 0 roots the first tree, node 1 the second.
        assert_eq!(dtree(2, 0), [(-1, -1, 1, 0), (1, -1, -1, 1)]);
        assert_eq!(dtree(2, 1), [(0, -1, -1, 1), (-1, -1, 0, 0)]);
        // Four nodes: 0 -> 2 -> {1, 3} in the first tree.
        assert_eq!(btree(4, 0).2, 2);
        assert_eq!((btree(4, 2).1, btree(4, 2).2), (1, 3));
        assert_eq!(btree(4, 3).0, 2);
    }

    #[test]
    fn ring_lines_follow_the_release() {
        let ring: Vec<usize> = vec![0, 5, 4, 7, 6, 3, 2, 1, 8, 13, 12, 15, 14, 11, 10, 9];
        assert_eq!(dump_ring(22105, 0, 8, &ring), "Channel 00/08 :    0   5   4   7   6   3   2   1   8  13  12  15  14  11  10   9");
        assert_eq!(dump_ring(22602, 0, 16, &ring), "Channel 00/16 :  0  5  4  7  6  3  2  1  8 13 12 15 14 11 10  9");
        let wide: Vec<usize> = (0..32).collect();
        assert_eq!(dump_ring(21805, 1, 8, &wide).split_whitespace().count(), 3 + 20);
        let long: Vec<usize> = (0..100).collect();
        let line = dump_ring(22602, 0, 32, &long);
        assert!(line.len() == 127 && line.ends_with("..."), "{line}");
    }
}
