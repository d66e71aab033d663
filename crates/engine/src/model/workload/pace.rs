//! What the model knows of a training job's steps: a model's shape and
//! checkpoint, what one step costs ([`Pace`], computed by the performance
//! model above this layer and handed in as a [`Pacer`]), and what stops
//! the job ([`stop`]), which is read off the model alone.

use super::WorkloadSpec;
use crate::model::gpu::{Gpu, GpuHealth};
use crate::model::{Cluster, Node};

/// The performance model's step time for a job on the cluster as it is,
/// or what stops it. The model records it as faults and changes alter the
/// cluster; the lab supplies `perf::workload_pace`, so the model does not
/// name the layer above it.
pub type Pacer = fn(&Cluster, &WorkloadSpec, f64) -> Result<Pace, Stop>;

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
    /// A serving job's steady state (its engine step is `step_ms`).
    pub serving: Option<Serving>,
}

/// An inference server's steady state under its load, as the performance
/// model finds it for the cluster as it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serving {
    /// One prompt's prefill, ms.
    pub prefill_ms: f64,
    /// Requests running at once, on average, and its step then (ms), while
    /// it keeps up (its full batch's when it cannot).
    pub running: f64,
    pub steady_step_ms: f64,
    /// The most requests a second it can finish: its full batch's rate.
    pub capacity_rps: f64,
    /// The full batch (`--max-num-seqs`, or what the KV cache holds) and its step, ms.
    pub saturated_running: f64,
    pub saturated_step_ms: f64,
    /// Tokens its KV cache holds.
    pub kv_tokens: u64,
    /// The share of each step the GPUs compute (the rest waits on memory).
    pub compute_share: f64,
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
    /// The node's CUDA library is a newer driver's than its loaded module:
    /// every rank there fails its first CUDA call. Ranks already running
    /// keep the libraries they loaded.
    DriverMismatch {
        node: String,
    },
    RailDown {
        node: String,
        hca: String,
    },
    /// A rank needs more memory than its GPU has: PyTorch's allocator
    /// fails every rank in the first step.
    OutOfMemory {
        node: String,
        gpu: u32,
    },
    /// Megatron's argument checks refuse the job's parallelism before any
    /// GPU work (`message` is the assertion's); or vLLM's refuse the
    /// server's configuration.
    Arguments {
        message: String,
    },
    /// A server loaded its model, but what is left for the KV cache does
    /// not hold one request of the longest length it must serve: vLLM
    /// refuses to start (`message` is its error).
    CacheMemory {
        message: String,
    },
}

impl Pace {
    /// Throughput per GPU as Megatron prints it (TFLOP/s/GPU).
    pub fn tflops_per_gpu(&self) -> f64 {
        self.flops / (self.step_ms / 1e3) / f64::from(self.gpus.max(1)) / 1e12
    }
}

/// What a server's GPU draws (W): idle, and while some request runs (a
/// share `1 - e^-running` of the time, arrivals being Poisson) more as its
/// steps compute rather than wait on memory.
pub fn serving_watts(idle_w: f64, serving: &Serving) -> f64 {
    idle_w + serving_busy(serving) * (230.0 + 380.0 * serving.compute_share)
}

/// The share of the time some request runs on a server.
pub fn serving_busy(serving: &Serving) -> f64 {
    1.0 - (-serving.running).exp()
}

/// Checkpoint bytes per parameter: BF16 weights and FP32 master weights and
/// Adam's two moments.
pub const CHECKPOINT_BYTES_PER_PARAM: f64 = 14.0;

/// The Llama 3 release a model of `params_b` billion parameters is (8,
/// 70 or 405 billion), if one.
pub fn llama3_size(params_b: f64) -> Option<u32> {
    match params_b {
        p if (7.5..=8.5).contains(&p) => Some(8),
        p if (65.0..=75.0).contains(&p) => Some(70),
        p if (400.0..=410.0).contains(&p) => Some(405),
        _ => None,
    }
}

