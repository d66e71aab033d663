//! NCCL collective performance, as nccl-tests measures it.
//!
//! A job is a list of nodes with the ranks each runs (one GPU per rank,
//! local ranks on GPUs 0..k). [`Plan::new`] reads the hardware once, so a
//! 1,024-node job costs one pass over its nodes, never a per-rank simulation:
//!
//! - intra-node bus bandwidth `B_intra = min_gpu(active NVLinks x GB/s per
//!   link) x eta`, eta = 0.995 for NVLS all-reduce (H100/H200/B200 with the
//!   NVSwitch fabric up), 0.774 for rings (~370 GB/s on H100, FACTS §2);
//! - per rail `r = link_gbps/8 x 0.96` GB/s (x 0.55 without GPUDirect RDMA,
//!   capped by the GPU's PCIe link), a node's network `R = rails x min(r)`:
//!   a ring is as fast as its slowest link; down ports are left out;
//! - inter-node bus bandwidth `B_net = R x kappa x f(N) x eta(N)`, kappa =
//!   1.23 for tree/NVLS-tree all-reduce (469 GB/s on 2 x 8 NDR, FACTS §2),
//!   0.97 otherwise, `f = sqrt(N / 2(N-1))`, `eta = 1 / (1 + 0.054 log2(N/2))`
//!   (~320 GB/s on 8 nodes);
//! - `busbw = min(B_intra, B_net)`, `algbw_max = busbw / factor(n)`;
//! - per protocol p (LL, LL128, Simple) `t_p(S) = a_p + S / (frac_p x algbw_max)`
//!   with `a_p = b_p + k((L-1) v_p + H w_p)` (k = 2 for all-reduce, L local
//!   ranks, H = ceil(log2 N) for trees or N-1 for rings), Simple adding a
//!   pipeline-fill term `tau (1 - exp(-S/S_f))`, every protocol adding
//!   `min(S, 8 KB) / b_1` (one channel until the message fills it; b_1 =
//!   1.5 GB/s over the network, 6 on NVLink); `t = min_p t_p`.
//!
//! NCCL's switches change the transports as NCCL does: `NCCL_IB_DISABLE`
//! leaves the nodes on sockets (`SOCKET_GBS` a node); `NCCL_P2P_DISABLE`
//! sends within a node through host memory (SHM: GPU to host and back over
//! each GPU's PCIe link, `SHM_SHARE` of it, an assumption of this model, and
//! no NVLS); with `NCCL_SHM_DISABLE` too, within a node through the NIC
//! (NET, at a rail's rate); `NCCL_NET_GDR_LEVEL=LOC` turns GPUDirect RDMA
//! off.

use super::{link_gbps, pcie_gbps};
use crate::model::gpu::{FabricState, Gpu, GpuHealth};
use crate::model::{Cluster, Node};
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
}

impl Coll {
    pub const ALL: [Coll; 7] = [Coll::AllGather, Coll::AllReduce, Coll::AllToAll, Coll::Broadcast, Coll::Reduce, Coll::ReduceScatter, Coll::SendRecv];

    pub fn program(self) -> &'static str {
        match self {
            Coll::AllReduce => "all_reduce_perf",
            Coll::AllGather => "all_gather_perf",
            Coll::ReduceScatter => "reduce_scatter_perf",
            Coll::AllToAll => "alltoall_perf",
            Coll::Broadcast => "broadcast_perf",
            Coll::Reduce => "reduce_perf",
            Coll::SendRecv => "sendrecv_perf",
        }
    }

    /// busbw = algbw x this (nccl-tests' GetBw; FACTS §2).
    pub fn bus_factor(self, n: u64) -> f64 {
        let n = n.max(1) as f64;
        match self {
            Coll::AllReduce => 2.0 * (n - 1.0) / n,
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll => (n - 1.0) / n,
            _ => 1.0,
        }
    }

    /// Whether the collective takes a reduction operation (the redop column).
    pub fn has_op(self) -> bool {
        matches!(self, Coll::AllReduce | Coll::ReduceScatter | Coll::Reduce | Coll::SendRecv)
    }

    /// Whether the root column is a rank (broadcast, reduce) or -1.
    pub fn rooted(self) -> bool {
        matches!(self, Coll::Broadcast | Coll::Reduce)
    }

    /// The (size, count) columns for a requested byte count: per-peer counts
    /// are whole elements for each of the n ranks.
    pub fn size_count(self, bytes: u64, type_size: u64, n: u64) -> (u64, u64) {
        let (ts, n) = (type_size.max(1), n.max(1));
        match self {
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll => {
                let count = bytes / (ts * n);
                (count * ts * n, count)
            }
            _ => (bytes / ts * ts, bytes / ts),
        }
    }
}

