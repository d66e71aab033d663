//! A training step's time on the cluster model: compute from the GPUs'
//! throughput and the model's FLOPs, the data-parallel gradient all-reduce
//! from the collective model, input from storage and the loader workers.
//!
//! Calibration (dgxc-benchmarking, Llama 3.1 BF16 on H100 with NeMo 24.09,
//! sequence 8192; step time as published, ours from this model):
//!
//! | model | GPUs | GBS | TP/PP | published | model |
//! |-------|------|-----|-------|-----------|-------|
//! | 8B    | 8    | 128 | 1/1   | 12.91 s   | 13.05 s |
//! | 8B    | 128  | 2048| 1/1   | 13.10 s   | 13.06 s |
//! | 70B   | 64   | 128 | 4/4   | 14.72 s   | 14.70 s |
//!
//! Context parallelism and the virtual pipeline are not modelled (they fold
//! into the efficiency); the test below pins the table.

use crate::model::gpu::{throttle, Gpu, GpuHealth};
use crate::model::workload::WorkloadSpec;
use crate::model::{Cluster, Node};

use super::collective::{Coll, Member, Plan};

/// What one step costs, in milliseconds, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// Forward and backward on the slowest GPU.
    pub compute_ms: f64,
    /// The gradient all-reduce's time, and the part of it backward does not hide.
    pub all_reduce_ms: f64,
    pub exposed_comm_ms: f64,
    /// Time the step waits for its batch.
    pub input_ms: f64,
    pub step_ms: f64,
    /// Model FLOPs per step (Megatron's count: attention included).
    pub flops: f64,
    pub gpus: u32,
    /// The share of its top SM clock the slowest GPU runs at.
    pub clock: f64,
}

/// Why the job cannot step: a GPU it runs on is gone or hung, a node is
/// down, or a rail it needs is down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    GpuLost {
        node: String,
        gpu: u32,
    },
    GpuHung {
        node: String,
        gpu: u32,
    },
    /// An uncorrectable ECC error (Xid 48) killed the rank's CUDA context.
    GpuEcc {
        node: String,
        gpu: u32,
    },
    NodeDown {
        node: String,
    },
    RailDown {
        node: String,
        hca: String,
    },
}

/// Fraction of peak a dense Llama-style model reaches at tensor and pipeline
/// parallelism 1 (Megatron-counted FLOPs), from the 8B row of the table.
const BASE_EFFICIENCY: f64 = 0.62;
/// Backward hides the gradient all-reduce up to this share of the compute.
const OVERLAP: f64 = 0.5;
/// Even when hidden, the last bucket's reduce is exposed.
const LAST_BUCKET: f64 = 0.1;
/// Tokens on storage are int32 (vocabularies past 65,536).
const BYTES_PER_TOKEN: f64 = 4.0;
/// CPU time a loader worker spends on one sample (read, collate, pin).
const SAMPLE_CPU_MS: f64 = 20.0;
/// The batch generator's floor when the batch is ready.
const INPUT_FLOOR_MS: f64 = 0.8;
/// Checkpoint bytes per parameter: BF16 weights and FP32 master weights and
/// Adam's two moments.
pub const CHECKPOINT_BYTES_PER_PARAM: f64 = 14.0;

/// Layers and hidden size of a Llama-style model of `params_b` billion
/// parameters: the published shapes for Llama 3 sizes, else a shape of
/// that size.
pub fn shape(params_b: f64) -> (u32, u32) {
    match params_b {
        p if (7.5..=8.5).contains(&p) => (32, 4096),
        p if (65.0..=75.0).contains(&p) => (80, 8192),
        p if (400.0..=410.0).contains(&p) => (126, 16384),
        p => {
            let layers: u32 = if p < 3.0 {
                16
            } else if p <= 10.0 {
                32
            } else if p <= 30.0 {
                40
            } else if p <= 100.0 {
                80
            } else {
                126
            };
            let hidden = (p * 1e9 / (12.0 * f64::from(layers))).sqrt();
            (layers, ((hidden / 128.0).round().max(1.0) * 128.0) as u32)
        }
    }
}

