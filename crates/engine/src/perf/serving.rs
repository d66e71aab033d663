//! An inference server's engine step under its request load, on the
//! cluster as it is (vLLM's V1 engine: continuous batching, chunked
//! prefill, tensor parallelism within a node).
//!
//! - A decode step reads every weight of the GPU's shard once and each
//!   running request's keys and values: `bytes / (HBM x ETA_HBM)`. Its
//!   compute, `2 x params / TP` FLOPs a request, matters only at large
//!   batches. The L2 and the SMs run on the core clock: a GPU held below
//!   `FULL_BANDWIDTH_CLOCK` of its top clock cannot keep its HBM busy, so
//!   a slowed GPU slows decode too, less than in step with its clock.
//! - Prefill is compute bound: `2 x params / TP` FLOPs a prompt token at
//!   `ETA_PREFILL` of the dense BF16 peak. Chunked prefill shares each step
//!   with decode: at `lambda` requests a second, a step carries
//!   `lambda x prompt x step` prompt tokens.
//! - With tensor parallelism each layer all-reduces its activations twice,
//!   at the collective model's time for the node's GPUs (a lost NVLink
//!   shows here).
//! - By Little's law a request runs `output` steps, so `running = lambda x
//!   output x step(running)`: the fixed point of a step time linear in the
//!   batch. Past `max_num_seqs`, or what the KV cache holds, or when no
//!   fixed point exists, the server is saturated: it finishes what its
//!   full batch allows and the rest of the requests queue.
//!
//! Calibration (BF16 on H100 SXM; the tests pin it):
//!
//! | model | TP | prompt/output | load | published | model |
//! |-------|----|---------------|------|-----------|-------|
//! | Llama 3.1 8B | 1 | short | one request | 6.44 ms between tokens (a) | 6.55 ms |
//! | Llama 3.3 70B | 4 | 1024/512 | 2 req/s | about 20 ms (b) | 20.4 ms |
//! | Llama 3.3 70B | 4 | 1024/512 | all at once | about 3,100 tokens/s (b) | 3,445 |
//!
//! (a) vLLM blog, "FP8 KV cache" (2026-04-22): the median inter-token
//! latency's fit at one request, 6.44 ms + 4.37e-5 ms a prompt token, BF16
//! cache. (b) vLLM blog, "TurboQuant" (2026-05-11), figures 1 and 12, read
//! off the chart (vLLM 0.20.2, BF16 baseline).

use crate::model::workload::pace::{job_gpus, parameter_count, serving_memory, serving_watts, shape, stop, usable_memory_mib, ServingMemory};
use crate::model::workload::pace::{Pace, Serving, Stop};
use crate::model::workload::{Load, WorkloadSpec};
use crate::model::{Cluster, Node};

use super::collective::{Coll, Member, Plan};

/// The share of HBM bandwidth a decode step's reads reach.
const ETA_HBM: f64 = 0.8;
/// Below this share of its top clock, a GPU's L2 and SMs cannot keep HBM busy.
const FULL_BANDWIDTH_CLOCK: f64 = 0.6;
/// The share of the dense BF16 peak prefill and batched decode compute reach.
const ETA_PREFILL: f64 = 0.55;
const ETA_DECODE_COMPUTE: f64 = 0.45;
/// The share of the KV cache a saturated server keeps in use.
const KV_HIGH_WATER: f64 = 0.98;
/// The engine's own time each step (scheduling, sampling, launching the
/// captured CUDA graph), ms.
const STEP_OVERHEAD_MS: f64 = 0.55;

/// The server's step under its load on the cluster as it is, or what stops it.
pub fn pace(cluster: &Cluster, spec: &WorkloadSpec) -> Result<Pace, Stop> {
    match stop(cluster, spec) {
        Some(stop) => Err(stop),
        None => Ok(operating_point(cluster, spec)),
    }
}

/// What one engine step costs with `batch` requests running, ms, and the
/// share of it the GPUs compute rather than wait on memory.
struct StepCost {
    /// Fixed part (weights, overhead, all-reduces) and per-request part.
    fixed_ms: f64,
    per_request_ms: f64,
    /// Compute a request adds to a step (ms), for the power the GPUs draw.
    compute_per_request_ms: f64,
    /// Time one prompt token of prefill takes, ms.
    prefill_token_ms: f64,
}

impl StepCost {
    fn at(&self, batch: f64) -> f64 {
        self.fixed_ms + self.per_request_ms * batch
    }
}

/// A server's load, or none.
fn load_of(spec: &WorkloadSpec) -> Load {
    spec.load.unwrap_or(Load { requests_per_s: 0.0, prompt_tokens: 1, output_tokens: 1, max_num_seqs: 1, memory_permille: 900 })
}

