//! Workloads: the training jobs a lab runs on its GPUs.
//!
//! A lab declares each one ([`WorkloadSpec`]); the cluster holds it running
//! ([`Workload`]) as Slurm job, as processes on its GPUs and as a log. Its
//! progress is a function of the model over time: the cluster records the
//! job's pace (a [`Pacer`]: the performance model's `perf::workload_pace`) each time a fault or an
//! operator's change alters it, and the job's steps, checkpoints and end
//! follow from that record and the clock ([`Workload::timeline`]). A fault
//! that stops it (a GPU lost, a rail down) ends it the way it ends a real
//! job: at once for the rank that failed, after the process group's
//! watchdog timeout for the ranks left waiting.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::gpu::{throttle, GpuProcess};
use super::job::Job;
use super::time::EpochSeconds;
use super::Cluster;
use crate::limits::MAX_TRAIN_ITERATIONS;
use crate::rng::Rng;

pub mod pace;
pub mod serving;
pub use pace::{Pace, Pacer, Serving, Stop};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Training,
    FineTuning,
    /// An inference server (vLLM's OpenAI-compatible server) under a
    /// request load: its [`Load`] says how much.
    Serving,
}

/// A serving job's request load and the server's limits.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Requests arriving each second (a Poisson stream).
    pub requests_per_s: f64,
    /// Tokens in a request's prompt, and generated for it, on average.
    pub prompt_tokens: u32,
    pub output_tokens: u32,
    /// vLLM's `--max-num-seqs`: requests it runs at once.
    pub max_num_seqs: u32,
    /// vLLM's `--gpu-memory-utilization`, in thousandths (900: 0.9).
    #[serde(default = "default_memory_permille")]
    pub memory_permille: u32,
}

fn default_memory_permille() -> u32 {
    900
}

impl Load {
    /// The share of each GPU's memory the server may take.
    pub fn memory_share(&self) -> f64 {
        f64::from(self.memory_permille.clamp(1, 1000)) / 1000.0
    }
}

/// When the job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// It has been running for a while when the lab starts.
    Running,
    /// The trainee submits it (`sbatch ~/NAME.sbatch`).
    Launch,
}

/// A lab's `[[jobs]]` entry, checked. In lab data it is a list of its
/// values ([`Compact`]): the engine's worker reads it with a fraction of
/// the code a map of named fields takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Compact", into = "Compact")]
pub struct WorkloadSpec {
    pub name: String,
    pub kind: Kind,
    pub nodes: Vec<String>,
    pub gpus_per_node: u32,
    /// The model's size as the lab wrote it (`8B`), and in billions.
    pub params: String,
    pub params_b: f64,
    pub tensor: u32,
    pub pipeline: u32,
    pub global_batch: u32,
    pub seq_len: u32,
    /// Where its tokens are, on shared storage.
    pub dataset: String,
    pub loader_workers: u32,
    /// Steps between checkpoints (0: none).
    pub checkpoint_every: u32,
    /// Megatron's `--train-iters`.
    pub steps: u32,
    pub start: Start,
    /// A serving job's load (its `seq_len` is the server's
    /// `--max-model-len`); None for training.
    pub load: Option<Load>,
}

/// [`WorkloadSpec`] as lab data: name, fine-tuning, nodes, GPUs per node,
/// params, tensor, pipeline, global batch, sequence, dataset, loader
/// workers, checkpoint interval, steps, launched by the trainee, and a
/// serving job's load.
#[derive(Serialize, Deserialize)]
struct Compact(
    String,
    bool,
    Vec<String>,
    u32,
    String,
    u32,
    u32,
    u32,
    u32,
    String,
    u32,
    u32,
    u32,
    bool,
    // Lab data built before servers has no load.
    #[serde(default)] Option<Load>,
);

impl From<Compact> for WorkloadSpec {
    fn from(c: Compact) -> WorkloadSpec {
        WorkloadSpec {
            name: c.0,
            kind: match (&c.14, c.1) {
                (Some(_), _) => Kind::Serving,
                (None, true) => Kind::FineTuning,
                (None, false) => Kind::Training,
            },
            nodes: c.2,
            params_b: parse_params(&c.4).unwrap_or(1.0),
            params: c.4,
            // Lab data is checked when it is built; a crafted file is clamped
            // to the same ranges, so no product overflows.
            gpus_per_node: c.3.clamp(1, 64),
            tensor: c.5.clamp(1, 64),
            pipeline: c.6.clamp(1, 128),
            global_batch: c.7.clamp(1, 1 << 20),
            seq_len: c.8.clamp(128, 131_072),
            dataset: c.9,
            loader_workers: c.10.clamp(1, 64),
            checkpoint_every: c.11.min(MAX_TRAIN_ITERATIONS),
            steps: c.12.min(MAX_TRAIN_ITERATIONS),
            start: if c.13 { Start::Launch } else { Start::Running },
            load: c.14.map(|load| Load {
                requests_per_s: if load.requests_per_s.is_finite() { load.requests_per_s.clamp(0.0, 10_000.0) } else { 0.0 },
                prompt_tokens: load.prompt_tokens.clamp(1, 131_072),
                output_tokens: load.output_tokens.clamp(1, 131_072),
                max_num_seqs: load.max_num_seqs.clamp(1, 4_096),
                memory_permille: load.memory_permille.clamp(1, 1000),
            }),
        }
    }
}

impl From<WorkloadSpec> for Compact {
    fn from(s: WorkloadSpec) -> Compact {
        Compact(
            s.name,
            s.kind == Kind::FineTuning,
            s.nodes,
            s.gpus_per_node,
            s.params,
            s.tensor,
            s.pipeline,
            s.global_batch,
            s.seq_len,
            s.dataset,
            s.loader_workers,
            s.checkpoint_every,
            s.steps,
            s.start == Start::Launch,
            s.load,
        )
    }
}

impl WorkloadSpec {
    /// A spec of this size with the usual settings, for tests and examples.
    pub fn example(params_b: f64) -> WorkloadSpec {
        WorkloadSpec {
            name: "pretrain".into(),
            kind: Kind::Training,
            nodes: vec!["gpu-001".into()],
            gpus_per_node: 8,
            params: format!("{params_b}B"),
            params_b,
            tensor: 1,
            pipeline: 1,
            global_batch: 128,
            seq_len: 8192,
            dataset: "/lustre/datasets/pile/tokens".into(),
            loader_workers: 8,
            checkpoint_every: 500,
            steps: 100_000,
            start: Start::Running,
            load: None,
        }
    }

