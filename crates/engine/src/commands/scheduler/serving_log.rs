//! A serving job's log (`slurm-JOBID.out`): vLLM 0.34's OpenAI-compatible
//! server as its batch script starts it, from its start-up to its stats
//! every 10 s and, when a fault strikes, the engine's death.
//!
//! No capture of vLLM is in `shared/reference`: the layout follows its
//! source (v0.34.0): `logger.py`'s format `(%(process name)s pid=%(pid)d)
//! %(levelname)s %(asctime)s [%(file)s:%(line)d] %(message)s` with
//! `%m-%d %H:%M:%S` times; the messages and their number formats in
//! `startup.py`, `gpu_worker.py`, `kv_cache_utils.py` (thousands
//! separators), `core.py`, `entry.py`, `launcher.py`, and the stats line of
//! `v1/metrics/loggers.py` (`%.1f` throughputs, `%d` requests, `%.1f%%`
//! cache usage). Uvicorn's own lines carry no prefix: vLLM hands it a bound
//! socket, so it prints no "Uvicorn running on" line. The log lines quoted
//! in vllm-project/vllm issues 38820 and 43295 have the same shape.

use crate::commands::monitoring::vllm::PORT;
use crate::model::time::civil;
use crate::model::workload::pace::{python_round, serving_memory, usable_memory_mib, BLOCK_TOKENS, GPU_MEMORY_UTILIZATION, MAX_NUM_BATCHED_TOKENS};
use crate::model::workload::{Event, Stop, Workload, ENGINE_INIT_SECONDS, PROFILE_SECONDS};
use crate::model::Cluster;
use crate::rng::Rng;

/// vLLM's release the cluster's servers run.
pub const VLLM_VERSION: &str = "0.34.0";
/// `VLLM_LOG_STATS_INTERVAL`.
const STATS_INTERVAL_S: f64 = 10.0;
/// The most stats lines one read of the log renders: the last ones.
const MAX_STATS_LINES: usize = 5_000;

/// One log line: `(APIServer pid=123) INFO 12-05 09:54:45 [loggers.py:335] message`.
/// Each line of a message several lines long carries the prefix.
fn line(process: &str, pid: u32, level: &str, at: i64, source: &str, message: &str) -> String {
    let c = civil(at);
    let prefix = format!("({process} pid={pid}) {level} {:02}-{:02} {:02}:{:02}:{:02} [{source}] ", c.month, c.day, c.hour, c.minute, c.second);
    message.split('\n').map(|part| format!("{prefix}{part}\n")).collect()
}