fn step_cost(cluster: &Cluster, spec: &WorkloadSpec, node: Option<&Node>, memory: &ServingMemory, clock: f64) -> StepCost {
    let gpu = &cluster.preset.gpu;
    let tensor = f64::from(spec.tensor.max(1));
    let load = load_of(spec);
    let bandwidth = gpu.hbm_gbytes_per_sec * 1e9 * ETA_HBM * (clock / FULL_BANDWIDTH_CLOCK).min(1.0);
    let weight_bytes = parameter_count(spec.params_b) as f64 * 2.0 / tensor;
    // A running request's context is, on average, its prompt and half its output.
    let context = f64::from(load.prompt_tokens) + f64::from(load.output_tokens) / 2.0;
    let flops_per_token = 2.0 * parameter_count(spec.params_b) as f64 / tensor;
    let peak = gpu.bf16_dense_tflops * 1e12 * clock;
    let compute_per_request_ms = flops_per_token / (peak * ETA_DECODE_COMPUTE) * 1e3;
    let kv_per_request_ms = context * memory.kv_bytes_per_token / bandwidth * 1e3;
    let (layers, hidden) = shape(spec.params_b);
    let all_reduce_ms = match node.filter(|_| spec.tensor > 1) {
        Some(node) => {
            let members = [Member { node, ranks: spec.tensor }];
            let per_layer = Plan::new(cluster, &members, Coll::AllReduce, &|_| None).map_or(0.0, |plan| plan.time_us(u64::from(hidden) * 2) / 1e3);
            2.0 * f64::from(layers) * per_layer
        }
        None => 0.0,
    };
    StepCost {
        fixed_ms: weight_bytes / bandwidth * 1e3 + STEP_OVERHEAD_MS / clock + all_reduce_ms,
        per_request_ms: kv_per_request_ms + compute_per_request_ms,
        compute_per_request_ms,
        prefill_token_ms: flops_per_token / (peak * ETA_PREFILL) * 1e3,
    }
}

/// The server's steady state under its load with its GPUs at `clock`.
fn steady_state(cluster: &Cluster, spec: &WorkloadSpec, node: Option<&Node>, memory: &ServingMemory, clock: f64) -> Serving {
    let cost = step_cost(cluster, spec, node, memory, clock);
    let load = load_of(spec);
    let (lambda, prompt, output) = (load.requests_per_s, f64::from(load.prompt_tokens), f64::from(load.output_tokens));
    // The most requests at once: the limit, and what the KV cache holds.
    // vLLM admits a request while blocks are free and preempts the newest
    // when they run out: the cache stays nearly full, each request holding
    // its prompt and, on average, half its output.
    let context = prompt + output / 2.0;
    let kv_limit = (memory.kv_tokens as f64 * KV_HIGH_WATER / context).floor().max(1.0);
    let full = f64::from(load.max_num_seqs).min(kv_limit);
    // Saturated, the full batch runs: it finishes full / (output x step)
    // requests a second, and each step also prefills their prompts, so
    // step = cost(full) + full x prompt x prefill / output.
    let saturated_step_ms = cost.at(full) + full * prompt * cost.prefill_token_ms / output;
    let capacity_rps = full / (output * saturated_step_ms / 1e3);
    // Keeping up, prefill takes its share of each second (the prompts
    // that arrive), and running = lambda x output x step(running): the
    // fixed point of a step linear in the batch. It reaches the full
    // batch exactly at capacity.
    let prefill_share = (lambda * prompt * cost.prefill_token_ms / 1e3).min(0.95);
    let denominator = (1.0 - prefill_share) - lambda * output * cost.per_request_ms / 1e3;
    let (running, steady_step_ms) = if lambda < capacity_rps && denominator > 0.0 {
        let running = (lambda * output * cost.fixed_ms / 1e3 / denominator).min(full);
        (running, cost.at(running) / (1.0 - prefill_share))
    } else {
        (full, saturated_step_ms)
    };
    let finished = lambda.min(capacity_rps);
    let prefill_time = finished * prompt * cost.prefill_token_ms / 1e3;
    let compute_share = ((cost.compute_per_request_ms * running / steady_step_ms) + prefill_time).clamp(0.0, 1.0);
    Serving {
        prefill_ms: prompt * cost.prefill_token_ms,
        running,
        steady_step_ms,
        capacity_rps,
        saturated_running: full,
        saturated_step_ms,
        kv_tokens: memory.kv_tokens,
        compute_share,
    }
}