    /// Memory each rank holds (MiB), as Megatron-LM's BF16 training lays it
    /// out: BF16 weights and FP32 gradient buffers of its model shard (6
    /// bytes a parameter; Megatron accumulates BF16 gradients in FP32), its
    /// data-parallel share of the distributed optimizer (FP32 master
    /// weights and Adam's two moments, 12 bytes a parameter), one
    /// micro-batch's activations with flash attention (34·s·h bytes a layer,
    /// Korthikanti et al. 2022, without the attention scores), the FP32
    /// logits over Llama 3's 128,256-token vocabulary, and about 1.5 GiB of
    /// CUDA context, NCCL buffers and workspaces. An 8B model at DP16 holds
    /// about 61 GiB.
    pub fn rank_memory_mib(&self) -> u64 {
        let spec = self;
        let shard = spec.params_b * 1e9 / f64::from(spec.model_parallel());
        let (layers, hidden) = pace::shape(spec.params_b);
        let tensor = f64::from(spec.tensor.max(1));
        let activations = f64::from(spec.seq_len) * f64::from(hidden) * f64::from(layers) * 34.0 / tensor / f64::from(spec.pipeline.max(1));
        let logits = f64::from(spec.seq_len) * 128_256.0 * 4.0 / tensor;
        let bytes = shard * 6.0 + shard * 12.0 / f64::from(spec.data_parallel()) + activations + logits + 1536.0 * 1_048_576.0;
        (bytes / 1_048_576.0) as u64
    }

    pub fn world(&self) -> u32 {
        self.gpus_per_node.saturating_mul(self.nodes.len() as u32)
    }

    pub fn data_parallel(&self) -> u32 {
        (self.world() / self.model_parallel()).max(1)
    }

    /// GPUs one model replica spans: tensor x pipeline.
    pub fn model_parallel(&self) -> u32 {
        self.tensor.saturating_mul(self.pipeline).max(1)
    }

    /// Bytes of BF16 gradients each data-parallel rank reduces per step.
    pub fn gradient_bytes(&self) -> f64 {
        self.params_b * 1e9 * 2.0 / f64::from(self.model_parallel())
    }

    /// Bytes each node's rails carry per step, in each direction: its share
    /// of the gradients crosses to the other nodes twice (reduce-scatter,
    /// all-gather), spread over its `rails`.
    pub fn rail_bytes_per_step(&self, rails: usize) -> f64 {
        let nodes = self.nodes.len() as f64;
        if nodes < 2.0 {
            return 0.0;
        }
        2.0 * self.gradient_bytes() * (nodes - 1.0) / nodes / rails.max(1) as f64
    }

    /// Where its checkpoints go.
    pub fn checkpoint_dir(&self) -> String {
        format!("/lustre/checkpoints/{}", self.name)
    }

    /// The batch script the lab leaves in the trainee's home.
    pub fn script_path(&self) -> String {
        format!("{}/{}.sbatch", crate::model::node::HOME, self.name)
    }

    pub fn log_interval(&self) -> u32 {
        10
    }

    /// The name a server serves its model as (`--served-model-name`): the
    /// last part of the model's path.
    pub fn served_name(&self) -> &str {
        self.dataset.rsplit('/').next().unwrap_or("model")
    }

    /// How many of each node's first GPUs its processes use: a server's
    /// tensor-parallel workers (of the GPUs Slurm gave it), a training
    /// job's ranks.
    pub fn gpus_used(&self) -> u32 {
        if self.load.is_some() {
            self.tensor.min(self.gpus_per_node)
        } else {
            self.gpus_per_node
        }
    }
}

/// Parses a model size as labs write it: `8B`, `70b`, `1.5B`, `350M`.
pub fn parse_params(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, scale) = match text.char_indices().last()? {
        (at, 'B' | 'b') => (&text[..at], 1.0),
        (at, 'M' | 'm') => (&text[..at], 1e-3),
        (at, 'T' | 't') => (&text[..at], 1e3),
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && value > 0.0).then_some(value * scale).filter(|b| (0.01..=2000.0).contains(b))
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    Completed,
    Cancelled,
    Failed { stop: Stop, struck: EpochSeconds },
}

/// A workload in the cluster: its Slurm job, its pace over time, its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub spec: Rc<WorkloadSpec>,
    pub job_id: i64,
    pub submitted: EpochSeconds,
    pub started: EpochSeconds,
    /// The iteration of the checkpoint it resumed from (0: from scratch).
    pub resumed_from: u32,
    /// Its pace from each instant on, or what stopped it.
    pub segments: Vec<(EpochSeconds, Result<Pace, Stop>)>,
    pub end: Option<(EpochSeconds, End)>,
    /// Whether its processes hold the GPUs now.
    pub holding: bool,
    /// The first rank's process id on each node follows from this.
    pub pid_base: u32,
    storage_gb_per_s: f64,
    /// Where each logged step and checkpoint of the whole run ends, in
    /// order: the index [`Workload::iteration_at`] searches (a port's
    /// counters ask it at every read), rebuilt when the pace changes.
    marks: Rc<[(f64, u32)]>,
    /// Each checkpoint save of the whole run: when it begins, its
    /// iteration, and how long it takes (None: the run's end cuts it off).
    saves: Rc<[(f64, u32, Option<f64>)]>,
    /// The kernel logged its ranks' refusal by a mismatched driver.
    refusal_logged: bool,
}

/// A checkpoint as a run writes it: its iteration, when the save began,
/// when it ended (None: still being written, or cut off), and the share of
/// its bytes written (in thousandths).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Save {
    pub iteration: u32,
    pub began: f64,
    pub ended: Option<f64>,
    pub written_permille: u64,
}

/// What the job log shows, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Setup done at `at`; training starts.
    Started {
        at: EpochSeconds,
    },
    /// A logged iteration: its end and its pace.
    Iteration {
        at: f64,
        iteration: u32,
        pace: Pace,
    },
    /// A checkpoint save from `at` taking `seconds` (None: still saving).
    Saved {
        at: f64,
        iteration: u32,
        seconds: Option<f64>,
    },
    /// The fault that stopped it struck at `at`; the job ends at `ends`.
    Stopped {
        at: EpochSeconds,
        stop: Stop,
        ends: EpochSeconds,
    },
    Cancelled {
        at: EpochSeconds,
    },
    Completed {
        at: f64,
    },
}