/// The model's parameter count as Megatron reports it: Llama 3's for its
/// sizes (8,030,261,248 for 8B), else the shape's with a 128,256-token
/// vocabulary.
pub fn parameter_count(params_b: f64) -> u64 {
    match params_b {
        p if (7.5..=8.5).contains(&p) => 8_030_261_248,
        p if (65.0..=75.0).contains(&p) => 70_553_706_496,
        p if (400.0..=410.0).contains(&p) => 405_853_388_800,
        p => {
            let (layers, hidden) = shape(p);
            let (l, h) = (u64::from(layers), u64::from(hidden));
            12 * l * h * h + 2 * 128_256 * h + (2 * l + 1) * h
        }
    }
}

/// Megatron's model FLOPs per token: 6 per parameter, and attention's
/// 12 x layers x hidden x sequence.
pub fn flops_per_token(params_b: f64, seq_len: u32) -> f64 {
    let (layers, hidden) = shape(params_b);
    6.0 * params_b * 1e9 + 12.0 * f64::from(layers) * f64::from(hidden) * f64::from(seq_len)
}

/// The GPUs a job's ranks use on `node`: the first `per_node` the driver sees.
fn job_gpus(node: &Node, per_node: u32) -> impl Iterator<Item = &Gpu> {
    node.gpus.iter().take(per_node as usize)
}

/// How much of its top clock a GPU computes at: a slowdown (thermal, power
/// brake) holds the SM clock down and the job's steps with it.
fn clock_share(gpu: &Gpu) -> f64 {
    let slowed = throttle::HW_SLOWDOWN | throttle::HW_THERMAL_SLOWDOWN | throttle::SW_THERMAL_SLOWDOWN | throttle::HW_POWER_BRAKE_SLOWDOWN;
    if gpu.throttle_reasons & slowed == 0 || gpu.max_sm_clock_mhz == 0 {
        1.0
    } else {
        (f64::from(gpu.sm_clock_mhz) / f64::from(gpu.max_sm_clock_mhz)).clamp(0.01, 1.0)
    }
}

/// Whether the job can step on this cluster, and what stops it first.
pub fn stop(cluster: &Cluster, spec: &WorkloadSpec) -> Option<Stop> {
    for name in &spec.nodes {
        // A node that is down, or rebooting, takes the job's ranks with it.
        let Some(node) = cluster.node(name).filter(|node| node.up(cluster.now)) else {
            return Some(Stop::NodeDown { node: name.clone() });
        };
        for gpu in job_gpus(node, spec.gpus_per_node) {
            match gpu.health {
                GpuHealth::FallenOffBus => return Some(Stop::GpuLost { node: name.clone(), gpu: gpu.index }),
                GpuHealth::Unresponsive => return Some(Stop::GpuHung { node: name.clone(), gpu: gpu.index }),
                GpuHealth::Healthy if gpu.needs_reset && gpu.ecc.volatile_uncorrected > 0 => return Some(Stop::GpuEcc { node: name.clone(), gpu: gpu.index }),
                GpuHealth::Healthy => {}
            }
        }
        if spec.nodes.len() > 1 {
            if let Some(hca) = node.hcas.iter().find(|hca| !hca.port.is_up()) {
                return Some(Stop::RailDown { node: name.clone(), hca: hca.name.clone() });
            }
        }
    }
    None
}

