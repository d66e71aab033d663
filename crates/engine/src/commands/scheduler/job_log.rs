//! A training job's log as Megatron-LM writes it under `srun`
//! (`slurm-JOBID.out`): the setup lines, an iteration line every log
//! interval with the timers Megatron prints at `--timing-log-level 1`,
//! checkpoint saves and loads, and how the job ended (PyTorch's NCCL
//! watchdog, NCCL's network warnings, srun's and slurmstepd's lines).
//!
//! The iteration line's fields and widths follow Megatron's
//! `training_log` (`iteration {:8d}/{:8d}`, `consumed samples: {:12d}`,
//! `global batch size: {:5d}`, `lm loss: {:.6E}`, skipped and nan
//! iterations `{:3d}`); the timers block its `(name + ' ').ljust(48, '.')`;
//! the watchdog lines the capture in
//! ../shared/reference/fabric/pytorch_processgroupnccl_watchdog_timeout.txt;
//! the network warning nccl_warn_net_ib_completion_error_status5_status12_roce.txt.

use crate::commands::scheduler::slurm::timestamp;
use crate::model::network;
use crate::model::time::civil;
use crate::model::workload::{Event, Kind, Workload, WATCHDOG_MS};
use crate::model::workload::{Pace, Stop};
use crate::model::Cluster;
use crate::rng::Rng;

/// The log's text at `now`.
pub fn render(cluster: &Cluster, workload: &Workload, now: i64) -> String {
    if workload.spec.kind == Kind::Serving {
        return super::serving_log::render(cluster, workload, now);
    }
    let spec = &workload.spec;
    let mut out = String::new();
    let world = spec.world();
    let mut rng = Rng::derive(workload.job_id as u64, &["log"]);
    let events = workload.timeline(now);
    // Megatron checks its arguments before it prints the sizes they give.
    if let Some(Event::Stopped { at, stop: stop @ Stop::Arguments { .. }, ends }) = events.first() {
        return stopped(cluster, workload, *at, stop, *ends, now, false);
    }
    out += &format!(
        "using world size: {world}, data-parallel size: {}, context-parallel size: 1, tensor-model-parallel size: {}, pipeline-model-parallel size: {}\n",
        spec.data_parallel(),
        spec.tensor,
        spec.pipeline
    );
    out += "> initializing torch distributed ...\n";
    // A job out of memory built its model first: it fails in its first step.
    let built = match events.first() {
        Some(Event::Stopped { stop, .. }) => matches!(stop, Stop::OutOfMemory { .. }),
        _ => true,
    };
    if built {
        out += "> setting random seeds to 1234 ...\n";
        out += "building GPT model ...\n";
        let shard = crate::model::workload::pace::parameter_count(spec.params_b) / u64::from(spec.model_parallel());
        out += &format!(" > number of parameters on (tensor, pipeline) model parallel rank (0, 0): {shard}\n");
    }
    // Whether setup got as far as the first step: a fault before it fails a rank's setup.
    let mut trained = false;
    for event in &events {
        match event {
            Event::Started { at: ready } => {
                trained = true;
                out += &setup_lines(workload, *ready, &mut rng);
            }
            Event::Iteration { at, iteration, pace } => {
                out += &iteration_line(workload, *at, *iteration, pace);
                out += &timers(
                    &[
                        ("forward-backward", pace.compute_ms + pace.exposed_comm_ms),
                        ("batch-generator", pace.input_ms),
                        ("all-grads-sync", pace.exposed_comm_ms.max(pace.all_reduce_ms * 0.1)),
                        ("optimizer", pace.compute_ms * 0.012),
                    ],
                    &mut rng,
                );
            }
            Event::Saved { iteration, seconds, .. } => {
                let dir = spec.checkpoint_dir();
                out += &format!("saving checkpoint at iteration {iteration:7} to {dir} in torch_dist format\n");
                if let Some(seconds) = seconds {
                    out += &format!("  successfully saved checkpoint from iteration {iteration:7} to {dir} [ t 1/{}, p 1/{} ]\n", spec.tensor, spec.pipeline);
                    out += &timers(&[("save-checkpoint", seconds * 1e3)], &mut rng);
                }
            }
            Event::Stopped { at, stop, ends } => {
                if matches!(stop, Stop::OutOfMemory { .. }) && !trained {
                    out += &setup_lines(workload, *at, &mut rng);
                }
                out += &stopped(cluster, workload, *at, stop, *ends, now, trained);
            }
            Event::Cancelled { at } => {
                let first = spec.nodes.first().map_or("", String::as_str);
                out += &format!("slurmstepd: error: *** JOB {} ON {first} CANCELLED AT {} ***\n", workload.job_id, timestamp(*at));
                out += "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n";
                out += &format!("slurmstepd: error: *** STEP {}.0 ON {first} CANCELLED AT {} ***\n", workload.job_id, timestamp(*at));
            }
            Event::Completed { at } => {
                out += &format!("[after training is done] datetime: {} \n", datetime(at.ceil() as i64));
            }
        }
    }
    out
}