/// Seconds from the job's start to its first step: distributed init, model
/// and optimizer build, data loaders.
const SETUP_SECONDS: f64 = 95.0;
/// Seconds from the job's start to its ranks' first CUDA call, where a
/// GPU that needs a reset fails them.
const SETUP_ERROR_SECONDS: EpochSeconds = 9;
/// Seconds from the job's start to Megatron's argument checks.
const ARGUMENTS_SECONDS: EpochSeconds = 4;
/// A server's start before it loads weights: Python, the engine's
/// processes, the distributed setup of its tensor-parallel workers.
pub const SERVER_INIT_SECONDS: f64 = 21.0;
/// After the weights: torch.compile (cached), the memory profile, the KV
/// cache, capturing the CUDA graphs.
pub const ENGINE_INIT_SECONDS: f64 = 41.0;
/// Of those, the compile and the memory profile, before the KV cache is sized.
pub const PROFILE_SECONDS: f64 = 20.0;
/// From the engine's start to the API server taking requests.
pub const SERVER_UP_SECONDS: f64 = 4.0;
/// A server whose engine died exits this long after.
pub const SERVER_EXIT_SECONDS: EpochSeconds = 6;
/// PyTorch's process-group timeout as Megatron sets it (10 minutes): ranks
/// left waiting on a lost peer time out after it.
pub const WATCHDOG_MS: i64 = 600_000;
/// A network error (retry count exceeded) reaches the ranks in this long.
const NETWORK_ERROR_SECONDS: i64 = 24;

impl Workload {
    /// `spec` submitted at `submitted`, started at `started`, as job `job_id`.
    pub fn new(spec: Rc<WorkloadSpec>, job_id: i64, submitted: EpochSeconds, started: EpochSeconds, resumed_from: u32, storage_gb_per_s: f64) -> Workload {
        let pid_base = 100_000 + (Rng::derive(job_id as u64, &["pid"]).range_u64(0, 800_000)) as u32;
        Workload {
            spec,
            job_id,
            submitted,
            started,
            resumed_from,
            segments: Vec::new(),
            end: None,
            holding: false,
            pid_base,
            storage_gb_per_s,
            marks: Rc::from([]),
            saves: Rc::from([]),
            refusal_logged: false,
        }
    }

    /// Whether its processes run at `now`.
    pub fn running_at(&self, now: EpochSeconds) -> bool {
        self.started <= now && self.end.as_ref().is_none_or(|(at, _)| now < *at)
    }

    /// Seconds to save or load a checkpoint of this model.
    pub fn checkpoint_seconds(&self) -> f64 {
        pace::checkpoint_seconds(self.spec.params_b, self.spec.nodes.len(), self.storage_gb_per_s * 0.6)
    }

    /// Seconds to load the checkpoint it resumed from (none from scratch).
    pub fn restore_seconds(&self) -> f64 {
        if self.resumed_from == 0 {
            0.0
        } else {
            pace::checkpoint_seconds(self.spec.params_b, self.spec.nodes.len(), self.storage_gb_per_s)
        }
    }

    /// When its first step starts: setup, and loading the checkpoint it
    /// resumes from; for a server, when it takes requests.
    pub fn ready_at(&self) -> f64 {
        match self.spec.kind {
            Kind::Serving => self.started as f64 + SERVER_INIT_SECONDS + self.weights_load_seconds() + ENGINE_INIT_SECONDS + SERVER_UP_SECONDS,
            Kind::Training | Kind::FineTuning => self.started as f64 + SETUP_SECONDS + self.restore_seconds(),
        }
    }

    /// When a server has read its weights.
    pub fn weights_loaded_at(&self) -> f64 {
        self.started as f64 + SERVER_INIT_SECONDS + self.weights_load_seconds()
    }

    /// Seconds a server takes to read its weights (BF16 safetensors) from
    /// shared storage: its GPUs' shards share the node's bandwidth.
    pub fn weights_load_seconds(&self) -> f64 {
        let bytes = pace::parameter_count(self.spec.params_b) as f64 * 2.0;
        1.2 + bytes / (self.storage_gb_per_s.max(0.01) * 1e9)
    }

    /// The pace in force at `t`.
    pub fn pace_at(&self, t: f64) -> Option<&Result<Pace, Stop>> {
        self.segments.iter().rev().find(|(from, _)| (*from as f64) <= t).or(self.segments.first()).map(|(_, pace)| pace)
    }

    /// What has happened by `until`, in order.
    pub fn timeline(&self, until: EpochSeconds) -> Vec<Event> {
        let mut events = Vec::new();
        let ready = self.ready_at();
        let until_f = until as f64;
        let cancel = match &self.end {
            Some((at, End::Cancelled)) => Some(*at),
            _ => None,
        };
        let limit = cancel.map_or(until_f, |at| until_f.min(at as f64));
        // A fault in force when it starts, or striking during its setup,
        // fails it before its first step: a rank's CUDA or NCCL setup errs.
        let setup_stop =
            self.segments.iter().take_while(|(from, _)| (*from as f64) < ready).find_map(|(from, pace)| pace.as_ref().err().map(|stop| (*from, stop)));
        if let Some((from, stop)) = setup_stop {
            let at = match stop {
                // The arguments are checked before any GPU work (a server's
                // once it has resolved its model); memory runs out in the
                // first step, once the model is built.
                Stop::Arguments { .. } if self.spec.kind == Kind::Serving => self.started + 9,
                Stop::Arguments { .. } => self.started + ARGUMENTS_SECONDS,
                // A server runs out loading its weights; it finds its KV
                // cache too small once it has loaded them and profiled.
                Stop::OutOfMemory { .. } if self.spec.kind == Kind::Serving => self.weights_loaded_at().floor() as EpochSeconds,
                Stop::CacheMemory { .. } => (self.weights_loaded_at() + PROFILE_SECONDS).ceil() as EpochSeconds,
                Stop::OutOfMemory { .. } => ready.floor() as EpochSeconds,
                _ => from.max(self.started + SETUP_ERROR_SECONDS).min(ready.floor() as EpochSeconds),
            };
            if cancel.is_none_or(|cancelled| at < cancelled) {
                stopped(&mut events, at, stop, &self.spec, cancel, until);
                return events;
            }
        }
        if ready > limit {
            if let Some(at) = cancel.filter(|at| *at <= until) {
                events.push(Event::Cancelled { at });
            }
            return events;
        }
        events.push(Event::Started { at: ready.ceil() as EpochSeconds });
        if self.spec.kind == Kind::Serving {
            // A server runs until a fault stops it or it is cancelled.
            let struck = self.segments.iter().find(|(from, pace)| pace.is_err() && (*from as f64) >= ready);
            match struck {
                Some((at, Err(stop))) if cancel.is_none_or(|cancelled| *at < cancelled) => stopped(&mut events, *at, stop, &self.spec, cancel, until),
                _ => {
                    if let Some(at) = cancel.filter(|at| *at <= until) {
                        events.push(Event::Cancelled { at });
                    }
                }
            }
            return events;
        }
        let (mut t, mut iteration) = (ready, self.resumed_from);
        let steps = self.spec.steps.min(MAX_TRAIN_ITERATIONS);
        let interval = self.spec.log_interval().max(1);
        // The segment in force, followed step by step: the walk is linear
        // in steps and segments together.
        let mut segment = 0;
        while iteration < steps {
            while self.segments.get(segment + 1).is_some_and(|(from, _)| (*from as f64) <= t) {
                segment += 1;
            }
            let pace = match self.segments.get(segment) {
                Some((_, Ok(pace))) => *pace,
                Some((at, Err(stop))) => {
                    stopped(&mut events, *at, stop, &self.spec, cancel, until);
                    return events;
                }
                None => return events,
            };
            // A fault that strikes mid-step stops it before it ends.
            let next = t + pace.step_ms / 1e3;
            let struck = self.segments[segment + 1..].iter().take_while(|(from, _)| (*from as f64) < next).find(|(_, p)| p.is_err());
            if let Some((at, Err(stop))) = struck {
                stopped(&mut events, *at, stop, &self.spec, cancel, until);
                return events;
            }
            if next > limit {
                break;
            }
            t = next;
            iteration += 1;
            if iteration % interval == 0 {
                events.push(Event::Iteration { at: t, iteration, pace });
            }
            if self.spec.checkpoint_every > 0 && iteration % self.spec.checkpoint_every == 0 && iteration < steps {
                let seconds = self.checkpoint_seconds();
                let done = t + seconds <= limit;
                events.push(Event::Saved { at: t, iteration, seconds: done.then_some(seconds) });
                if !done {
                    break;
                }
                t += seconds;
            }
        }
        if iteration >= steps {
            events.push(Event::Completed { at: t });
        } else if let Some(at) = cancel.filter(|at| *at <= until) {
            events.push(Event::Cancelled { at });
        }
        events
    }