/// How ranks on one node reach each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intra {
    /// NVLink (or PCIe) peer to peer.
    P2p,
    /// Through host shared memory (`NCCL_P2P_DISABLE=1`).
    Shm,
    /// Through the network (`NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`).
    Net,
}

/// A node's bandwidth over sockets (GB/s): TCP over its Ethernet.
const SOCKET_GBS: f64 = 2.5;
/// The share of a GPU's PCIe bandwidth a ring through host memory reaches:
/// each byte crosses the link twice (to the host, and back to the peer).
const SHM_SHARE: f64 = 0.4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Ring,
    Tree,
    Nvls,
    NvlsTree,
}

/// One node's part in a job: the node and how many ranks (GPUs) it runs.
#[derive(Clone, Copy)]
pub struct Member<'a> {
    pub node: &'a Node,
    pub ranks: u32,
}

/// How a node reaches the network.
#[derive(Clone, Debug, Default)]
pub struct NodeNet {
    /// HCA indices NCCL uses (`NET/IB : Using ...`): up and selected.
    pub hcas: Vec<usize>,
    /// Per local rank: the HCA index it sends through and whether with GPUDirect RDMA.
    pub paths: Vec<(usize, bool)>,
    /// The node's network bandwidth in GB/s (rails used x slowest rail).
    pub gbs: f64,
    /// The slowest used rail in GB/s.
    pub rail_gbs: f64,
}

/// Why the job fails at initialisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitFailure {
    pub host: String,
    /// The CUDA error string, e.g. `invalid device ordinal`.
    pub cuda: &'static str,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub coll: Coll,
    pub nranks: u64,
    pub nnodes: u64,
    /// The most ranks on one node.
    pub local: u64,
    pub algo: Algo,
    pub intra_bus: f64,
    pub net_bus: f64,
    /// Large-message bus bandwidth (GB/s) and algorithm bandwidth.
    pub bus_gbs: f64,
    pub alg_gbs: f64,
    pub nets: Vec<NodeNet>,
    /// No usable IB device on some node, or IB disabled: NCCL falls back to sockets.
    pub socket: bool,
    /// `NCCL_IB_DISABLE` is set: IB was never tried.
    pub ib_disabled: bool,
    /// The transport within a node.
    pub intra: Intra,
    /// (latency us, bandwidth GB/s) of LL, LL128, Simple; None when disabled.
    pub protos: [Option<(f64, f64)>; 3],
    pub fill_us: f64,
    pub fill_bytes: f64,
    /// GB/s of the first channel: small messages ride one channel until ~8 KB.
    pub first_channel_gbs: f64,
}

/// Whether an integer NCCL parameter (`NCCL_P2P_DISABLE=1`) is set and not 0.
fn env_set(env: Env, name: &str) -> bool {
    env(name).and_then(|value| value.trim().parse::<i64>().ok()).is_some_and(|value| value != 0)
}

/// Parses NCCL's list syntax (`a,b`, `^a,b`) against a name, case-insensitively.
pub fn env_allows(value: Option<&str>, name: &str) -> bool {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return true };
    let (negate, list) = match value.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    let found = list.split(',').any(|item| item.trim().eq_ignore_ascii_case(name));
    found != negate
}

/// Whether `NCCL_IB_HCA` selects this device (`mlx5_0,mlx5_1`, `=mlx5_0:1`,
/// `^mlx5_4`; prefixes match unless `=` asks for exact names).
pub fn hca_selected(filter: Option<&str>, name: &str) -> bool {
    let Some(filter) = filter.map(str::trim).filter(|v| !v.is_empty()) else { return true };
    let (negate, rest) = match filter.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, filter),
    };
    let (exact, rest) = match rest.strip_prefix('=') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let found = rest.split(',').any(|item| {
        let device = item.split(':').next().unwrap_or("").trim();
        !device.is_empty() && if exact { name == device } else { name.starts_with(device) }
    });
    found != negate
}