/// From the model's build to the first step, which starts at `ready`.
fn setup_lines(workload: &Workload, ready: i64, rng: &mut Rng) -> String {
    let spec = &workload.spec;
    let mut out = String::new();
    let restore = workload.restore_seconds();
    if workload.resumed_from > 0 {
        let dir = spec.checkpoint_dir();
        out += &format!("loading distributed checkpoint from {dir} at iteration {}\n", workload.resumed_from);
        out += &format!("  successfully loaded checkpoint from {dir} [ t 1/{}, p 1/{} ] at iteration {}\n", spec.tensor, spec.pipeline, workload.resumed_from);
        out += &timers(&[("load-checkpoint", restore * 1e3)], rng);
    }
    let setup_end = ready - 12;
    out += &format!("[after model, optimizer, and learning rate scheduler are built] datetime: {} \n", datetime(setup_end));
    out += "> building train, validation, and test datasets ...\n";
    out += &format!("> building train, validation, and test datasets for GPT from {} ...\n", spec.dataset);
    out += &format!("[after dataloaders are built] datetime: {} \n", datetime(ready - 2));
    out += "done with setup ...\n";
    out += &timers(&[("model-and-optimizer-setup", (setup_end - workload.started) as f64 * 1e3), ("train/valid/test-data-iterators-setup", 9_870.0)], rng);
    out += "training ...\n";
    out += &format!("[before the start of training step] datetime: {} \n", datetime(ready));
    out
}

/// `2026-03-09 08:41:02`, as Python's datetime prints it.
fn datetime(at: i64) -> String {
    let c = civil(at);
    format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// Python's `{:.6E}`: `1.234568E+01`.
pub fn scientific(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return "0.000000E+00".to_string();
    }
    let mut exponent = value.abs().log10().floor() as i32;
    let mut mantissa = value / 10f64.powi(exponent);
    if format!("{:.6}", mantissa.abs()).starts_with("10") {
        exponent += 1;
        mantissa /= 10.0;
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa:.6}E{sign}{:02}", exponent.abs())
}

/// The language-model loss at `iteration`: a power law from ln(vocabulary)
/// down, with a little noise per step.
pub fn loss(workload: &Workload, iteration: u32) -> f64 {
    let noise = Rng::derive(workload.job_id as u64 ^ 0x1055, &[&iteration.to_string()]).unit_f64() - 0.5;
    let i = f64::from(iteration);
    match workload.spec.kind {
        Kind::Training => 1.9 + 9.8 * (1.0 + i / 60.0).powf(-0.55) + 0.06 * noise,
        Kind::FineTuning | Kind::Serving => 0.95 + 0.8 * (1.0 + i / 40.0).powf(-0.5) + 0.03 * noise,
    }
}