    /// After its pace changed: the whole run as the pace so far makes it,
    /// walked once: when it ends by itself (all its steps done, or a
    /// fault), and the index of its steps.
    fn settle(&mut self) {
        let run = self.timeline(EpochSeconds::MAX / 4);
        self.marks = run
            .iter()
            .filter_map(|event| match event {
                Event::Iteration { at, iteration, .. } | Event::Saved { at, iteration, .. } => Some((*at, *iteration)),
                _ => None,
            })
            .collect();
        self.saves = run
            .iter()
            .filter_map(|event| match event {
                Event::Saved { at, iteration, seconds } => Some((*at, *iteration, *seconds)),
                _ => None,
            })
            .collect();
        self.end = match run.last() {
            Some(Event::Completed { at }) => Some((at.ceil() as EpochSeconds, End::Completed)),
            Some(Event::Stopped { at, stop, ends }) => Some((*ends, End::Failed { stop: stop.clone(), struck: *at })),
            _ => None,
        };
    }

    /// The last iteration logged (or checkpointed) by `now`: the run's
    /// timeline up to `now` and a cancel, found in its index.
    pub fn iteration_at(&self, now: EpochSeconds) -> u32 {
        let limit = match &self.end {
            Some((at, End::Cancelled)) => now.min(*at),
            _ => now,
        } as f64;
        let done = self.marks.partition_point(|(at, _)| *at <= limit);
        done.checked_sub(1).map_or(self.resumed_from, |last| self.marks[last].1)
    }

    /// The checkpoints it had begun writing by `now`, in order: one still
    /// being written at `now`, or cut off by a cancel, has no end and as
    /// much of its bytes as the time since it began wrote.
    pub fn saves_by(&self, now: EpochSeconds) -> Vec<Save> {
        let cancel = match &self.end {
            Some((at, End::Cancelled)) => *at as f64,
            _ => f64::INFINITY,
        };
        let limit = (now as f64).min(cancel);
        self.saves
            .iter()
            .filter(|(began, ..)| *began <= now as f64 && *began < cancel)
            .map(|&(began, iteration, seconds)| {
                let ended = seconds.map(|s| began + s).filter(|end| *end <= limit);
                let written_permille = match ended {
                    Some(_) => 1000,
                    None => (((limit - began) / self.checkpoint_seconds().max(1.0)).clamp(0.0, 0.999) * 1000.0) as u64,
                };
                Save { iteration, began, ended, written_permille }
            })
            .collect()
    }

    /// Slurm's record of it.
    pub fn job(&self) -> Job {
        let (runtime, exit_code, cancelled) = match &self.end {
            None => (i64::MAX / 4, 0, false),
            Some((at, End::Completed)) => (at - self.started, 0, false),
            Some((at, End::Cancelled)) => (at - self.started, 0, true),
            Some((at, End::Failed { .. })) => (at - self.started, 1, false),
        };
        Job {
            id: self.job_id,
            name: self.spec.name.clone(),
            user: crate::model::node::USER.to_string(),
            nodes: self.spec.nodes.len(),
            nodelist: self.spec.nodes.clone(),
            submitted: self.submitted,
            started: Some(self.started),
            reason: String::new(),
            runtime,
            exit_code,
            cancelled,
            workload: false,
            batch: None,
            held: None,
        }
    }

    /// The process id of the rank on GPU `gpu` of the job's `node_at`th node.
    pub fn pid(&self, node_at: usize, gpu: u32) -> u32 {
        self.pid_base.saturating_add((node_at as u32).saturating_mul(37)).saturating_add(gpu)
    }

    /// A server's API server and engine core processes (with one GPU the
    /// engine core is its only worker, on the GPU).
    pub fn server_pids(&self) -> (u32, u32) {
        let engine = if self.spec.tensor > 1 { self.pid_base.saturating_sub(12) } else { self.pid(0, 0) };
        (self.pid_base.saturating_sub(31), engine)
    }

    /// The name nvidia-smi shows for the process on its `gpu`th GPU: a
    /// training rank's interpreter, or the title vLLM gives its worker.
    pub fn process_name(&self, gpu: u32) -> String {
        match self.spec.kind {
            Kind::Serving if self.spec.tensor > 1 => format!("VLLM::Worker_TP{gpu}"),
            Kind::Serving => "VLLM::EngineCore".to_string(),
            Kind::Training | Kind::FineTuning => "/usr/bin/python3".to_string(),
        }
    }