/// GPU bandwidth into NVLink (GB/s per direction); PCIe when it has no links up.
fn gpu_link_gbs(gpu: &Gpu) -> f64 {
    let links: f64 = gpu.nvlinks.iter().filter(|l| l.active).map(|l| l.gbytes_per_sec).sum();
    if links > 0.0 {
        links
    } else {
        pcie_gbps(&gpu.pcie) / 8.0 * 0.8
    }
}

/// How much of its links' bandwidth a GPU's copy kernels still drive when a
/// slowdown holds its SM clock down. NCCL's kernels keep NVLink busy down to
/// about 60% of the top clock (an assumption of this model, not a capture);
/// below, throughput falls with the clock: a thermal slowdown (55%) costs a
/// few percent, a power brake (382 MHz, under 20%) about two thirds.
fn clock_factor(gpu: &Gpu) -> f64 {
    use crate::model::gpu::throttle;
    let slowed = throttle::HW_SLOWDOWN | throttle::HW_THERMAL_SLOWDOWN | throttle::SW_THERMAL_SLOWDOWN | throttle::HW_POWER_BRAKE_SLOWDOWN;
    if gpu.throttle_reasons & slowed == 0 || gpu.max_sm_clock_mhz == 0 {
        return 1.0;
    }
    (f64::from(gpu.sm_clock_mhz) / f64::from(gpu.max_sm_clock_mhz) / 0.6).min(1.0)
}

fn nvls_capable(gpu: &Gpu) -> bool {
    ["H100", "H200", "H20", "B200", "B300", "GB200", "GB300"].iter().any(|part| gpu.name.contains(part))
}

fn used<'a>(m: &Member<'a>) -> Vec<&'a Gpu> {
    m.node.gpus.iter().filter(|g| g.is_visible()).take(m.ranks as usize).collect()
}

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The CUDA error a rank on this node hits first, if any.
fn cuda_failure(member: &Member) -> Option<&'static str> {
    // libcuda of a newer driver than the loaded module (cudaErrorSystemDriverMismatch).
    if member.node.driver_mismatch() {
        return Some("system has unsupported display driver / cuda driver combination");
    }
    let visible: Vec<&Gpu> = member.node.gpus.iter().filter(|g| g.is_visible()).collect();
    if member.ranks as usize > visible.len() {
        return Some(if visible.is_empty() { "no CUDA-capable device is detected" } else { "invalid device ordinal" });
    }
    for gpu in &visible[..member.ranks as usize] {
        if gpu.health == GpuHealth::Unresponsive {
            return Some("unknown error");
        }
        if gpu.needs_reset && gpu.ecc.volatile_uncorrected > 0 {
            return Some("uncorrectable ECC error encountered");
        }
        if !gpu.nvlinks.is_empty() && gpu.fabric == FabricState::InProgress {
            return Some("system not yet initialized");
        }
    }
    None
}

/// all_reduce_perf over every node, a rank on each GPU, in NCCL's default
/// environment: its large-message bus bandwidth (GB/s). None when the job
/// cannot run (a node down, a GPU lost).
pub fn all_reduce_busbw(cluster: &Cluster) -> Option<f64> {
    if cluster.nodes.iter().any(|node| !node.up(cluster.now)) {
        return None;
    }
    let members: Vec<Member> = cluster.nodes.iter().map(|node| Member { node, ranks: node.gpus.len() as u32 }).collect();
    Plan::new(cluster, &members, Coll::AllReduce, &|_| None).ok().map(|plan| plan.bus_gbs)
}

