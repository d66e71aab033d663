//! The RDMA performance model behind the perftest tools (ib_write_bw and
//! friends): what one HCA pair achieves for a verb, a message size and a
//! number of QPs, from the model's links. Calibrated against the captures in
//! ../shared/reference/fabric (FACTS.md §1 "Realistic numbers", §5).
//!
//! Bandwidth. The wire ceiling is the port's data rate (lane speed x width;
//! ibstat's Rate is already after line encoding) times the packet efficiency
//! of the negotiated MTU ([`super::mtu_efficiency`]), capped by the HCA's
//! PCIe link ([`super::pcie_gbps`]: Gen5 x16 464, Gen4 x16 232, Gen5 x4 116
//! Gb/s), times 0.988 (flow control, acks, doorbells): NDR 4X at MTU 4096
//! gives 392.3 Gb/s, HDR 196.2, MTU 1024 2 % less, an NDR HCA at Gen4 x16
//! 229. `--use_cuda` adds the GPU's PCIe link and the GPU-NIC path: same
//! PCIe switch x0.99, same socket x0.80, across sockets x0.45. The slower
//! end of the pair sets the ceiling `B`.
//! Reads reach 0.838 of `B` (16 outstanding reads), sends 0.995.
//!
//! Message size. A QP posts at most `R` = 2.6 Mpps (x `q^0.7` for `q` QPs),
//! so small messages are rate bound. Per message the average takes
//! `t = smax(1/R, s/B + lag/B)` with `smax(a, b) = (a^6 + b^6)^(1/6)`, where
//! `lag` is 1900 B with the older perftest's CQ moderation of 100 (the
//! average lags the peak until ~256 KB, as in the A100 capture) and 64 B with
//! moderation 1 (the NDR capture's average equals its peak at 64 KB). The
//! peak takes `smax(k/R, s/B)` with `k` = 0.78 above 2 KB (batched
//! completions), 0.996 below.
//!
//! Latency (t_typical, one way for write and send, round trip for read):
//! `base + s * 0.7 ps` up to the inline size, else
//! `base + min(2.1, 0.95 + 0.1 log2(s/256) + 0.5 [s >= mtu]) + s/B` (us), with
//! base 1.22 us (CX-7 write) / 1.87 us (CX-6 write), +0.05 for send, x1.85 for
//! read, +0.25 on RoCE, +0.35 with `--use_cuda` across sockets.

use super::{goodput_share, mtu_efficiency, pcie_gbps};
use crate::model::fabric::{Hca, LaneSpeed, LinkLayer};
use crate::model::gpu::Gpu;
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Write,
    Read,
    Send,
}

/// One end of a test: its HCA, and the GPU whose memory it uses, if any.
#[derive(Clone, Copy)]
pub struct End<'a> {
    pub hca: &'a Hca,
    pub gpu: Option<&'a Gpu>,
}

/// What the test asks for.
#[derive(Clone, Copy, Debug)]
pub struct Test {
    pub verb: Verb,
    pub qps: u32,
    pub mtu: u32,
    pub bidirectional: bool,
    /// perftest's CQ moderation (100 before 26.x, then 1).
    pub cq_mod: u32,
}

/// The ceiling of one end in Gb/s, per direction.
pub fn end_gbps(end: End, mtu: u32) -> f64 {
    let port = &end.hca.port;
    let wire = f64::from(port.rate_gbps()) * mtu_efficiency(mtu, port.link_layer);
    let mut gbps = wire.min(pcie_gbps(&end.hca.pcie)) * 0.988 * goodput_share(port);
    if let Some(gpu) = end.gpu {
        gbps = gbps.min(pcie_gbps(&gpu.pcie)) * placement_factor(end.hca, gpu);
    }
    gbps
}

/// GPU memory behind the same PCIe switch as the HCA is nearly free; through
/// the root complex it costs a fifth; across the socket link over half.
pub fn placement_factor(hca: &Hca, gpu: &Gpu) -> f64 {
    if gpu.pcie_switch == hca.pcie_switch && gpu.numa_node == hca.numa_node {
        0.99
    } else if gpu.numa_node == hca.numa_node {
        0.80
    } else {
        0.45
    }
}