/// Python's `f"{n:,}"`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (at, c) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The log's text at `now`.
pub fn render(cluster: &Cluster, workload: &Workload, now: i64) -> String {
    let spec = &workload.spec;
    let (api_pid, engine_pid) = workload.server_pids();
    let events = workload.timeline(now);
    // A fault, or a cancel, before it took requests cuts its start-up short:
    // each line of the start-up is written only up to then.
    let cutoff = match events.first() {
        Some(Event::Stopped { at, .. } | Event::Cancelled { at }) => (*at).min(now),
        _ => now,
    };
    let by_cutoff = |at: i64, text: String| if at <= cutoff { text } else { String::new() };
    let api = |at: i64, source: &str, message: &str| by_cutoff(at, line("APIServer", api_pid, "INFO", at, source, message));
    let engine = |at: i64, level: &str, source: &str, message: &str| by_cutoff(at, line("EngineCore", engine_pid, level, at, source, message));
    let worker = |gpu: u32, at: i64, level: &str, source: &str, message: &str| {
        if spec.tensor > 1 {
            by_cutoff(at, line(&format!("Worker_TP{gpu}"), workload.pid(0, gpu), level, at, source, message))
        } else {
            engine(at, level, source, message)
        }
    };
    let mut rng = Rng::derive(workload.job_id as u64, &["vllm"]);
    let t0 = workload.started;
    let mut out = String::new();
    let model = &spec.dataset;
    out += &api(t0 + 7, "startup.py:38", &format!("vLLM server version {VLLM_VERSION}, serving model {model}"));
    let args = format!(
        "non-default args: {{'model_tag': '{model}', 'host': '0.0.0.0', 'model': '{model}', 'max_model_len': {}, 'served_model_name': ['{}'], 'tensor_parallel_size': {}, 'gpu_memory_utilization': {}, 'block_size': {BLOCK_TOKENS}, 'max_num_batched_tokens': {MAX_NUM_BATCHED_TOKENS}, 'max_num_seqs': {}}}",
        spec.seq_len,
        spec.served_name(),
        spec.tensor,
        spec.load.map_or(GPU_MEMORY_UTILIZATION, |load| load.memory_share()),
        spec.load.map_or(0, |load| load.max_num_seqs)
    );
    out += &api(t0 + 7, "startup.py:96", &args);
    // vLLM checks its configuration before it builds the engine: the
    // exception ends the API server, its traceback's last line on stderr.
    let refused = match events.first() {
        Some(Event::Stopped { at, stop: Stop::Arguments { message }, .. }) => Some((*at, message.clone())),
        _ => None,
    };
    out += &api(t0 + 9, "model.py:761", "Resolved architecture: LlamaForCausalLM");
    out += &api(t0 + 9, "model.py:2214", &format!("Using max model len {}", spec.seq_len));
    if let Some((at, message)) = refused {
        out += &by_cutoff(at, format!("ValueError: {message}\n"));
        return out;
    }
    out += &api(t0 + 9, "scheduler.py:354", &format!("Chunked prefill is enabled with max_num_batched_tokens={MAX_NUM_BATCHED_TOKENS}."));
    let config = format!(
        "Initializing a V1 LLM engine (v{VLLM_VERSION}) with config: model='{model}', tensor_parallel_size={}, max_seq_len={}, dtype=torch.bfloat16",
        spec.tensor, spec.seq_len
    );
    out += &engine(t0 + 12, "INFO", "core.py:153", &config);
    for gpu in 0..spec.tensor {
        let message = format!(
            "world_size={} rank={gpu} local_rank={gpu} distributed_init_method=tcp://127.0.0.1:{} backend=nccl",
            spec.tensor,
            40_000 + workload.pid_base % 20_000
        );
        out += &worker(gpu, t0 + 17, "INFO", "parallel_state.py:1935", &message);
    }
    let load_s = workload.weights_load_seconds();
    let loaded = workload.weights_loaded_at().floor() as i64;
    let gpu = spec.nodes.first().and_then(|host| cluster.node(host)).and_then(|node| node.gpus.first());
    let usable = gpu.map_or(cluster.preset.gpu.memory_total_mib, |gpu| usable_memory_mib(cluster, gpu));
    let memory = serving_memory(spec, usable);
    // The model did not fit: the first worker runs out of memory loading it.
    if let Some(Event::Stopped { at, stop: Stop::OutOfMemory { .. }, .. }) = events.first() {
        let at = *at;
        let capacity = usable as f64;
        let tried = 1_002.0;
        let message = super::job_log::out_of_memory(capacity, tried, 300.0 + rng.unit_f64() * 600.0, 520.0, 40.0 + rng.unit_f64() * 200.0);
        out += &engine(at, "ERROR", "core.py:1757", &format!("EngineCore failed to start.\n{message}"));
        out += &start_failed(api_pid, at + 1, now);
        return out;
    }
    out += &worker(0, loaded, "INFO", "default_loader.py:543", &format!("Loading weights took {:.2} seconds", load_s - 0.9));
    for gpu in 0..spec.tensor {
        let seconds = load_s + 0.21 + rng.unit_f64() * 0.4;
        let message = format!("Model loading took {} GiB memory and {seconds:.6} seconds", python_round(memory.weights_gib));
        out += &worker(gpu, loaded, "INFO", "model_runner.py:441", &message);
    }
    let compilation = PROFILE_SECONDS - 3.0 + rng.unit_f64() * 2.5;
    let profiled = (workload.weights_loaded_at() + PROFILE_SECONDS).ceil() as i64;
    out += &worker(0, profiled, "INFO", "gpu_worker.py:795", &format!("Available KV cache memory: {} GiB", python_round(memory.kv_cache_gib)));
    if let Some(Event::Stopped { at, stop: Stop::CacheMemory { message }, .. }) = events.first() {
        let at = *at;
        out += &engine(at, "ERROR", "core.py:1757", &format!("EngineCore failed to start.\nValueError: {message}"));
        out += &start_failed(api_pid, at + 1, now);
        return out;
    }
    let concurrency = memory.kv_tokens as f64 / f64::from(spec.seq_len.max(1));
    let kv = format!(
        "GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {concurrency:.2}x",
        thousands(memory.kv_tokens),
        thousands(u64::from(spec.seq_len))
    );
    out += &engine(profiled + 1, "INFO", "kv_cache_utils.py:1168", &kv);
    let ready = workload.ready_at().ceil() as i64;
    let engine_ready = ready - crate::model::workload::SERVER_UP_SECONDS as i64;
    let capture = (engine_ready - profiled - 2).max(1);
    for gpu in 0..spec.tensor {
        let message = format!("Graph capturing finished in {capture} secs, took {:.2} GiB", 0.49 + rng.unit_f64() * 0.12);
        out += &worker(gpu, engine_ready - 1, "INFO", "model_runner.py:1216", &message);
    }
    let init = ENGINE_INIT_SECONDS + load_s - 0.6 + rng.unit_f64();
    let message = format!("init engine (profile, create kv cache, warmup model) took {init:.2} s (compilation: {compilation:.2} s)");
    out += &engine(engine_ready, "INFO", "core.py:451", &message);
    out += &api(ready, "entry.py:135", "Supported tasks: ['generate']");
    out += &api(ready, "entry.py:139", &format!("Starting vLLM server on http://0.0.0.0:{PORT}"));
    out += &api(ready, "launcher.py:188", "Available routes are:");
    for (route, methods) in ROUTES {
        out += &api(ready, "launcher.py:197", &format!("Route: {route}, Methods: {methods}"));
    }
    out += &by_cutoff(
        ready,
        format!("INFO:     Started server process [{api_pid}]\nINFO:     Waiting for application startup.\nINFO:     Application startup complete.\n"),
    );
    out += &stats_lines(workload, ready, now, &mut rng);
    for event in &events {
        match event {
            Event::Stopped { at, stop, ends } => out += &engine_died(workload, *at, stop, *ends, now),
            Event::Cancelled { at } if *at <= now => out += &shut_down(workload, *at, true, (*at as f64) >= workload.ready_at()),
            _ => {}
        }
    }
    out
}