impl Plan {
    /// Reads the hardware of a job. `env` gives the job's environment (NCCL_*).
    pub fn new(cluster: &Cluster, members: &[Member], coll: Coll, env: Env) -> Result<Plan, InitFailure> {
        for member in members {
            if let Some(cuda) = cuda_failure(member) {
                return Err(InitFailure { host: member.node.hostname.clone(), cuda });
            }
        }
        let nranks: u64 = members.iter().map(|m| u64::from(m.ranks)).sum::<u64>().max(1);
        let nnodes = members.iter().filter(|m| m.ranks > 0).count().max(1) as u64;
        let local = members.iter().map(|m| u64::from(m.ranks)).max().unwrap_or(1).max(1);
        let algo_env = env("NCCL_ALGO");
        let hca_env = env("NCCL_IB_HCA");
        let gdr_level = env("NCCL_NET_GDR_LEVEL").unwrap_or_default().to_ascii_uppercase();
        let ib_disabled = env_set(env, "NCCL_IB_DISABLE");
        let intra_transport = match (env_set(env, "NCCL_P2P_DISABLE"), env_set(env, "NCCL_SHM_DISABLE")) {
            (false, _) => Intra::P2p,
            (true, false) => Intra::Shm,
            (true, true) => Intra::Net,
        };
        let mut intra = f64::INFINITY;
        let mut nvls = coll == Coll::AllReduce
            && intra_transport == Intra::P2p
            && local > 1
            && env("NCCL_NVLS_ENABLE").as_deref() != Some("0")
            && env_allows(algo_env.as_deref(), "NVLS")
            && env_allows(algo_env.as_deref(), if nnodes > 1 { "NVLSTree" } else { "NVLS" });
        for member in members.iter().filter(|m| m.ranks > 1) {
            for gpu in used(member) {
                let link = match intra_transport {
                    Intra::P2p => gpu_link_gbs(gpu),
                    Intra::Shm => pcie_gbps(&gpu.pcie) / 8.0 * SHM_SHARE,
                    Intra::Net => f64::INFINITY,
                };
                intra = intra.min(link * clock_factor(gpu));
                nvls &= nvls_capable(gpu) && gpu.active_nvlinks() > 0 && gpu.fabric == FabricState::Completed;
            }
        }
        let mut nets = Vec::with_capacity(members.len());
        let mut socket = false;
        let mut net_node = f64::INFINITY;
        let mut rail_min = f64::INFINITY;
        for member in members {
            let node = member.node;
            let hcas: Vec<usize> =
                (0..node.hcas.len()).filter(|&i| !ib_disabled && node.hcas[i].port.is_up() && hca_selected(hca_env.as_deref(), &node.hcas[i].name)).collect();
            let mut net = NodeNet { hcas, ..NodeNet::default() };
            if net.hcas.is_empty() {
                socket = true;
                net.gbs = SOCKET_GBS;
                net.rail_gbs = SOCKET_GBS;
            } else {
                let mut slowest = f64::INFINITY;
                for (rank, gpu) in used(member).into_iter().enumerate() {
                    // Its own rail when that port is up, else PXN through the nearest NIC.
                    let own = net.hcas.iter().copied().find(|&i| node.hcas[i].pcie_switch == gpu.pcie_switch);
                    let hca_index = own.unwrap_or(net.hcas[rank % net.hcas.len()]);
                    let hca = &node.hcas[hca_index];
                    // LOC: GPUDirect RDMA never, whatever the distance.
                    let gdr = !matches!(gdr_level.as_str(), "LOC" | "0")
                        && (own.is_none()
                            || gpu.pcie_switch == hca.pcie_switch
                            || matches!(gdr_level.as_str(), "SYS" | "5" | "PHB" | "4")
                            || (gpu.numa_node == hca.numa_node && matches!(gdr_level.as_str(), "NODE" | "3")));
                    let mut rail = link_gbps(cluster, node, hca) / 8.0 * 0.96 * super::congestion_share(&hca.port);
                    rail /= 1.0 + hca.port.symbol_errors_per_hour as f64 / 10_000.0;
                    if !gdr {
                        rail *= 0.55;
                    }
                    rail = rail.min(pcie_gbps(&gpu.pcie) / 8.0 * 0.9);
                    slowest = slowest.min(rail);
                    net.paths.push((hca_index, gdr));
                }
                let rails = (member.ranks as usize).min(net.hcas.len()).max(1);
                if slowest.is_finite() {
                    net.rail_gbs = slowest;
                    net.gbs = rails as f64 * slowest;
                }
            }
            if member.ranks > 0 {
                net_node = net_node.min(net.gbs);
                rail_min = rail_min.min(net.rail_gbs);
            }
            nets.push(net);
        }
        // Within a node through the NIC: a ring at the slowest rail's rate.
        if intra_transport == Intra::Net && local > 1 {
            intra = rail_min * 0.97;
        }
        let intra_bus = match intra_transport {
            Intra::P2p if nvls => intra * 0.995,
            Intra::P2p => intra * 0.774,
            Intra::Shm | Intra::Net => intra,
        };
        let tree_ok = env_allows(algo_env.as_deref(), "Tree");
        let algo = match (nnodes > 1, nvls) {
            (false, true) => Algo::Nvls,
            (true, true) => Algo::NvlsTree,
            (true, false) if coll == Coll::AllReduce && tree_ok => Algo::Tree,
            _ => Algo::Ring,
        };
        let n = nnodes as f64;
        let net_bus = if nnodes <= 1 {
            f64::INFINITY
        } else {
            let scale = (n / (2.0 * (n - 1.0))).sqrt() / (1.0 + 0.054 * (n / 2.0).log2());
            match coll {
                Coll::SendRecv => rail_min * 0.97,
                Coll::AllToAll => rail_min * 0.97 * (nranks as f64 - 1.0) / (nranks - local).max(1) as f64,
                Coll::AllReduce if algo != Algo::Ring => net_node * 1.23 * scale,
                _ => net_node * 0.97 * scale,
            }
        };
        let factor = coll.bus_factor(nranks);
        let (bus_gbs, alg_gbs) = if nranks == 1 {
            (0.0, 1000.0)
        } else {
            let bus = intra_bus.min(net_bus);
            (bus, bus / factor.max(1e-9))
        };
        let k = if coll == Coll::AllReduce { 2.0 } else { 1.0 };
        let hops = if nnodes <= 1 {
            0.0
        } else if algo == Algo::Ring && coll != Coll::AllToAll {
            n - 1.0
        } else {
            n.log2().ceil()
        };
        let l = (local - 1) as f64;
        let p2p = if coll == Coll::AllToAll { (nranks - 1) as f64 * 0.05 } else { 0.0 };
        let proto = env("NCCL_PROTO");
        let lat = |b: f64, v: f64, w: f64| b + k * (l * v + hops * w) + p2p;
        let ll_frac = if nnodes > 1 { 0.05 } else { 0.1 };
        let mut protos = [Some((lat(4.0, 0.55, 6.7), alg_gbs * ll_frac)), Some((lat(8.0, 1.0, 9.0), alg_gbs * 0.5)), Some((lat(12.0, 2.0, 12.0), alg_gbs))];
        // LL128 runs on NVLink only unless asked for.
        if nnodes > 1 && proto.is_none() {
            protos[1] = None;
        }
        for (slot, name) in protos.iter_mut().zip(["LL", "LL128", "Simple"]) {
            if !env_allows(proto.as_deref(), name) {
                *slot = None;
            }
        }
        if protos.iter().all(Option::is_none) {
            protos[2] = Some((lat(12.0, 2.0, 12.0), alg_gbs));
        }
        let (fill_us, fill_bytes) =
            if nnodes <= 1 { (80.0, 40e6) } else { (145.0 + 42.0 * (n / 2.0).log2(), 40.0 * 1048576.0 / (1.0 + 0.6 * (n / 2.0).log2())) };
        let first_channel_gbs = if nnodes > 1 { 1.5 } else { 6.0 };
        Ok(Plan {
            coll,
            nranks,
            nnodes,
            local,
            algo,
            intra_bus,
            net_bus,
            bus_gbs,
            alg_gbs,
            nets,
            socket,
            ib_disabled,
            intra: intra_transport,
            protos,
            fill_us,
            fill_bytes,
            first_channel_gbs,
        })
    }