/// The pair's large-message ceiling in bytes per microsecond, per direction.
fn ceiling(test: &Test, a: End, b: End) -> f64 {
    let gbps = end_gbps(a, test.mtu).min(end_gbps(b, test.mtu));
    let verb = match test.verb {
        Verb::Write => 1.0,
        Verb::Read => 0.838,
        Verb::Send => 0.995,
    };
    gbps * verb * 125.0
}

fn smax(a: f64, b: f64) -> f64 {
    (a.powi(6) + b.powi(6)).powf(1.0 / 6.0)
}

/// One row of a bandwidth table, in bytes per second.
#[derive(Clone, Copy, Debug)]
pub struct BwRow {
    pub peak: f64,
    pub average: f64,
    /// Messages per second.
    pub msg_rate: f64,
}

/// Bandwidth for `size`-byte messages. `rng` adds the run-to-run noise.
pub fn bandwidth(test: &Test, a: End, b: End, size: u64, rng: &mut Rng) -> BwRow {
    let s = size.max(1) as f64;
    let ceiling = ceiling(test, a, b); // bytes/us
    let rate = 2.6
        * f64::from(test.qps.clamp(1, 64)).powf(0.7)
        * match test.verb {
            Verb::Read => 0.9,
            _ => 1.0,
        }; // messages/us
    let lag = if test.cq_mod >= 100 { 1900.0 } else { 64.0 };
    let per_msg = smax(1.0 / rate, (s + lag) / ceiling);
    let peak_k = if size > 2048 { 0.78 } else { 0.996 };
    let per_msg_peak = smax(peak_k / rate, s / ceiling).min(per_msg);
    let noise = |rng: &mut Rng, spread: f64| 1.0 + (rng.unit_f64() - 0.5) * spread;
    let both = if test.bidirectional {
        match test.verb {
            Verb::Write => 1.96,
            Verb::Send => 1.9,
            Verb::Read => 1.8,
        }
    } else {
        1.0
    };
    let average = s / per_msg * 1e6 * both * noise(rng, 0.004);
    let peak = (s / per_msg_peak * 1e6 * both * noise(rng, 0.002)).max(average * (1.0 + 0.0004 * rng.unit_f64()));
    BwRow { peak, average, msg_rate: average / s }
}

/// The latency statistics of one row, in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct LatRow {
    pub min: f64,
    pub max: f64,
    pub typical: f64,
    pub average: f64,
    pub stdev: f64,
    pub p99: f64,
    pub p999: f64,
}

/// Latency for `size`-byte messages; `inline` is the max inline size.
pub fn latency(test: &Test, a: End, b: End, size: u64, inline: u64, rng: &mut Rng) -> LatRow {
    let s = size as f64;
    let newer = |hca: &Hca| hca.port.lane_speed >= LaneSpeed::Ndr;
    let mut base = if newer(a.hca) && newer(b.hca) { 1.22 } else { 1.87 };
    if test.verb == Verb::Send {
        base += 0.05;
    }
    if a.hca.port.link_layer == LinkLayer::Ethernet {
        base += 0.25;
    }
    for end in [a, b] {
        if let Some(gpu) = end.gpu {
            base += if gpu.numa_node == end.hca.numa_node { 0.1 } else { 0.35 };
        }
    }
    let bytes_per_us = ceiling(&Test { verb: Verb::Write, ..*test }, a, b);
    let mut typical = if size <= inline {
        base + s * 0.0007
    } else {
        let step = if size >= u64::from(test.mtu) { 0.5 } else { 0.0 };
        base + (0.95 + 0.1 * (s / 256.0).log2() + step).min(2.1) + s / bytes_per_us
    };
    if test.verb == Verb::Read {
        typical *= 1.85;
    }
    let mut u = || rng.unit_f64();
    let typical = typical * (1.0 + (u() - 0.5) * 0.02);
    let tail = 0.04 + 0.25 * (s / (s + 65536.0));
    let min = typical * (0.955 + 0.03 * u());
    let average = typical * (1.0 + 0.02 * tail * 10.0 * u());
    let stdev = typical * (0.02 + 0.03 * u()) * (1.0 + tail * 4.0);
    let max = (typical * (1.25 + 0.35 * u())).max(typical + 1.3 + 2.5 * u());
    let p99 = (typical * (1.03 + tail * (0.5 + u()))).min(max);
    let p999 = if u() < 0.7 { max } else { p99 + (max - p99) * u() };
    LatRow { min, max, typical, average: average.max(min), stdev, p99, p999 }
}