/// Layers and hidden size of a Llama-style model of `params_b` billion
/// parameters: the published shapes for Llama 3 sizes, else a shape of
/// that size.
pub fn shape(params_b: f64) -> (u32, u32) {
    match (llama3_size(params_b), params_b) {
        (Some(8), _) => (32, 4096),
        (Some(70), _) => (80, 8192),
        (Some(_), _) => (126, 16384),
        (None, p) => {
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
    match llama3_size(params_b) {
        Some(8) => 8_030_261_248,
        Some(70) => 70_553_706_496,
        Some(_) => 405_853_388_800,
        None => {
            let (layers, hidden) = shape(params_b);
            let (l, h) = (u64::from(layers), u64::from(hidden));
            12 * l * h * h + 2 * 128_256 * h + (2 * l + 1) * h
        }
    }
}

/// Seconds to write (or read) a checkpoint of `params_b` billion parameters
/// from `nodes` nodes, each at `gb_per_s`: the shards go in parallel, after
/// a few seconds of metadata and synchronisation.
pub fn checkpoint_seconds(params_b: f64, nodes: usize, gb_per_s: f64) -> f64 {
    let bytes = params_b * 1e9 * CHECKPOINT_BYTES_PER_PARAM;
    4.0 + bytes / (nodes.max(1) as f64 * gb_per_s.max(0.01) * 1e9)
}

/// The GPUs a job's ranks use on `node`: the first `per_node` the driver sees.
pub fn job_gpus(node: &Node, per_node: u32) -> impl Iterator<Item = &Gpu> {
    node.gpus.iter().take(per_node as usize)
}

/// Whether the job can step on this cluster, and what stops it first.
pub fn stop(cluster: &Cluster, spec: &WorkloadSpec) -> Option<Stop> {
    for name in &spec.nodes {
        // A node that is down, or rebooting, takes the job's ranks with it.
        let Some(node) = cluster.node(name).filter(|node| node.up(cluster.now)) else {
            return Some(Stop::NodeDown { node: name.clone() });
        };
        if node.driver_mismatch() {
            return Some(Stop::DriverMismatch { node: name.clone() });
        }
        for gpu in job_gpus(node, spec.gpus_used()) {
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
    let refused = if spec.load.is_some() { refused_serving(spec) } else { refused_arguments(spec) };
    if let Some(message) = refused {
        return Some(Stop::Arguments { message });
    }
    let first = spec.nodes.first().and_then(|name| cluster.node(name)).and_then(|node| job_gpus(node, spec.gpus_per_node).next().map(|gpu| (node, gpu)));
    if let Some((node, gpu)) = first {
        let usable = usable_memory_mib(cluster, gpu);
        if spec.load.is_some() {
            let memory = serving_memory(spec, usable);
            if memory.weights_gib + memory.non_torch_gib > memory.total_gib {
                return Some(Stop::OutOfMemory { node: node.hostname.clone(), gpu: gpu.index });
            }
            let share = spec.load.map_or(GPU_MEMORY_UTILIZATION, |load| load.memory_share());
            return memory.refusal(spec.seq_len, share).map(|message| Stop::CacheMemory { message });
        }
        if spec.rank_memory_mib() > usable {
            return Some(Stop::OutOfMemory { node: node.hostname.clone(), gpu: gpu.index });
        }
    }
    None
}

/// Llama 3's grouped-query attention at every size: 8 key-value heads of
/// 128 dimensions, and a query head per 128 dimensions of the hidden size.
pub const KV_HEADS: u32 = 8;
pub const HEAD_DIM: u32 = 128;

/// vLLM's `--gpu-memory-utilization` as the labs' scripts set it: the share
/// of each GPU's memory the server may take, weights, activations and KV
/// cache together.
pub const GPU_MEMORY_UTILIZATION: f64 = 0.9;
/// vLLM's `--max-num-batched-tokens` for the OpenAI server on a
/// data-centre GPU: the tokens one engine step takes (chunked prefill),
/// and the batch its start-up profile runs.
pub const MAX_NUM_BATCHED_TOKENS: u32 = 8192;
/// Tokens in one KV cache block (`--block-size`).
pub const BLOCK_TOKENS: u64 = 16;

const GIB: f64 = 1_073_741_824.0;

/// A server's memory on each of its GPUs, as vLLM's start-up profile
/// finds it (GiB): the share it may take of what CUDA reports, its weights
/// (BF16, split over the tensor-parallel GPUs), the profile's activation
/// peak, memory outside PyTorch (CUDA context, NCCL), and the rest, for
/// the KV cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServingMemory {
    pub total_gib: f64,
    pub requested_gib: f64,
    pub weights_gib: f64,
    pub activation_gib: f64,
    pub non_torch_gib: f64,
    pub kv_cache_gib: f64,
    /// Bytes one token's keys and values take on one GPU (BF16).
    pub kv_bytes_per_token: f64,
    /// Tokens the KV cache holds, in whole blocks.
    pub kv_tokens: u64,
}

/// `spec`'s memory on a GPU where CUDA reports `usable_mib`.
pub fn serving_memory(spec: &WorkloadSpec, usable_mib: u64) -> ServingMemory {
    let tensor = f64::from(spec.tensor.max(1));
    let (layers, hidden) = shape(spec.params_b);
    let total_gib = usable_mib as f64 / 1024.0;
    let requested_gib = total_gib * spec.load.map_or(GPU_MEMORY_UTILIZATION, |load| load.memory_share());
    let weights_gib = parameter_count(spec.params_b) as f64 * 2.0 / tensor / GIB;
    // The profile runs one step of the most tokens a step takes: the
    // residual stream and attention (24 bytes a token per hidden unit),
    // the feed-forward's 3.5 h intermediate (4 bytes each), and the
    // sampler's FP32 logits for the most requests at once.
    let load = spec.load.map_or(256, |load| load.max_num_seqs);
    let batched = f64::from(MAX_NUM_BATCHED_TOKENS.max(spec.seq_len.min(MAX_NUM_BATCHED_TOKENS)));
    let activation_gib = (batched * (f64::from(hidden) * 24.0 + f64::from(hidden) * 3.5 * 4.0) / tensor + f64::from(load) * 128_256.0 * 4.0) / GIB;
    // The CUDA context; NCCL's buffers between tensor-parallel GPUs.
    let non_torch_gib = if spec.tensor > 1 { 1.1 } else { 0.45 };
    let kv_cache_gib = requested_gib - weights_gib - activation_gib - non_torch_gib;
    let kv_heads = f64::from(KV_HEADS) / tensor.min(f64::from(KV_HEADS));
    let kv_bytes_per_token = 2.0 * f64::from(layers) * kv_heads * f64::from(HEAD_DIM) * 2.0;
    let blocks = (kv_cache_gib.max(0.0) * GIB / (kv_bytes_per_token * BLOCK_TOKENS as f64)).floor() as u64;
    ServingMemory { total_gib, requested_gib, weights_gib, activation_gib, non_torch_gib, kv_cache_gib, kv_bytes_per_token, kv_tokens: blocks * BLOCK_TOKENS }
}

impl ServingMemory {
    /// vLLM's refusal to start when its KV cache cannot hold one request of
    /// `max_model_len` tokens (or none at all), if it refuses.
    /// (vLLM 0.34's text, `v1/core/kv_cache_planning.py`, with its hint for
    /// a `gpu_memory_utilization` below 1 and sizes as `format_gib` writes them.)
    pub fn refusal(&self, max_model_len: u32, share: f64) -> Option<String> {
        let hint = format!(
            "The KV cache gets what is left after the model and its activations within `gpu_memory_utilization`={share}; increase it (with the extensible KV cache it defaults to 1.0) or decrease `max_model_len` or `max_num_seqs`."
        );
        let see = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
        if self.kv_cache_gib <= 0.0 {
            return Some(format!("No available memory for the cache blocks. {hint} {see}"));
        }
        let needed_gib = f64::from(max_model_len) * self.kv_bytes_per_token / GIB;
        (self.kv_tokens < u64::from(max_model_len)).then(|| {
            format!(
                "To serve at least one request with the model's max seq len ({max_model_len}), ({} GiB KV cache is needed, which is larger than the available KV cache memory ({} GiB). Based on the available memory, the estimated maximum model length is {}. {hint} Decreasing `max_model_len` also reduces what is needed. {see}",
                python_round(needed_gib),
                python_round(self.kv_cache_gib),
                self.kv_tokens
            )
        })
    }
}

/// Python's `str(round(x, 2))`: `15.0`, `14.96`, as vLLM prints sizes.
pub fn python_round(value: f64) -> String {
    let rounded = (value * 100.0).round() / 100.0;
    let text = format!("{rounded:.2}");
    match text.strip_suffix('0') {
        Some(short) if !short.ends_with('.') => short.to_string(),
        _ => text,
    }
}

/// vLLM's check of a server's parallelism: tensor parallelism must
/// divide the model's attention heads.
fn refused_serving(spec: &WorkloadSpec) -> Option<String> {
    let heads = shape(spec.params_b).1 / HEAD_DIM;
    if heads % spec.tensor.max(1) != 0 {
        return Some(format!("Total number of attention heads ({heads}) must be divisible by tensor parallel size ({}).", spec.tensor));
    }
    // Slurm's cgroup shows the server only the GPUs the job asked for.
    (spec.tensor > spec.gpus_per_node).then(|| {
        format!(
            "World size ({}) is larger than the number of available GPUs ({}) in this node. If this is intentional and you are using:\n- ray, set '--distributed-executor-backend ray'.\n- multiprocessing, set '--nnodes' appropriately.",
            spec.tensor, spec.gpus_per_node
        )
    })
}

/// What CUDA lets a process allocate on `gpu` (MiB): the board's memory
/// less what the driver reserves (PyTorch reports 79.11 GiB on an H100 80GB).
pub fn usable_memory_mib(cluster: &Cluster, gpu: &Gpu) -> u64 {
    gpu.memory_total_mib.saturating_sub(cluster.preset.gpu.fb_reserved_mib + 100)
}

/// Megatron-LM's `validate_args` assertion that refuses `spec`'s
/// parallelism, if one does.
fn refused_arguments(spec: &WorkloadSpec) -> Option<String> {
    let (world, model) = (spec.world(), spec.model_parallel());
    if world % model != 0 {
        return Some(format!("world size ({world}) is not divisible by total_model_size (total_model_size={model})"));
    }
    let data = world / model;
    (spec.global_batch % data != 0)
        .then(|| format!("global batch size ({}) is not divisible by micro batch size (1) times data parallel size ({data})", spec.global_batch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_checkpoints_follow_llama() {
        assert_eq!(shape(8.0), (32, 4096));
        assert_eq!(shape(70.0), (80, 8192));
        let (layers, hidden) = shape(13.0);
        assert_eq!(layers, 40);
        assert!((4_500..6_000).contains(&hidden));
        assert!((checkpoint_seconds(8.0, 2, 2.0) - 32.0).abs() < 0.1);
    }
}