    /// How many of each node's first GPUs its processes use: a server's
    /// tensor-parallel workers, a training job's ranks.
    pub fn gpus_used(&self) -> u32 {
        self.spec.gpus_used()
    }

    /// The global rank of GPU `gpu` on `node`.
    pub fn rank(&self, node: &str, gpu: u32) -> Option<u32> {
        let at = self.spec.nodes.iter().position(|n| n == node)? as u32;
        (gpu < self.gpus_used()).then(|| at * self.spec.gpus_per_node + gpu)
    }

    /// Memory each rank holds (MiB), as nvidia-smi shows it (a job that
    /// does not fit fails before it fills the GPU).
    pub fn rank_memory_mib(&self, total_mib: u64) -> u64 {
        match self.spec.kind {
            // vLLM takes its share of the memory whatever its load.
            Kind::Serving => (total_mib as f64 * self.spec.load.map_or(pace::GPU_MEMORY_UTILIZATION, |load| load.memory_share())) as u64,
            Kind::Training | Kind::FineTuning => self.spec.rank_memory_mib().min(total_mib.saturating_sub(1_600)),
        }
    }
}

/// A fault stopped the job at `at`: it ends when its ranks give up, or
/// when `scancel` ends it first (then its ranks never time out).
fn stopped(events: &mut Vec<Event>, at: EpochSeconds, stop: &Stop, spec: &WorkloadSpec, cancel: Option<EpochSeconds>, until: EpochSeconds) {
    if at > until {
        return;
    }
    let ends = stop_end(at, stop, spec);
    match cancel.filter(|cancelled| *cancelled < ends) {
        Some(cancelled) => {
            events.push(Event::Stopped { at, stop: stop.clone(), ends: EpochSeconds::MAX });
            if cancelled <= until {
                events.push(Event::Cancelled { at: cancelled });
            }
        }
        None => events.push(Event::Stopped { at, stop: stop.clone(), ends }),
    }
}

/// When a job a fault stopped at `at` ends: the ranks waiting on a lost
/// GPU or node time out; a network error reaches them in seconds.
fn stop_end(at: EpochSeconds, stop: &Stop, spec: &WorkloadSpec) -> EpochSeconds {
    let nodes = spec.nodes.len();
    match stop {
        // The server's watchdog finds its engine dead within its 5 s check
        // and shuts the API server down.
        // (A server has no peers to wait for: it is gone with its node.)
        Stop::GpuLost { .. } | Stop::GpuHung { .. } | Stop::GpuEcc { .. } | Stop::NodeDown { .. } if spec.kind == Kind::Serving => at + SERVER_EXIT_SECONDS,
        Stop::RailDown { .. } => at + NETWORK_ERROR_SECONDS,
        // Every rank of a one-node job failed: srun ends the step at once.
        Stop::DriverMismatch { .. } if nodes == 1 => at + 1,
        // Every rank fails the same way: srun ends the step at once.
        Stop::OutOfMemory { .. } | Stop::Arguments { .. } | Stop::CacheMemory { .. } => at + 1,
        _ => at + WATCHDOG_MS / 1000 + 5,
    }
}

impl Cluster {
    /// The storage's bandwidth to each node (GB/s).
    pub fn storage_gb_per_s(&self) -> f64 {
        self.config.storage_gb_per_s.unwrap_or(DEFAULT_STORAGE_GB_PER_S)
    }

    /// Slurm's job ids on this cluster start near a seeded number.
    pub fn job_id_base(&self) -> i64 {
        Rng::derive(self.seed, &["slurm", "jobid"]).range_i64(10_000, 90_000)
    }

    /// The lab's jobs: those that run at its start have run for half an
    /// hour or so (an earlier id each); the others wait for the trainee.
    pub fn start_lab_workloads(&mut self, specs: &[WorkloadSpec], pacer: Pacer) {
        self.pacer = Some(pacer);
        let now = self.now;
        let running = specs.iter().filter(|spec| spec.start == Start::Running).count() as i64;
        let mut id = self.job_id_base() - 3 * running;
        for spec in specs.iter().take(crate::limits::MAX_WORKLOADS) {
            let spec = Rc::new(spec.clone());
            self.workload_specs.push(spec.clone());
            if spec.start == Start::Running {
                let mut rng = Rng::derive(self.seed, &["workload", &spec.name]);
                let started = now - 1_800 - rng.range_i64(0, 1_200);
                self.start_workload(spec, id, started - rng.range_i64(3, 90), started, 0);
                id += 3;
            }
        }
    }

    /// Starts `spec` as job `job_id` at `started` (its processes take the GPUs).
    pub fn start_workload(&mut self, spec: Rc<WorkloadSpec>, job_id: i64, submitted: EpochSeconds, started: EpochSeconds, resumed_from: u32) {
        let workload = Workload::new(spec, job_id, submitted, started, resumed_from, self.storage_gb_per_s());
        if self.workloads.len() >= crate::limits::MAX_WORKLOAD_RUNS {
            return;
        }
        self.workloads.push(workload);
        self.follow_workloads(started);
    }

    /// After the cluster changed at `at`: each running workload's pace from
    /// then on, its end if a fault stops it, and the GPUs it holds.
    pub(crate) fn follow_workloads(&mut self, at: EpochSeconds) {
        let Some(pacer) = self.pacer.filter(|_| !self.workloads.is_empty()) else {
            return;
        };
        let storage = self.storage_gb_per_s();
        let mut workloads = std::mem::take(&mut self.workloads);
        for workload in &mut workloads {
            // A job that has ended, or that a fault has already doomed, keeps its record.
            let settled = match &workload.end {
                Some((end, _)) if *end <= at => true,
                Some((_, End::Cancelled)) => true,
                Some((_, End::Failed { struck, .. })) => *struck <= at,
                _ => false,
            };
            if !settled {
                let pace = pacer(self, &workload.spec, storage);
                // Ranks past their setup keep the driver libraries they
                // loaded: an update under them fails only the next job.
                if matches!(pace, Err(Stop::DriverMismatch { .. })) && at as f64 >= workload.ready_at() {
                    continue;
                }
                let changed = workload.segments.last().is_none_or(|(_, last)| *last != pace);
                if changed {
                    let from = at.max(workload.started);
                    workload.segments.retain(|(t, _)| *t < from);
                    workload.segments.push((from, pace));
                    workload.settle();
                }
            }
        }
        // Each rank that opened the driver with the installed libraries
        // left the kernel's API mismatch message.
        let mut refusals = Vec::new();
        for workload in &mut workloads {
            if let Some((_, End::Failed { stop: Stop::DriverMismatch { node }, struck })) = &workload.end {
                if !workload.refusal_logged {
                    workload.refusal_logged = true;
                    refusals.push((node.clone(), *struck, workload.spec.gpus_per_node));
                }
            }
        }
        for (host, struck, ranks) in refusals {
            let Some(node) = self.node_mut(&host) else { continue };
            let (client, module) = (node.driver_installed.clone(), node.driver_loaded.clone());
            let uptime_us = (struck - node.booted_at).max(0) as u64 * 1_000_000;
            for rank in 0..u64::from(ranks) {
                let at_us = uptime_us + rank * 2_113;
                node.log_kernel_us(at_us, 3, format!("NVRM: API mismatch: the client has the version {client}, but"));
                node.log_kernel_us(at_us, 3, format!("NVRM: this kernel module has the version {module}.  Please"));
                node.log_kernel_us(at_us, 3, "NVRM: make sure that this kernel module and all NVIDIA driver");
                node.log_kernel_us(at_us, 3, "NVRM: components have the same version.");
            }
        }
        self.workloads = workloads;
        self.hold_gpus();
    }