    /// The model's time in microseconds for one operation on `bytes` (the size column).
    pub fn time_us(&self, bytes: u64) -> f64 {
        let s = bytes as f64;
        let mut best = f64::INFINITY;
        for (index, proto) in self.protos.iter().enumerate() {
            let Some((lat, gbs)) = proto else { continue };
            let mut t = lat + s.min(8192.0) / (self.first_channel_gbs * 1e3) + s / (gbs.max(1e-6) * 1e3);
            if index == 2 {
                t += self.fill_us * (1.0 - (-s / self.fill_bytes).exp());
            }
            best = best.min(t);
        }
        if best.is_finite() {
            best
        } else {
            1.0
        }
    }

    /// One measurement: the model's time with small seeded noise (narrower
    /// with more iterations) and, below ~1.5 ms, an occasional stall.
    pub fn measure(&self, bytes: u64, iters: u32, rng: &mut Rng) -> f64 {
        let t = self.time_us(bytes);
        let sigma = if t < 200.0 { 0.012 } else { 0.004 } * (20.0 / f64::from(iters.max(1))).sqrt().min(3.0);
        let g = rng.unit_f64() + rng.unit_f64() + rng.unit_f64() - 1.5;
        let mut f = 1.0 + 2.0 * sigma * g;
        if t < 1500.0 && rng.unit_f64() < 0.015 {
            f *= 1.2 + 2.0 * rng.unit_f64();
        }
        t * f.max(0.5)
    }
}