/// The server's steady state under its load. Its step waits for its
/// slowest GPU: one a slowdown holds down, or one whose power limit is
/// below what the server would draw (then its clock drops until it fits).
fn operating_point(cluster: &Cluster, spec: &WorkloadSpec) -> Pace {
    let node = spec.nodes.first().and_then(|name| cluster.node(name));
    let usable = node.and_then(|node| node.gpus.first()).map_or(cluster.preset.gpu.memory_total_mib, |g| usable_memory_mib(cluster, g));
    let memory = serving_memory(spec, usable);
    let gpus: Vec<&crate::model::gpu::Gpu> = node.map(|node| job_gpus(node, spec.gpus_used()).collect()).unwrap_or_default();
    let held = gpus.iter().map(|gpu| super::training::held_clock_share(gpu)).fold(1.0, f64::min);
    let mut serving = steady_state(cluster, spec, node, &memory, held);
    let idle_w = f64::from(cluster.preset.gpu.idle_power_w.0 + cluster.preset.gpu.idle_power_w.1) / 2.0;
    let watts = serving_watts(idle_w, &serving) * held.max(0.4);
    let capped = gpus
        .iter()
        .map(|gpu| if watts > f64::from(gpu.power_limit_w) { ((f64::from(gpu.power_limit_w) - idle_w) / (watts - idle_w)).clamp(0.05, 1.0) } else { 1.0 })
        .fold(1.0, f64::min);
    let clock = held * capped;
    if capped < 1.0 {
        serving = steady_state(cluster, spec, node, &memory, clock);
    }
    // The step it runs at: the steady one, which is the full batch's once
    // the load reaches its capacity.
    let step_ms = serving.steady_step_ms;
    Pace {
        compute_ms: step_ms,
        all_reduce_ms: 0.0,
        exposed_comm_ms: 0.0,
        input_ms: 0.0,
        step_ms,
        flops: 0.0,
        gpus: spec.gpus_used(),
        clock,
        serving: Some(serving),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::{Kind, Load};
    use crate::model::{preset, ClusterConfig};

    fn server(params_b: f64, tensor: u32, requests_per_s: f64) -> (Cluster, WorkloadSpec) {
        let config = ClusterConfig::new(preset::find("hgx-h100").unwrap(), vec!["gpu-001".into()]);
        let cluster = Cluster::build(&config, 1);
        let load = Load { requests_per_s, prompt_tokens: 1000, output_tokens: 1000, max_num_seqs: 256, memory_permille: 900 };
        let spec = WorkloadSpec { kind: Kind::Serving, tensor, gpus_per_node: tensor, seq_len: 8192, load: Some(load), ..WorkloadSpec::example(params_b) };
        (cluster, spec)
    }

    #[test]
    fn one_request_at_a_time_decodes_at_the_published_pace() {
        let (cluster, spec) = server(8.03, 1, 0.01);
        let pace = pace(&cluster, &spec).unwrap();
        assert!((pace.step_ms / 6.44 - 1.0).abs() < 0.05, "{} ms between tokens", pace.step_ms);
    }

    #[test]
    fn seventy_b_over_four_gpus_matches_the_published_runs() {
        let (cluster, mut spec) = server(70.6, 4, 2.0);
        spec.load = Some(Load { requests_per_s: 2.0, prompt_tokens: 1024, output_tokens: 512, max_num_seqs: 256, memory_permille: 900 });
        let step = pace(&cluster, &spec).unwrap().step_ms;
        assert!((step / 20.0 - 1.0).abs() < 0.15, "{step} ms between tokens at 2 requests a second");
        spec.load = Some(Load { requests_per_s: 1000.0, prompt_tokens: 1024, output_tokens: 512, max_num_seqs: 256, memory_permille: 900 });
        let serving = pace(&cluster, &spec).unwrap().serving.unwrap();
        let tokens_per_s = serving.capacity_rps * 512.0;
        assert!((tokens_per_s / 3_100.0 - 1.0).abs() < 0.15, "{tokens_per_s} tokens/s saturated");
    }

    #[test]
    fn load_raises_the_batch_and_the_step_until_the_server_saturates() {
        let steps: Vec<(f64, f64)> = [0.5, 2.0, 8.0]
            .iter()
            .map(|rate| {
                let (cluster, spec) = server(8.03, 1, *rate);
                let pace = pace(&cluster, &spec).unwrap();
                (pace.step_ms, pace.serving.unwrap().running)
            })
            .collect();
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "{steps:?}");
        let (cluster, spec) = server(8.03, 1, 500.0);
        let serving = pace(&cluster, &spec).unwrap().serving.unwrap();
        assert!(serving.capacity_rps < 500.0 && serving.running == serving.saturated_running, "{serving:?}");
    }

    #[test]
    fn seventy_b_needs_tensor_parallelism_and_decodes_slower() {
        let (cluster, spec) = server(70.6, 1, 1.0);
        assert!(matches!(pace(&cluster, &spec), Err(Stop::OutOfMemory { .. })));
        let (cluster, spec) = server(70.6, 4, 0.01);
        let step = pace(&cluster, &spec).unwrap().step_ms;
        assert!((10.0..20.0).contains(&step), "{step} ms between tokens");
    }
}