    /// Starts the lab's jobs waiting in the queue whose nodes are free by
    /// `now`: in service, and the jobs that held them ended. Each starts at
    /// the later of `now` (when a change freed its nodes) and the end of the
    /// last job on them, so a restored session starts it at the same instant.
    pub(crate) fn start_waiting_jobs(&mut self, now: EpochSeconds, by_change: bool) {
        if !self.history.iter().any(|(_, change)| matches!(change, super::change::Change::SubmitJob { job, .. } if job.workload)) {
            return;
        }
        let waiting: Vec<(i64, String, EpochSeconds)> = self
            .slurm_jobs()
            .into_iter()
            .filter(|job| job.workload && job.started.is_none() && !job.cancelled && job.held.is_none() && !self.workloads.iter().any(|w| w.job_id == job.id))
            .map(|job| (job.id, job.name, job.submitted))
            .collect();
        for (id, name, submitted) in waiting {
            let Some(spec) = self.workload_specs.iter().find(|spec| spec.name == name).cloned() else { continue };
            let in_service = spec.nodes.iter().all(|host| {
                self.node(host).is_some_and(|node| super::service::slurmd_responds(node, now) && node.scheduler == super::node::SchedulerState::Idle)
            });
            let mut freed = submitted;
            let mut held = false;
            for other in self.workloads.iter().filter(|w| w.spec.nodes.iter().any(|n| spec.nodes.contains(n))) {
                match &other.end {
                    Some((end, _)) if *end <= now => freed = freed.max(*end),
                    _ => held = true,
                }
            }
            if in_service && !held {
                // A change that freed the nodes starts it then; the end of
                // the job that held them starts it at that end.
                let start = if by_change { freed.max(now) } else { freed };
                self.launch_workload_as(&name, id, submitted, start);
            }
        }
    }

    /// A fault that strikes and passes ends the jobs it reaches at `at`
    /// (those `reached` picks), while the model stays fit for the next: a
    /// contained memory error (Xid 94) ends the process that met it, a link
    /// that flaps the jobs across it.
    pub(crate) fn stop_workloads(&mut self, at: EpochSeconds, stop: &Stop, reached: impl Fn(&Workload) -> bool) {
        let doomed = |w: &Workload| matches!(&w.end, Some((_, End::Failed { struck, .. })) if *struck < at);
        for workload in self.workloads.iter_mut().filter(|w| w.running_at(at) && reached(w) && !doomed(w)) {
            workload.segments.retain(|(from, _)| *from < at);
            workload.segments.push((at, Err(stop.clone())));
            workload.settle();
        }
        self.hold_gpus();
    }

    /// Ends job `id` at `at` as `scancel` does. Whether it was running.
    pub(crate) fn cancel_workload(&mut self, id: i64, at: EpochSeconds) -> bool {
        let Some(workload) = self.workloads.iter_mut().find(|w| w.job_id == id && w.running_at(at)) else {
            return false;
        };
        workload.end = Some((at, End::Cancelled));
        self.hold_gpus();
        true
    }