/// One step of `spec` on the cluster as it is, or what stops it.
pub fn pace(cluster: &Cluster, spec: &WorkloadSpec, storage_gb_per_s: f64) -> Result<Pace, Stop> {
    if let Some(stop) = stop(cluster, spec) {
        return Err(stop);
    }
    let nodes: Vec<&Node> = spec.nodes.iter().filter_map(|name| cluster.node(name)).collect();
    let gpus = spec.gpus_per_node * nodes.len() as u32;
    let model_parallel = spec.model_parallel();
    let data = (gpus / model_parallel.max(1)).max(1);
    let tokens = f64::from(spec.global_batch) * f64::from(spec.seq_len);
    let flops = tokens * flops_per_token(spec.params_b, spec.seq_len);
    let microbatches = f64::from((spec.global_batch / data).max(1));
    let bubble = f64::from(spec.pipeline.saturating_sub(1)) / microbatches;
    let tensor_cost = 1.0 - 0.015 * f64::from(spec.tensor.max(1)).log2();
    let efficiency = BASE_EFFICIENCY * tensor_cost / (1.0 + bubble);
    // A synchronous step waits for its slowest GPU.
    let clock = nodes.iter().flat_map(|node| job_gpus(node, spec.gpus_per_node)).map(clock_share).fold(1.0, f64::min);
    let peak = cluster.preset.gpu.bf16_dense_tflops * 1e12;
    let compute_ms = flops / (f64::from(gpus) * peak * efficiency * clock) * 1e3;
    // Each data-parallel rank reduces its shard's BF16 gradients.
    let gradient_bytes = spec.gradient_bytes() as u64;
    let all_reduce_ms = if data > 1 {
        let members: Vec<Member> = nodes.iter().map(|node| Member { node, ranks: spec.gpus_per_node }).collect();
        Plan::new(cluster, &members, Coll::AllReduce, &|_| None).map_or(0.0, |plan| plan.time_us(gradient_bytes) / 1e3)
    } else {
        0.0
    };
    let exposed_comm_ms = (all_reduce_ms * LAST_BUCKET).max(all_reduce_ms - compute_ms * OVERLAP);
    // Each node reads its share of the batch while the step before computes.
    let node_count = nodes.len().max(1) as f64;
    let read_ms = tokens * BYTES_PER_TOKEN / node_count / (storage_gb_per_s.max(0.01) * 1e9) * 1e3;
    let samples = f64::from(spec.global_batch) / node_count;
    let prepare_ms = samples * SAMPLE_CPU_MS / f64::from(spec.loader_workers.max(1));
    let input_ms = INPUT_FLOOR_MS + (read_ms + prepare_ms - compute_ms).max(0.0);
    let step_ms = compute_ms + exposed_comm_ms + input_ms;
    Ok(Pace { compute_ms, all_reduce_ms, exposed_comm_ms, input_ms, step_ms, flops, gpus, clock })
}

impl Pace {
    /// Throughput per GPU as Megatron prints it (TFLOP/s/GPU).
    pub fn tflops_per_gpu(&self) -> f64 {
        self.flops / (self.step_ms / 1e3) / f64::from(self.gpus.max(1)) / 1e12
    }
}

/// Seconds to write (or read) a checkpoint of `params_b` billion parameters
/// from `nodes` nodes, each at `gb_per_s`: the shards go in parallel, after
/// a few seconds of metadata and synchronisation.
pub fn checkpoint_seconds(params_b: f64, nodes: usize, gb_per_s: f64) -> f64 {
    let bytes = params_b * 1e9 * CHECKPOINT_BYTES_PER_PARAM;
    4.0 + bytes / (nodes.max(1) as f64 * gb_per_s.max(0.01) * 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::WorkloadSpec;
    use crate::model::{preset, ClusterConfig};

    fn hosts(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("gpu-{i:03}")).collect()
    }

    fn step_s(params_b: f64, nodes: usize, global_batch: u32, tensor: u32, pipeline: u32) -> f64 {
        let config = ClusterConfig::new(preset::find("hgx-h100").unwrap(), hosts(nodes));
        let cluster = Cluster::build(&config, 1);
        let spec = WorkloadSpec { nodes: hosts(nodes), global_batch, seq_len: 8192, tensor, pipeline, loader_workers: 8, ..WorkloadSpec::example(params_b) };
        pace(&cluster, &spec, 10.0).unwrap().step_ms / 1e3
    }

    #[test]
    fn step_times_match_the_published_h100_runs_within_fifteen_percent() {
        for (got, published) in [(step_s(8.03, 1, 128, 1, 1), 12.91), (step_s(8.03, 16, 2048, 1, 1), 13.10), (step_s(70.6, 8, 128, 4, 4), 14.72)] {
            assert!((got / published - 1.0).abs() < 0.15, "{got} s against {published} s");
            assert!((got / published - 1.0).abs() < 0.03, "calibration drifted: {got} s against {published} s");
        }
    }

    #[test]
    fn shapes_and_flops_follow_llama() {
        assert_eq!(shape(8.0), (32, 4096));
        assert_eq!(shape(70.0), (80, 8192));
        let (layers, hidden) = shape(13.0);
        assert_eq!(layers, 40);
        assert!((4_500..6_000).contains(&hidden));
        assert!((flops_per_token(8.03, 8192) / 6.106e10 - 1.0).abs() < 0.01);
        assert!((checkpoint_seconds(8.0, 2, 2.0) - 32.0).abs() < 0.1);
    }
}