/// Warm-up over 2,000 steps, then cosine decay to a tenth.
fn learning_rate(workload: &Workload, iteration: u32) -> f64 {
    let peak = match workload.spec.kind {
        Kind::Training => 3e-4,
        Kind::FineTuning | Kind::Serving => 1e-5,
    };
    let warmup = 2_000.0_f64.min(f64::from(workload.spec.steps) / 10.0).max(1.0);
    let i = f64::from(iteration);
    if i < warmup {
        return peak * i / warmup;
    }
    let progress = ((i - warmup) / (f64::from(workload.spec.steps) - warmup).max(1.0)).min(1.0);
    peak * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

fn iteration_line(workload: &Workload, at: f64, iteration: u32, pace: &Pace) -> String {
    let spec = &workload.spec;
    let mut rng = Rng::derive(workload.job_id as u64, &["step", &iteration.to_string()]);
    let jitter = 1.0 + (rng.unit_f64() - 0.5) * 0.006;
    let step_ms = pace.step_ms * jitter;
    let tflops = pace.flops / (step_ms / 1e3) / f64::from(pace.gpus.max(1)) / 1e12;
    let grad_norm = 0.8 + 6.0 / (1.0 + f64::from(iteration) / 50.0) + rng.unit_f64() * 0.2;
    let consumed = u64::from(iteration) * u64::from(spec.global_batch);
    format!(
        " [{}] iteration {iteration:8}/{:8} | consumed samples: {consumed:12} | elapsed time per iteration (ms): {step_ms:.1} | throughput per GPU (TFLOP/s/GPU): {tflops:.1} | learning rate: {} | global batch size: {:5} | lm loss: {} | loss scale: 1.0 | grad norm: {grad_norm:.3} | number of skipped iterations: {:3} | number of nan iterations: {:3} |\n",
        datetime(at as i64),
        spec.steps,
        scientific(learning_rate(workload, iteration)),
        spec.global_batch,
        scientific(loss(workload, iteration)),
        0,
        0
    )
}

/// Megatron's timers: the slowest and fastest rank, in milliseconds.
fn timers(entries: &[(&str, f64)], rng: &mut Rng) -> String {
    let mut out = "(min, max) time across ranks (ms):\n".to_string();
    for (name, ms) in entries {
        let spread = ms * (0.002 + rng.unit_f64() * 0.01);
        let centre = ms * (1.0 + (rng.unit_f64() - 0.5) * 0.004);
        let label: String = format!("{name} ").chars().chain(std::iter::repeat('.')).take(48).collect();
        out += &format!("    {label}: ({:.2}, {:.2})\n", (centre - spread / 2.0).max(0.0), centre + spread / 2.0);
    }
    out
}

/// PyTorch's glog prefix: `[rank3]:[E0309 09:10:04.123456789 ProcessGroupNCCL.cpp:607] `.
fn torch_prefix(rank: u32, at: i64, nanos: u64, line: u32) -> String {
    let c = civil(at);
    format!("[rank{rank}]:[E{:02}{:02} {:02}:{:02}:{:02}.{nanos:09} ProcessGroupNCCL.cpp:{line}] ", c.month, c.day, c.hour, c.minute, c.second)
}

/// What the ranks print when a fault stops the job at `at`, up to `now`:
/// in a step once it `trained`, or in its setup before the first step.
fn stopped(cluster: &Cluster, workload: &Workload, at: i64, stop: &Stop, ends: i64, now: i64, trained: bool) -> String {
    let spec = &workload.spec;
    let mut rng = Rng::derive(workload.job_id as u64, &["stop"]);
    if matches!(stop, Stop::OutOfMemory { .. } | Stop::Arguments { .. }) {
        return refused(cluster, workload, stop, &mut rng);
    }
    let mut out = String::new();
    let iteration = workload.iteration_at(at);
    // The collective the other ranks wait in: a step's gradient all-reduce,
    // or in setup the barrier after the process groups are built (one element).
    let (seq, numel) = if trained { (u64::from(iteration) * 6 + 3, 40_000_000) } else { (1, 1) };
    let (failed_node, failed_gpu) = match stop {
        Stop::GpuLost { node, gpu } | Stop::GpuHung { node, gpu } | Stop::GpuEcc { node, gpu } => (node.clone(), Some(*gpu)),
        Stop::NodeDown { node } | Stop::DriverMismatch { node } => (node.clone(), None),
        Stop::OutOfMemory { node, gpu } => (node.clone(), Some(*gpu)),
        Stop::Arguments { .. } | Stop::CacheMemory { .. } => (String::new(), None),
        Stop::RailDown { node, hca } => (node.clone(), hca.trim_start_matches("mlx5_").parse().ok()),
    };
    let failed_rank = failed_gpu.and_then(|gpu| workload.rank(&failed_node, gpu));
    match stop {
        Stop::GpuLost { .. } | Stop::GpuHung { .. } | Stop::GpuEcc { .. } if !trained => {
            if let Some(rank) = failed_rank {
                out += &setup_traceback(rank, stop);
                out += &srun_ended(&failed_node, &[rank], "Exited with exit code 1");
            }
        }
        Stop::GpuLost { .. } | Stop::GpuHung { .. } | Stop::GpuEcc { .. } => {
            if let Some(rank) = failed_rank {
                let cuda = if matches!(stop, Stop::GpuEcc { .. }) { "uncorrectable ECC error encountered" } else { "unspecified launch failure" };
                out += &torch_prefix(rank, at, rng.range_u64(0, 999_999_999), 1515);
                out += &format!("[PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: CUDA error: {cuda}\n");
                out += "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
                out += &format!("srun: error: {failed_node}: task {rank}: Aborted (core dumped)\n");
            }
        }
        Stop::RailDown { hca, .. } => {
            let local = failed_gpu.unwrap_or(0);
            let node_at = spec.nodes.iter().position(|n| *n == failed_node).unwrap_or(0);
            let pid = workload.pid(node_at, local);
            let peer_node = spec.nodes.iter().find(|n| **n != failed_node);
            let peer = peer_node.map_or_else(String::new, |n| network::frontend_ip(n));
            // Link-local GIDs from the ports' GUIDs: this rail's, and the same rail's on the peer.
            let gid = |host: Option<&String>| {
                let guid = host.and_then(|h| cluster.node(h)).and_then(|node| node.hcas.iter().find(|h| h.name == *hca)).map_or(0, |h| h.port.guid);
                format!("fe80::{:x}:{:x}:{:x}:{:x}", guid >> 48, (guid >> 32) & 0xffff, (guid >> 16) & 0xffff, guid & 0xffff)
            };
            let (local_gid, remote_gid) = (gid(Some(&failed_node)), gid(peer_node));
            let thread = pid.saturating_add(186);
            out += &format!(
                "{failed_node}:{pid}:{thread} [{local}] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer {peer}<{}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid {local_gid} remoteGids{remote_gid} hca {hca}\n",
                rng.range_u64(32_768, 60_999)
            );
            out += &format!("{failed_node}:{pid}:{thread} [{local}] NCCL INFO transport/net.cc:1362 -> 6\n");
            out += &format!("{failed_node}:{pid}:{thread} [{local}] NCCL INFO proxy.cc:728 -> 6\n");
            out += &format!("{failed_node}:{pid}:{thread} [{local}] NCCL INFO proxy.cc:912 -> 6 [Progress Thread]\n");
        }
        Stop::DriverMismatch { .. } => {
            // Every rank on the node fails its first CUDA call.
            let node_at = spec.nodes.iter().position(|n| *n == failed_node).unwrap_or(0) as u32;
            let ranks: Vec<u32> = (0..spec.gpus_per_node).map(|g| node_at * spec.gpus_per_node + g).collect();
            for rank in &ranks {
                out += &setup_traceback(*rank, stop);
            }
            out += &srun_ended(&failed_node, &ranks, "Exited with exit code 1");
        }
        Stop::NodeDown { .. } | Stop::OutOfMemory { .. } | Stop::Arguments { .. } | Stop::CacheMemory { .. } => {}
    }
    if ends > now {
        return out;
    }
    // The ranks still waiting time out (after the watchdog's timeout) or
    // get the network error, and abort.
    let waited = if matches!(stop, Stop::RailDown { .. }) { (ends - at) * 1000 } else { WATCHDOG_MS + rng.range_u64(10, 120) as i64 };
    let mut survivors: Vec<(String, Vec<u32>)> = Vec::new();
    for (node_at, node) in spec.nodes.iter().enumerate() {
        let ranks: Vec<u32> = (0..spec.gpus_per_node)
            .map(|g| node_at as u32 * spec.gpus_per_node + g)
            .filter(|r| Some(*r) != failed_rank || matches!(stop, Stop::RailDown { .. }))
            .filter(|_| !matches!(stop, Stop::DriverMismatch { .. }) || *node != failed_node)
            .collect();
        survivors.push((node.clone(), ranks));
    }
    for (_, ranks) in &survivors {
        for rank in ranks.iter().take(2) {
            // Room for the two lines after it within the second.
            let nanos = rng.range_u64(0, 999_990_000);
            let work = match stop {
                Stop::RailDown { .. } => format!("[PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version {}\n", cluster.versions.nccl),
                _ => format!(
                    "[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={WATCHDOG_MS}) ran for {waited} milliseconds before timing out.\n"
                ),
            };
            let line = if matches!(stop, Stop::RailDown { .. }) { 1515 } else { 607 };
            out += &torch_prefix(*rank, ends, nanos, line);
            out += &work;
            if !matches!(stop, Stop::RailDown { .. }) {
                out += &torch_prefix(*rank, ends, nanos + 1_200, 621);
                out += &format!("[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n");
                out += &torch_prefix(*rank, ends, nanos + 1_900, 627);
                out += &format!("[Rank {rank}] To avoid data inconsistency, we are taking the entire process down.\n");
            }
        }
    }
    for (node, ranks) in survivors.iter().filter(|(_, ranks)| !ranks.is_empty()) {
        out += &srun_ended(node, ranks, "Aborted (core dumped)");
    }
    out
}

/// srun's line for the tasks of `node` that ended `how`: `srun: error:
/// gpu-001: tasks 0-7: Exited with exit code 1`.
fn srun_ended(node: &str, ranks: &[u32], how: &str) -> String {
    let tasks = if ranks.len() == 1 { "task" } else { "tasks" };
    format!("srun: error: {node}: {tasks} {}: {how}\n", task_list(ranks))
}

/// Where PyTorch is installed in the job's container.
pub(crate) const TORCH: &str = "/usr/local/lib/python3.10/dist-packages/torch";

/// A traceback's frame: where, and the line of source Python prints under it.
pub(crate) fn frame(file: &str, line: u32, function: &str, source: &str) -> [String; 2] {
    [format!("  File \"{file}\", line {line}, in {function}"), format!("    {source}")]
}

/// The first lines of every rank's traceback: Megatron's entry point, and
/// with `initializing` its call into `initialize_megatron`.
fn traceback_start(initializing: bool) -> Vec<String> {
    let home = crate::model::node::HOME;
    let mut lines = vec!["Traceback (most recent call last):".to_string()];
    lines.extend(frame(&format!("{home}/pretrain_gpt.py"), 276, "<module>", "pretrain("));
    if initializing {
        lines.extend(frame(&format!("{home}/megatron/training/training.py"), 239, "pretrain", "initialize_megatron(extra_args_provider=extra_args_provider,"));
    }
    lines
}

/// PyTorch's size as its allocator messages print it: MiB below a GiB.
fn torch_size(mib: f64) -> String {
    if mib < 1024.0 {
        format!("{mib:.2} MiB")
    } else {
        format!("{:.2} GiB", mib / 1024.0)
    }
}

/// PyTorch's caching allocator refusing `tried` MiB on a GPU of
/// `capacity` MiB with `free` left, `outside` held outside PyTorch and
/// `cached` reserved but unallocated.
pub(crate) fn out_of_memory(capacity: f64, tried: f64, free: f64, outside: f64, cached: f64) -> String {
    let in_use = capacity - free;
    format!(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}. GPU 0 has a total capacity of {} of which {} is free. Including non-PyTorch memory, this process has {} memory in use. Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        torch_size(tried),
        torch_size(capacity),
        torch_size(free),
        torch_size(in_use),
        torch_size(in_use - outside - cached),
        torch_size(cached)
    )
}