    /// Sets each job GPU's processes and readings for the clock's instant:
    /// busy while its job runs (lower power while it waits on a lost peer),
    /// idle once it has ended.
    pub(crate) fn hold_gpus(&mut self) {
        let now = self.now;
        let workloads = self.workloads.clone();
        for (index, workload) in workloads.iter().enumerate() {
            let running = workload.running_at(now);
            if running == workload.holding && !running {
                continue;
            }
            let stop = workload.segments.iter().find_map(|(at, pace)| pace.as_ref().err().filter(|_| *at <= now));
            let waiting = stop.is_some();
            // The rank on the GPU that failed has exited: the others wait for it.
            let exited = match stop {
                Some(Stop::GpuLost { node, gpu } | Stop::GpuHung { node, gpu } | Stop::GpuEcc { node, gpu }) => Some((node.clone(), *gpu)),
                _ => None,
            };
            for (node_at, host) in workload.spec.nodes.iter().enumerate() {
                let seed = self.seed;
                let idle = (self.preset.gpu.idle_memory_used_mib, self.preset.gpu.idle_power_w, self.preset.gpu.idle_sm_clock_mhz);
                let Some(node) = self.node_mut(host) else { continue };
                // A server's workers hold the first `tensor` of the GPUs it was given.
                for gpu in node.gpus.iter_mut().take(workload.gpus_used() as usize) {
                    let mut rng = Rng::derive(seed, &["workload", host, &gpu.index.to_string(), &workload.job_id.to_string()]);
                    // The power cap is decided here, by the work: recomputed each time.
                    let slowed = gpu.throttle_reasons & !(throttle::GPU_IDLE | throttle::SW_POWER_CAP);
                    let pid = workload.pid(node_at, gpu.index);
                    gpu.processes.retain(|p| p.pid != pid);
                    let running = running
                        && exited.as_ref().is_none_or(|(node, index)| node != host || *index != gpu.index)
                        && !matches!(stop, Some(Stop::DriverMismatch { node }) if node == host);
                    if running {
                        let used = workload.rank_memory_mib(gpu.memory_total_mib);
                        gpu.processes.push(GpuProcess { pid, name: workload.process_name(gpu.index), used_mib: used.saturating_sub(idle.0) });
                        gpu.memory_used_mib = used;
                        let idle_w = f64::from(idle.1 .0 + idle.1 .1) / 2.0;
                        let serving = workload.spec.load.map(|_| serving_readings(workload, now, idle_w, &mut rng));
                        gpu.utilization_pct = serving.map_or(100 - rng.range_u64(0, 3) as u32, |(util, ..)| util);
                        gpu.memory_utilization_pct = match serving {
                            Some((_, memory, _)) => memory,
                            None if waiting => 0,
                            None => 28 + rng.range_u64(0, 14) as u32,
                        };
                        let busy = match serving {
                            Some((.., watts)) => watts,
                            None if waiting => rng.range_u64(180, 230) as u32,
                            None => rng.range_u64(590, 690) as u32,
                        };
                        // A GPU whose clocks are held down draws less, about in step with its clock.
                        let clock_share = if slowed == 0 { 1.0 } else { f64::from(gpu.sm_clock_mhz) / f64::from(gpu.max_sm_clock_mhz.max(1)) };
                        let busy = (f64::from(busy) * clock_share.clamp(0.4, 1.0)) as u32;
                        // A step that would draw more than the limit runs at the limit, its clock
                        // capped: the same rule the pace of the job follows (`Gpu::power_capped_clock_share`).
                        // A server draws what its load asks: capped only when that is over the limit.
                        let capped = !waiting && serving.map_or(gpu.power_capped_clock_share() < 1.0, |(.., watts)| watts > gpu.power_limit_w);
                        gpu.power_draw_w = if capped { gpu.power_limit_w - rng.range_u64(1, 6) as u32 } else { busy.min(gpu.power_limit_w) };
                        gpu.temperature_c = gpu.temperature_c.max(if waiting { 42 } else { 58 } + rng.range_u64(0, 9) as u32);
                        gpu.memory_temperature_c = gpu.temperature_c + 6;
                        gpu.throttle_reasons = slowed | if capped { throttle::SW_POWER_CAP } else { 0 };
                        if slowed == 0 {
                            let paced = workload.pace_at(now as f64).and_then(|pace| pace.as_ref().ok()).map_or(1.0, |pace| pace.clock);
                            let share = match (capped, serving) {
                                (false, _) => 1.0,
                                (true, Some(_)) => paced,
                                (true, None) => gpu.power_capped_clock_share(),
                            };
                            // Clocks move in 15 MHz steps.
                            gpu.sm_clock_mhz = (f64::from(gpu.max_sm_clock_mhz) * share / 15.0) as u32 * 15;
                        }
                    } else {
                        gpu.memory_used_mib = idle.0;
                        gpu.utilization_pct = 0;
                        gpu.memory_utilization_pct = 0;
                        gpu.power_draw_w = rng.range_u64(u64::from(idle.1 .0), u64::from(idle.1 .1)) as u32;
                        gpu.throttle_reasons = slowed | throttle::GPU_IDLE;
                        if slowed == 0 {
                            gpu.sm_clock_mhz = idle.2;
                        }
                    }
                }
            }
            self.workloads[index].holding = running;
        }
        let busy: Vec<String> = self.workloads.iter().filter(|w| w.running_at(now)).flat_map(|w| w.spec.nodes.iter().cloned()).collect();
        let changed: Vec<String> = self.nodes.iter().filter(|n| n.busy != busy.contains(&n.hostname)).map(|n| n.hostname.clone()).collect();
        for host in changed {
            if let Some(node) = self.node_mut(&host) {
                node.busy = !node.busy;
            }
        }
    }

    /// Bytes the jobs' gradient all-reduces have sent (and received)
    /// through the port with `guid` by now: per step, each node's share of
    /// the gradients crosses to the other nodes twice (reduce-scatter and
    /// all-gather), split evenly over the node's rails.
    pub fn job_traffic_bytes(&self, guid: u64) -> u64 {
        self.job_traffic_bytes_until(guid, self.now)
    }