/// The API server's line when its engine failed to start (by `now`).
fn start_failed(pid: u32, at: i64, now: i64) -> String {
    if at > now {
        return String::new();
    }
    line("APIServer", pid, "ERROR", at, "entry.py:139", "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
}

/// The routes the API server lists, in its order (methods as its set
/// printed them).
const ROUTES: &[(&str, &str)] = &[
    ("/openapi.json", "HEAD, GET"),
    ("/docs", "HEAD, GET"),
    ("/redoc", "HEAD, GET"),
    ("/health", "GET"),
    ("/load", "GET"),
    ("/version", "GET"),
    ("/tokenize", "POST"),
    ("/detokenize", "POST"),
    ("/v1/models", "GET"),
    ("/v1/chat/completions", "POST"),
    ("/v1/completions", "POST"),
    ("/metrics", "GET"),
];

/// The stats line every interval from `ready` to `now` (or the engine's
/// death), the last [`MAX_STATS_LINES`] of them. An idle server logs one
/// line of zeros and then nothing (the line goes to DEBUG).
fn stats_lines(workload: &Workload, ready: i64, now: i64, rng: &mut Rng) -> String {
    let Some(load) = workload.load() else { return String::new() };
    let end = workload.end.as_ref().map_or(now, |(at, _)| (*at).min(now)) as f64;
    let stopped_at = workload.segments.iter().find(|(_, pace)| pace.is_err()).map_or(f64::INFINITY, |(at, _)| *at as f64);
    let limit = end.min(stopped_at);
    let first = ready as f64 + STATS_INTERVAL_S;
    if limit < first || load.requests_per_s <= 0.0 {
        return String::new();
    }
    let count = ((limit - first) / STATS_INTERVAL_S).floor() as usize + 1;
    let skip = count.saturating_sub(MAX_STATS_LINES);
    let (pid, _) = workload.server_pids();
    let mut out = String::new();
    // The logger's loop drifts a few milliseconds an interval.
    let drift = 0.0031 + rng.unit_f64() * 0.002;
    for index in skip..count {
        let at = first + index as f64 * (STATS_INTERVAL_S + drift);
        if at > limit {
            break;
        }
        let Some((state, served)) = workload.server_at(at) else { continue };
        let before = workload.served_by(at - STATS_INTERVAL_S);
        let mut noise = Rng::derive(workload.job_id as u64, &["stats", &index.to_string()]);
        let mut vary = |value: f64, spread: f64| (value * (1.0 + (noise.unit_f64() - 0.5) * spread)).max(0.0);
        let prompt = vary((served.prompt_tokens - before.prompt_tokens) / STATS_INTERVAL_S, 0.12);
        let generation = vary((served.generation_tokens - before.generation_tokens) / STATS_INTERVAL_S, 0.06);
        let running = vary(state.running, 0.2).round();
        let waiting = if state.waiting > 0.5 { vary(state.waiting, 0.05).round() } else { 0.0 };
        let kv = (state.kv_usage * 100.0 * (running / state.running.max(1e-9)).min(1.02)).min(100.0);
        let message = format!(
            "Engine 000: Avg prompt throughput: {prompt:.1} tokens/s, Avg generation throughput: {generation:.1} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {kv:.1}%, Prefix cache hit rate: 0.0%"
        );
        out += &line("APIServer", pid, "INFO", at.floor() as i64, "loggers.py:335", &message);
    }
    out
}

/// A GPU under the server failed at `at`: the worker's CUDA error, the
/// engine's death, the API server's, and its shutdown at `ends`.
fn engine_died(workload: &Workload, at: i64, stop: &Stop, ends: i64, now: i64) -> String {
    let spec = &workload.spec;
    let (api_pid, engine_pid) = workload.server_pids();
    let mut out = String::new();
    if at > now {
        return out;
    }
    let (gpu, cuda) = match stop {
        Stop::GpuLost { gpu, .. } | Stop::GpuHung { gpu, .. } => (*gpu, "unspecified launch failure"),
        Stop::GpuEcc { gpu, .. } => (*gpu, "uncorrectable ECC error encountered"),
        Stop::NodeDown { .. } => return out,
        _ => (0, "unspecified launch failure"),
    };
    let error = match stop {
        // CUDA cannot start at all: PyTorch's lazy init reports the runtime's error 803.
        Stop::DriverMismatch { .. } => "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination".to_string(),
        _ => format!("torch.AcceleratorError: CUDA error: {cuda}\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"),
    };
    // Before it took requests, the engine fails to start.
    if (at as f64) < workload.ready_at() {
        out += &line("EngineCore", engine_pid, "ERROR", at, "core.py:1757", &format!("EngineCore failed to start.\n{error}"));
        out += &start_failed(api_pid, at + 1, now);
        return out;
    }
    if spec.tensor > 1 {
        out += &line(
            &format!("Worker_TP{gpu}"),
            workload.pid(0, gpu),
            "ERROR",
            at,
            "multiproc_executor.py:1223",
            &format!("WorkerProc hit an exception.\n{error}"),
        );
        let failed = format!("EngineCore encountered a fatal error.\nRuntimeError: Worker failed with error 'CUDA error: {cuda}', please check the stack trace above for the root cause");
        out += &line("EngineCore", engine_pid, "ERROR", at, "core.py:1759", &failed);
    } else {
        out += &line("EngineCore", engine_pid, "ERROR", at, "core.py:1759", &format!("EngineCore encountered a fatal error.\n{error}"));
    }
    let dead = "AsyncLLM output_handler failed.\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.";
    out += &line("APIServer", api_pid, "ERROR", at, "async_llm.py:957", dead);
    if ends <= now {
        out += &shut_down(workload, ends, false, true);
    }
    out
}

/// For a cancel Slurm's line, and uvicorn's shutdown once it was serving.
fn shut_down(workload: &Workload, at: i64, cancelled: bool, serving: bool) -> String {
    let mut out = String::new();
    if cancelled {
        let first = workload.spec.nodes.first().map_or("", String::as_str);
        out += &format!("slurmstepd: error: *** JOB {} ON {first} CANCELLED AT {} ***\n", workload.job_id, super::slurm::timestamp(at));
    }
    if serving {
        let (api_pid, _) = workload.server_pids();
        out += &format!("INFO:     Shutting down\nINFO:     Waiting for application shutdown.\nINFO:     Application shutdown complete.\nINFO:     Finished server process [{api_pid}]\n");
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::{Shell, TWO_NODE_LAB};

    /// The two-node lab with a server of `params` over `tensor` GPUs of
    /// gpu-002, and `more` (faults, other keys) after it.
    pub(crate) fn server(params: &str, tensor: u32, more: &str) -> Shell {
        let text = format!(
            "{TWO_NODE_LAB}\n[[jobs]]\nname = \"chat\"\nkind = \"serving\"\nparams = \"{params}\"\ntensor = {tensor}\nnodes = [\"gpu-002\"]\nrequest_rate = 6.0\nprompt_tokens = 1000\noutput_tokens = 200\n{more}"
        );
        let lab = crate::load(&text).expect("the serving lab is valid");
        Shell::new(lab.instantiate(1), "gpu-001")
    }

    fn log(shell: &mut Shell) -> String {
        shell.run("cat ~/slurm-*.out").stdout()
    }

    #[test]
    fn a_server_logs_its_start_in_vllms_format_then_its_stats_every_ten_seconds() {
        let mut shell = server("8B", 2, "");
        let text = log(&mut shell);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("(APIServer pid="), "{}", lines[0]);
        assert!(
            lines[0].contains(" INFO ") && lines[0].ends_with("[startup.py:38] vLLM server version 0.34.0, serving model /lustre/models/Llama-3.1-8B-Instruct"),
            "{}",
            lines[0]
        );
        // `%m-%d %H:%M:%S` after the level.
        let stamp = lines[0].split(" INFO ").nth(1).unwrap_or("");
        assert!(stamp.as_bytes()[2] == b'-' && stamp.as_bytes()[5] == b' ' && stamp.as_bytes()[8] == b':', "{stamp}");
        for wanted in [
            "[model_runner.py:441] Model loading took 7.48 GiB memory and ",
            "[gpu_worker.py:795] Available KV cache memory: ",
            " tokens, Maximum concurrency for 8,192 tokens per request: ",
            "[core.py:451] init engine (profile, create kv cache, warmup model) took ",
            "[entry.py:139] Starting vLLM server on http://0.0.0.0:8000",
            "[launcher.py:197] Route: /metrics, Methods: GET",
        ] {
            assert!(text.contains(wanted), "no {wanted:?} in\n{text}");
        }
        assert!(text.contains("(Worker_TP1 pid=") && !text.contains("Worker_TP2"), "{text}");
        assert!(text.contains("\nINFO:     Started server process ["), "uvicorn's lines carry no prefix");
        let stats: Vec<&&str> = lines.iter().filter(|line| line.contains("[loggers.py:335] Engine 000: ")).collect();
        assert!(stats.len() > 100, "a stats line every 10 s for half an hour: {}", stats.len());
        let line = stats[stats.len() / 2];
        let fields: Vec<&str> = line.split("Engine 000: ").nth(1).unwrap_or("").split(", ").collect();
        assert_eq!(fields.len(), 6, "{line}");
        assert!(fields[0].starts_with("Avg prompt throughput: ") && fields[0].ends_with(" tokens/s"), "{line}");
        assert!(fields[2].starts_with("Running: ") && fields[2].ends_with(" reqs"), "{line}");
        assert!(fields[4].starts_with("GPU KV cache usage: ") && fields[4].ends_with('%'), "{line}");
        // 6 requests a second of 1,000 prompt tokens: about 6,000 tokens/s.
        let prompt: f64 = fields[0].trim_start_matches("Avg prompt throughput: ").trim_end_matches(" tokens/s").parse().unwrap_or(0.0);
        assert!((5_000.0..7_000.0).contains(&prompt), "{line}");
    }

    #[test]
    fn a_lost_gpu_kills_the_engine_and_the_server_exits() {
        let mut shell = server("8B", 2, "[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = 1\nat = \"-5m\"\n");
        let text = log(&mut shell);
        assert!(text.contains("(Worker_TP1 pid="), "{text}");
        assert!(text.contains("[multiproc_executor.py:1223] WorkerProc hit an exception."), "{text}");
        assert!(text.contains("torch.AcceleratorError: CUDA error: unspecified launch failure"), "{text}");
        assert!(text.contains("[core.py:1759] EngineCore encountered a fatal error."), "{text}");
        assert!(text.contains("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."), "{text}");
        assert!(text.ends_with("INFO:     Finished server process [".to_string().as_str()) || text.contains("INFO:     Finished server process ["), "{text}");
        // No stats after the engine died.
        let died = text.find("WorkerProc hit an exception").unwrap_or(0);
        assert!(!text[died..].contains("Engine 000:"), "{text}");
        assert!(shell.run("sacct -X -n -o State").stdout().contains("FAILED"));
        assert_eq!(shell.run("curl -s gpu-002:8000/health").status, 7, "nothing listens once it exited");
    }

    #[test]
    fn a_model_too_big_for_its_gpus_fails_loading_and_a_cache_too_small_fails_profiling() {
        let mut shell = server("70B", 1, "");
        let text = log(&mut shell);
        assert!(text.contains("[core.py:1757] EngineCore failed to start."), "{text}");
        assert!(text.contains("torch.OutOfMemoryError: CUDA out of memory."), "{text}");
        assert!(text.contains("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"), "{text}");
        assert!(!text.contains("Model loading took"), "{text}");
        let mut shell = server("70B", 2, "seq_len = 131072\n");
        let text = log(&mut shell);
        assert!(text.contains("Model loading took 65.71 GiB memory"), "{text}");
        assert!(text.contains("ValueError: To serve at least one request with the model's max seq len (131072), (20.0 GiB KV cache is needed"), "{text}");
        // Fewer tokens a request, or more GPUs, fit: the script's flags take effect on the next sbatch.
        let out = shell.run("sed -i 's/--max-model-len 131072/--max-model-len 16384/' ~/chat.sbatch && sbatch ~/chat.sbatch && sleep 180 && squeue -h -o %T");
        assert!(out.stdout().ends_with("RUNNING\n"), "{}", out.stdout());
        assert_eq!(shell.run("curl -s -o /dev/null -w '%{http_code}' gpu-002:8000/health").stdout(), "200");
    }

    #[test]
    fn python_rounds_and_groups_as_vllm_prints() {
        assert_eq!(python_round(15.0), "15.0");
        assert_eq!(python_round(14.956), "14.96");
        assert_eq!(python_round(7.4801), "7.48");
        assert_eq!(thousands(446_304), "446,304");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
    }
}