/// Every rank of a job refused by Megatron's argument checks, or out of
/// memory in its first step, fails the same way: rank 0's traceback (the
/// others interleave the same), then srun's line for each node.
fn refused(cluster: &Cluster, workload: &Workload, stop: &Stop, rng: &mut Rng) -> String {
    let spec = &workload.spec;
    let home = crate::model::node::HOME;
    let mut lines = traceback_start(matches!(stop, Stop::Arguments { .. }));
    match stop {
        Stop::Arguments { message } => {
            lines.extend(frame(&format!("{home}/megatron/training/initialize.py"), 51, "initialize_megatron", "validate_args(args, args_defaults)"));
            lines.extend(frame(&format!("{home}/megatron/training/arguments.py"), 244, "validate_args", "assert args.world_size % total_model_size == 0, ("));
            lines.push(format!("AssertionError: {message}"));
        }
        _ => {
            let gpu = spec.nodes.first().and_then(|n| cluster.node(n)).and_then(|node| crate::model::workload::pace::job_gpus(node, spec.gpus_per_node).next());
            let capacity = gpu.map_or(0, |gpu| crate::model::workload::pace::usable_memory_mib(cluster, gpu)) as f64;
            let free = 300.0 + rng.unit_f64() * 1200.0;
            let outside = 900.0 + rng.unit_f64() * 300.0;
            let cached = 200.0 + rng.unit_f64() * 1300.0;
            // The logits of a micro-batch in FP32: where a step's peak often tips over.
            let tried = (f64::from(spec.seq_len) * 128_256.0 * 4.0 / f64::from(spec.tensor.max(1)) / 1_048_576.0).max(free + 64.0);
            let schedule = if spec.pipeline > 1 { "forward_backward_pipelining_without_interleaving" } else { "forward_backward_no_pipelining" };
            let (training, schedules) = (format!("{home}/megatron/training/training.py"), format!("{home}/megatron/core/pipeline_parallel/schedules.py"));
            for (file, line, function, source) in [
                (training.as_str(), 380, "pretrain", "iteration, num_floating_point_operations_so_far = train("),
                (&training, 1263, "train", "train_step(forward_step_func,"),
                (&training, 730, "train_step", "losses_reduced = forward_backward_func("),
                (&schedules, 468, schedule, "backward_step(input_tensor, output_tensor, output_tensor_grad, model_type, config)"),
                (&schedules, 366, "backward_step", "torch.autograd.backward(output_tensor[0], grad_tensors=output_tensor_grad[0])"),
                (&format!("{TORCH}/autograd/__init__.py"), 289, "backward", "_engine_run_backward("),
                (
                    &format!("{TORCH}/autograd/graph.py"),
                    768,
                    "_engine_run_backward",
                    "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
                ),
            ] {
                lines.extend(frame(file, line, function, source));
            }
            lines.push(out_of_memory(capacity, tried, free, outside, cached));
        }
    }
    let mut out: String = lines.iter().map(|line| format!("[rank0]: {line}\n")).collect();
    for (node_at, node) in spec.nodes.iter().enumerate() {
        let first = node_at as u32 * spec.gpus_per_node;
        let ranks: Vec<u32> = (first..first + spec.gpus_per_node).collect();
        out += &srun_ended(node, &ranks, "Exited with exit code 1");
    }
    out
}