    /// The same, by `until`.
    pub fn job_traffic_bytes_until(&self, guid: u64, until: EpochSeconds) -> u64 {
        let Some(node) = self.node_with_port(guid) else { return 0 };
        self.workloads
            .iter()
            .filter(|w| w.spec.nodes.len() > 1 && w.spec.nodes.contains(&node.hostname) && w.started <= until)
            .map(|w| {
                let steps = f64::from(w.iteration_at(until).saturating_sub(w.resumed_from));
                (steps * w.spec.rail_bytes_per_step(node.hcas.len())) as u64
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Seconds a job's processes have run on `node` since it booted, by now.
    pub fn busy_seconds(&self, node: &super::Node) -> f64 {
        let (from, to) = (node.booted_at, self.now);
        let mut spans: Vec<(EpochSeconds, EpochSeconds)> = self
            .workloads
            .iter()
            .filter(|w| w.spec.nodes.contains(&node.hostname))
            .map(|w| (w.started.max(from), w.end.as_ref().map_or(to, |(end, _)| (*end).min(to))))
            .filter(|(start, end)| start < end)
            .collect();
        crate::sort::sort_by(&mut spans, |a, b| a.cmp(b));
        // Runs on one node never overlap, but count each second once anyway.
        let (mut total, mut reached) = (0, from);
        for (start, end) in spans {
            let start = start.max(reached);
            if end > start {
                total += end - start;
                reached = end;
            }
        }
        total as f64
    }

    /// Joules GPU `gpu` of `node` has drawn since the node booted, by now:
    /// idle at its idle draw, and under each job that held it at what each
    /// of the job's paces draws (as the metrics panel charts it), so the
    /// counter only grows.
    pub fn gpu_energy_joules(&self, node: &super::Node, gpu: u32) -> f64 {
        let (from, to) = (node.booted_at, self.now);
        let idle_w = f64::from(self.preset.gpu.idle_power_w.0 + self.preset.gpu.idle_power_w.1) / 2.0;
        let (mut held_s, mut held_j) = (0.0, 0.0);
        for workload in self.workloads.iter().filter(|w| w.spec.nodes.contains(&node.hostname) && gpu < w.gpus_used()) {
            let end = workload.end.as_ref().map_or(to, |(end, _)| (*end).min(to));
            for (at, (start, pace)) in workload.segments.iter().enumerate() {
                let next = workload.segments.get(at + 1).map_or(end, |(t, _)| (*t).min(end));
                let span = (next.min(end) - (*start).max(from).max(workload.started)).max(0) as f64;
                let watts = match pace {
                    Ok(pace) => match pace.serving {
                        Some(serving) => pace::serving_watts(idle_w, &serving),
                        None => 640.0 * (0.4 + 0.6 * pace.compute_ms / pace.step_ms.max(1e-9)),
                    },
                    // Ranks waiting on a lost peer spin at low power.
                    Err(_) => 205.0,
                };
                held_s += span;
                held_j += span * watts;
            }
        }
        let uptime = (to - from).max(0) as f64;
        idle_w * (uptime - held_s).max(0.0) + held_j
    }

    /// The running workload whose processes hold GPU `gpu` on `node`.
    pub fn workload_on(&self, node: &str, gpu: u32) -> Option<&Workload> {
        self.workloads.iter().find(|w| w.running_at(self.now) && w.rank(node, gpu).is_some())
    }
}

/// A server's GPU at `now`: utilization and memory-bandwidth utilization
/// (%) and the watts it draws before its clock is considered. Decode waits
/// on memory: the GPUs read busy while any request runs, and draw more as
/// the batch's compute grows. Loading, they are mostly idle.
fn serving_readings(workload: &Workload, now: EpochSeconds, idle_w: f64, rng: &mut Rng) -> (u32, u32, u32) {
    let paced = workload.pace_at(now as f64).and_then(|pace| pace.as_ref().ok()).and_then(|pace| pace.serving);
    let (Some((state, _)), Some(serving)) = (workload.server_at(now as f64), paced) else {
        return (rng.range_u64(0, 30) as u32, rng.range_u64(0, 8) as u32, rng.range_u64(110, 160) as u32);
    };
    // As it runs now (its full batch once requests queue).
    let serving = Serving { running: state.running, ..serving };
    let busy = pace::serving_busy(&serving);
    let jitter = rng.unit_f64();
    let util = (busy * (93.0 + jitter * 6.0)).round() as u32;
    let memory = (busy * (55.0 + 35.0 * (1.0 - serving.compute_share) + jitter * 4.0)).round() as u32;
    let watts = (pace::serving_watts(idle_w, &serving) + jitter * 15.0) as u32;
    (util.min(100), memory.min(100), watts)
}

/// Shared storage's read bandwidth to one node when a lab does not say
/// (a parallel file system client over the storage network).
pub const DEFAULT_STORAGE_GB_PER_S: f64 = 4.0;

/// A stop of one of a job's runs (a cancel or a failure) and how long the
/// job took to train again: the restart time an operator keeps, from the
/// stop to the next run's first step (queue wait, start-up, checkpoint load).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restart {
    /// The Slurm job that stopped.
    pub stopped: i64,
    /// The job that trained again; None while none has yet.
    pub resumed: Option<i64>,
    /// Its first step, or `now` while none has come.
    pub at: EpochSeconds,
    pub seconds: i64,
}

/// Each stop among `runs` (one job's, in submission order) and its restart.
pub fn restarts<'w>(runs: impl IntoIterator<Item = &'w Workload>, now: EpochSeconds) -> Vec<Restart> {
    let runs: Vec<&Workload> = runs.into_iter().collect();
    let mut out = Vec::new();
    for (at, run) in runs.iter().enumerate() {
        let Some((ended, End::Cancelled | End::Failed { .. })) = run.end.as_ref() else { continue };
        // The next run that reached its first step: one that failed in its
        // setup (a GPU awaiting a reset, a model that does not fit) did not
        // train again, however long Slurm kept it.
        let trained = runs[at + 1..].iter().find(|next| {
            let ready = next.ready_at();
            next.started >= *ended
                && ready <= now as f64
                && next.end.as_ref().is_none_or(|(end, _)| *end as f64 >= ready)
                && next.pace_at(ready).is_some_and(Result::is_ok)
        });
        out.push(match trained {
            Some(next) => {
                let first_step = next.ready_at().ceil() as EpochSeconds;
                Restart { stopped: run.job_id, resumed: Some(next.job_id), at: first_step, seconds: first_step - ended }
            }
            None => Restart { stopped: run.job_id, resumed: None, at: now, seconds: now - ended },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{preset, ClusterConfig};

    /// A stand-in for the performance model: 1.2345 s a step, 2 s after
    /// the clock passes an hour in, stopped once it passes two.
    fn slowing(cluster: &Cluster, spec: &WorkloadSpec, _storage: f64) -> Result<Pace, Stop> {
        let elapsed = cluster.now - cluster.started_at();
        if elapsed > 7_200 {
            return Err(Stop::NodeDown { node: spec.nodes[0].clone() });
        }
        let step_ms = if elapsed > 3_600 { 2_000.0 } else { 1_234.5 };
        Ok(Pace { compute_ms: step_ms, all_reduce_ms: 0.0, exposed_comm_ms: 0.0, input_ms: 0.0, step_ms, flops: 1e15, gpus: 8, clock: 1.0, serving: None })
    }

    /// The iteration a walk of the timeline up to `now` finds.
    fn walked(workload: &Workload, now: EpochSeconds) -> u32 {
        let events = workload.timeline(now);
        let last = events.iter().rev().find_map(|event| match event {
            Event::Iteration { iteration, .. } | Event::Saved { iteration, .. } => Some(*iteration),
            _ => None,
        });
        last.unwrap_or(workload.resumed_from)
    }

    #[test]
    fn the_index_finds_the_iteration_a_walk_of_the_timeline_finds() {
        let config = ClusterConfig::new(preset::find("hgx-h100").unwrap(), vec!["gpu-001".into()]);
        let mut cluster = Cluster::build(&config, 7);
        let spec = WorkloadSpec { checkpoint_every: 50, steps: 5_000, ..WorkloadSpec::example(8.0) };
        cluster.start_lab_workloads(&[spec], slowing);
        let start = cluster.started_at();
        for hours in [1, 2, 3] {
            cluster.now = start + hours * 3_600 + 1;
            cluster.follow_workloads(cluster.now);
        }
        let workload = &cluster.workloads[0];
        assert!(workload.segments.len() >= 3, "three paces: {:?}", workload.segments.len());
        for now in (start - 3_600..start + 4 * 3_600).step_by(37) {
            assert_eq!(workload.iteration_at(now), walked(workload, now), "at {now}");
        }
        // A cancel ends the walk where it struck.
        let mut cancelled = workload.clone();
        cancelled.end = Some((start + 1_000, End::Cancelled));
        for now in (start..start + 3_600).step_by(11) {
            assert_eq!(cancelled.iteration_at(now), walked(&cancelled, now), "cancelled, at {now}");
        }
    }
}
