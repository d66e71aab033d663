//! DCGM field values of a GPU at an instant, by field id (dcgm_fields.h):
//! what `dcgmi dmon` samples and `dcgm-exporter` publishes, read from the
//! one model so both agree with nvidia-smi.
//!
//! The profiling fields (1001-1005) follow the job on the GPU: while it
//! computes, the tensor cores are busy for the share of the step that is
//! compute; while it waits on the network or on a lost peer, the graphics
//! engine stays active (NCCL's kernels are resident: `GPUTL` and
//! nvidia-smi's utilization stay near 100%) but SMs and tensor cores idle.
//! That split is this model's, not a capture's.

use crate::model::{Cluster, Gpu, GpuHealth};
use crate::rng::Rng;

/// A field's value as DCGM types it; `Blank` is what DCGM returns for a
/// GPU it cannot read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValue {
    Int(i64),
    Double(f64),
    Blank,
}

/// What the GPU's job does with it: (computing share, waiting on a lost
/// peer), or None when no job holds it.
fn activity(cluster: &Cluster, host: &str, gpu: &Gpu) -> Option<(f64, bool)> {
    let workload = cluster.workload_on(host, gpu.index)?;
    match workload.segments.last() {
        // A server's steps compute only part of the time; decode waits on memory.
        Some((_, Ok(pace))) => Some((pace.serving.map_or(pace.compute_ms / pace.step_ms.max(1e-9), |serving| serving.compute_share), false)),
        _ => Some((0.0, true)),
    }
}

/// Whether the job that holds the GPU is a server, whose decode keeps its
/// memory busy whatever its compute.
fn serving(cluster: &Cluster, host: &str, gpu: &Gpu) -> bool {
    cluster.workload_on(host, gpu.index).is_some_and(|workload| workload.spec.load.is_some())
}

/// Bytes per second the GPU's job moves: through its rail's HCA over PCIe
/// (`pcie`), or through NVLink to the node's other GPUs; None while no job
/// moves data on it.
fn traffic(cluster: &Cluster, host: &str, gpu: &Gpu, pcie: bool) -> Option<f64> {
    let workload = cluster.workload_on(host, gpu.index)?;
    let Some((_, Ok(pace))) = workload.segments.last() else { return None };
    let spec = &workload.spec;
    let per_step = if let Some(serving) = pace.serving {
        // A server's tensor-parallel all-reduces: twice a layer, its running
        // requests' activations (BF16), over NVLink only.
        let (layers, hidden) = crate::model::workload::pace::shape(spec.params_b);
        let tensor = f64::from(spec.tensor.max(1));
        if pcie || spec.tensor < 2 {
            return None;
        }
        2.0 * f64::from(layers) * 2.0 * f64::from(hidden) * 2.0 * serving.running.max(1.0) * (tensor - 1.0) / tensor
    } else if pcie {
        // The node's rail traffic over its GPUs' rails.
        spec.rail_bytes_per_step(cluster.node(host).map_or(1, |node| node.hcas.len()))
    } else {
        2.0 * spec.gradient_bytes() * f64::from(spec.gpus_per_node.saturating_sub(1)) / f64::from(spec.gpus_per_node.max(1))
    };
    Some(per_step / (pace.step_ms / 1e3))
}

/// Field `id` of `gpu` on `host` now; `rng` gives each sample its noise.
pub fn value(cluster: &Cluster, host: &str, gpu: &Gpu, id: u32, rng: &mut Rng) -> FieldValue {
    use FieldValue::{Blank, Double, Int};
    // The driver still reports the Xid of a GPU it cannot read.
    if gpu.health == GpuHealth::Unresponsive && id != 230 {
        return Blank;
    }
    let jitter = |rng: &mut Rng, spread: f64| 1.0 + (rng.unit_f64() - 0.5) * spread;
    let fraction = |busy: f64, rng: &mut Rng| Double((busy * jitter(rng, 0.04)).clamp(0.0, 1.0));
    let reserved = cluster.preset.gpu.fb_reserved_mib;
    let rate = |pcie: bool, unit: f64, rng: &mut Rng| Int(traffic(cluster, host, gpu, pcie).map_or(0.0, |bytes| bytes * jitter(rng, 0.02) / unit) as i64);
    match id {
        100 => Int(gpu.sm_clock_mhz.into()),
        101 => Int(gpu.mem_clock_mhz.into()),
        140 => Int(gpu.memory_temperature_c.into()),
        150 => Int(gpu.temperature_c.into()),
        155 => Double(f64::from(gpu.power_draw_w) * jitter(rng, 0.01)),
        // Millijoules since the driver loaded.
        156 => Int(cluster.node(host).map_or(0.0, |node| cluster.gpu_energy_joules(node, gpu.index) * 1000.0) as i64),
        // NVML's PCIe throughput in KB/s (DCGM before 3.3.5's exporter).
        200 | 201 => rate(true, 1e3, rng),
        // The driver counts no replays on a link that trained: nvidia-smi -q agrees.
        202 => Int(0),
        203 => Int(gpu.utilization_pct.into()),
        204 => Int(gpu.memory_utilization_pct.into()),
        206 | 207 => Int(0),
        230 => Int(gpu.xids.last().copied().unwrap_or(0).into()),
        251 => Int(gpu.memory_total_mib.saturating_sub(reserved).saturating_sub(gpu.memory_used_mib) as i64),
        252 => Int(gpu.memory_used_mib as i64),
        393 => Int(gpu.row_remap.uncorrectable.into()),
        394 => Int(gpu.row_remap.correctable.into()),
        395 => Int(gpu.row_remap.failure.into()),
        // Both directions of every link, in MB/s.
        449 => rate(false, 0.5e6, rng),
        // A bare-metal GPU has no vGPU licence to report.
        526 => Int(0),
        // The profiling fields follow the job that holds the GPU, looked up
        // only for them (the exporter reads every field of every GPU).
        1001..=1005 => {
            let job = activity(cluster, host, gpu);
            let (busy, share) = (job.is_some(), job.map_or(0.0, |(share, _)| share));
            let on = |value: f64| if busy { value } else { 0.0 };
            match id {
                1001 => fraction(on(0.985), rng),
                // Memory-bound kernels still keep the SMs occupied.
                1002 if serving(cluster, host, gpu) => fraction(on(0.72 + 0.2 * share), rng),
                1002 => fraction(on(0.9 * share + 0.06), rng),
                1003 => fraction(on(0.42 * share + 0.03), rng),
                1004 => fraction(0.68 * share, rng),
                _ if serving(cluster, host, gpu) => fraction(on(0.55 + 0.3 * (1.0 - share)), rng),
                _ => fraction(0.34 * share + on(0.02), rng),
            }
        }
        1009..=1012 => rate(id <= 1010, 1.0, rng),
        _ => Blank,
    }
}