/// The Python traceback of a rank whose GPU fails its first CUDA call in
/// Megatron's `_initialize_distributed`, with the `[rankN]:` prefix
/// PyTorch's elastic agent gives each line.
fn setup_traceback(rank: u32, stop: &Stop) -> String {
    let cuda = match stop {
        Stop::GpuEcc { .. } => "uncorrectable ECC error encountered",
        // The GPUs after a lost one move down a number: the last ordinal is gone.
        Stop::GpuLost { .. } => "invalid device ordinal",
        _ => "unknown error",
    };
    let initialize = format!("{}/megatron/training/initialize.py", crate::model::node::HOME);
    let cuda_init = format!("{TORCH}/cuda/__init__.py");
    let mut lines = traceback_start(true);
    lines.extend(frame(&initialize, 83, "initialize_megatron", "finish_mpu_init()"));
    lines.extend(frame(&initialize, 63, "finish_mpu_init", "_initialize_distributed(get_embedding_ranks, get_position_embedding_ranks)"));
    lines.extend(frame(&initialize, 290, "_initialize_distributed", "torch.cuda.set_device(args.local_rank)"));
    lines.extend(frame(&cuda_init, 420, "set_device", "torch._C._cuda_setDevice(device)"));
    match stop {
        // CUDA cannot start at all: PyTorch's lazy init reports the runtime's error 803.
        Stop::DriverMismatch { .. } => {
            lines.extend(frame(&cuda_init, 319, "_lazy_init", "torch._C._cuda_init()"));
            lines.push("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination".to_string());
        }
        _ => lines.extend([
            format!("RuntimeError: CUDA error: {cuda}"),
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.".to_string(),
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1".to_string(),
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.".to_string(),
        ]),
    }
    lines.iter().map(|line| format!("[rank{rank}]: {line}\n")).collect()
}

/// srun's task list: `0-2,4-7`.
fn task_list(numbers: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut at = 0;
    while at < numbers.len() {
        let mut end = at;
        while end + 1 < numbers.len() && numbers[end + 1] == numbers[end] + 1 {
            end += 1;
        }
        parts.push(if end == at { numbers[at].to_string() } else { format!("{}-{}", numbers[at], numbers[end]) });
        at = end + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_python_prints_them() {
        assert_eq!(scientific(11.7412), "1.174120E+01");
        assert_eq!(scientific(0.0003), "3.000000E-04");
        assert_eq!(scientific(9.9999999), "1.000000E+01");
        assert_eq!(scientific(0.0), "0.000000E+00");
        assert_eq!(task_list(&[0, 1, 2, 4, 7, 8]), "0-2,4,7-8");
    }
}
