//! What a vLLM server answers on its port (8000) once it takes requests:
//! `/metrics` in Prometheus' text format, `/health`, `/version`,
//! `/v1/models`, and FastAPI's JSON errors elsewhere. Uvicorn writes the
//! responses ([`Response::uvicorn`]).
//!
//! The metrics are vLLM 0.34's (`v1/metrics/loggers.py`,
//! `PrometheusStatLogger`): names, help texts, the `engine` and
//! `model_name` labels and the histogram buckets as its source declares
//! them, exposed as prometheus_client writes a registry (labels sorted,
//! values as Go floats, each counter with `_total` and a `_created`
//! gauge, each histogram's buckets, `_count` and `_sum`). The values come
//! from the server's state over its run ([`Workload::server_at`]); a
//! histogram's counts from the state over time, each request's latency
//! spread about it (log-normally) as lengths and arrivals vary. The
//! Python runtime's and the HTTP instrumentator's families are left out.

use std::fmt::Write;

use crate::commands::host::curl::Response;
use crate::commands::scheduler::serving_log::VLLM_VERSION;
use crate::model::workload::{Kind, Workload};
use crate::model::{Cluster, Node};

pub const PORT: u16 = 8000;

/// prometheus_client's exposition type.
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// A server's run is summed for its histograms in pieces of this many
/// seconds from when it took requests (and cut where its pace changed),
/// each at the state it began with: a fixed grid, so a count only grows.
const PIECE_SECONDS: f64 = 300.0;
/// At most this many pieces (two weeks of a run); the last takes the rest.
const MAX_PIECES: usize = 4_096;

/// The serving job whose API server listens on `node` at `now`.
pub fn server_on<'c>(cluster: &'c Cluster, node: &Node) -> Option<&'c Workload> {
    let now = cluster.now;
    // Its processes went down with the node.
    if !node.up(now) {
        return None;
    }
    cluster.workloads.iter().find(|w| {
        w.spec.kind == Kind::Serving
            && w.spec.nodes.first() == Some(&node.hostname)
            && w.ready_at() <= now as f64
            && w.end.as_ref().is_none_or(|(end, _)| now < *end)
    })
}

/// The answer for `path`, or None when nothing listens on the port.
pub fn serve(cluster: &Cluster, node: &Node, path: &str) -> Option<Response> {
    let workload = server_on(cluster, node)?;
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let now = cluster.now;
    // Between the engine's death and the server's exit, it answers unhealthy.
    let dead = workload.segments.iter().any(|(at, pace)| pace.is_err() && *at <= now);
    let json = |status: u16, body: String| Response::uvicorn(status, "application/json", body);
    Some(match path {
        "/health" if dead => Response::uvicorn(503, "", String::new()),
        "/health" => Response::uvicorn(200, "", String::new()),
        "/metrics" => Response::uvicorn(200, TEXT, metrics(workload, now)),
        "/version" => json(200, format!("{{\"version\":\"{VLLM_VERSION}\"}}")),
        "/v1/models" => json(200, models(workload)),
        "/v1/completions" | "/v1/chat/completions" | "/tokenize" | "/detokenize" => json(405, "{\"detail\":\"Method Not Allowed\"}".to_string()),
        _ => json(404, "{\"detail\":\"Not Found\"}".to_string()),
    })
}

/// `/v1/models`: the one model it serves.
fn models(workload: &Workload) -> String {
    let name = crate::commands::go_format::json_string(workload.spec.served_name(), false);
    let root = crate::commands::go_format::json_string(&workload.spec.dataset, false);
    let created = workload.ready_at() as i64;
    let permission = format!("modelperm-{:016x}", crate::rng::Rng::derive(workload.job_id as u64, &["modelperm"]).next_u64());
    format!(
        "{{\"object\":\"list\",\"data\":[{{\"id\":{name},\"object\":\"model\",\"created\":{created},\"owned_by\":\"vllm\",\"root\":{root},\"parent\":null,\"max_model_len\":{},\"permission\":[{{\"id\":\"{permission}\",\"object\":\"model_permission\",\"created\":{created},\"allow_create_engine\":false,\"allow_sampling\":true,\"allow_logprobs\":true,\"allow_search_indices\":false,\"allow_view\":true,\"allow_fine_tuning\":false,\"organization\":\"*\",\"group\":null,\"is_blocking\":false}}]}}]}}",
        workload.spec.seq_len
    )
}

/// A label's value in the text format: backslash, quote and newline escaped.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// prometheus_client's `floatToGoString` (not Go's own formatting,
/// `node_exporter::go_float`): Python's repr, with a large
/// value's exponent written Go's way (`1.7e+09`).
fn float_to_go_string(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if value.is_nan() {
        return "NaN".to_string();
    }
    let repr = python_repr(value);
    match repr.find('.') {
        Some(dot) if value > 0.0 && dot > 6 && !repr.contains('e') => {
            let mantissa = format!("{}.{}{}", &repr[..1], &repr[1..dot], &repr[dot + 1..]);
            format!("{}e+0{}", mantissa.trim_end_matches(['0', '.']), dot - 1)
        }
        _ => repr,
    }
}

/// Python's `repr` of a float: the shortest digits that read back, `.0`
/// on a whole number, an exponent from 1e16 up and below 1e-4.
fn python_repr(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-4..1e16).contains(&magnitude) {
        let text = format!("{value:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    let text = format!("{value}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

/// The error function (Abramowitz and Stegun 7.1.26, within 1.5e-7).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let value = 1.0 - poly * (-x * x).exp();
    if x < 0.0 {
        -value
    } else {
        value
    }
}

/// The share of a log-normal spread about `median` at most `bound`.
fn below(bound: f64, median: f64, sigma: f64) -> f64 {
    if median <= 0.0 {
        return 1.0;
    }
    0.5 * (1.0 + erf((bound / median).ln() / (sigma * std::f64::consts::SQRT_2)))
}

const TTFT_BUCKETS: &[f64] =
    &[0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL_BUCKETS: &[f64] = &[0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const LATENCY_BUCKETS: &[f64] = &[0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

/// vLLM's request-length buckets: 1, 2, 5, 10, ... up to `max_model_len`.
fn length_buckets(max_model_len: u32) -> Vec<f64> {
    let mut out = Vec::new();
    let mut scale = 1.0;
    'grow: loop {
        for step in [1.0, 2.0, 5.0] {
            let bound = step * scale;
            if bound > f64::from(max_model_len) {
                break 'grow;
            }
            out.push(bound);
        }
        scale *= 10.0;
    }
    out
}

/// A histogram being filled: counts per bucket, its count and its sum.
struct Histogram {
    bounds: Vec<f64>,
    counts: Vec<f64>,
    count: f64,
    sum: f64,
}

impl Histogram {
    fn new(bounds: &[f64]) -> Histogram {
        Histogram { bounds: bounds.to_vec(), counts: vec![0.0; bounds.len()], count: 0.0, sum: 0.0 }
    }

    /// `n` observations spread log-normally about `median`.
    fn observe(&mut self, n: f64, median: f64, sigma: f64) {
        if n <= 0.0 {
            return;
        }
        for (bound, count) in self.bounds.iter().zip(self.counts.iter_mut()) {
            *count += n * below(*bound, median, sigma);
        }
        self.count += n;
        self.sum += n * median * (sigma * sigma / 2.0).exp();
    }
}

/// The families, in the order vLLM registers them.
fn metrics(workload: &Workload, now: i64) -> String {
    let Some(load) = workload.load() else { return String::new() };
    let at = now as f64;
    let ready = workload.ready_at();
    let state = workload.server_at(at).map(|(state, _)| state);
    let served = workload.served_by(at);
    let labels = format!("engine=\"0\",model_name=\"{}\"", label_value(workload.spec.served_name()));
    let created = float_to_go_string(ready.floor() + 0.25);
    let mut ttft = Histogram::new(TTFT_BUCKETS);
    let mut itl = Histogram::new(ITL_BUCKETS);
    let mut e2e = Histogram::new(LATENCY_BUCKETS);
    let mut queue = Histogram::new(LATENCY_BUCKETS);
    let lengths = length_buckets(workload.spec.seq_len);
    let mut prompt_lengths = Histogram::new(&lengths);
    let mut output_lengths = Histogram::new(&lengths);
    // Each piece's requests observed at the state it began with.
    let mut cuts: Vec<f64> = (0..MAX_PIECES).map(|piece| ready + piece as f64 * PIECE_SECONDS).take_while(|cut| *cut < at).collect();
    cuts.extend(workload.segments.iter().map(|(from, _)| *from as f64).filter(|from| *from > ready && *from < at));
    crate::sort::sort_by(&mut cuts, |a, b| a.total_cmp(b));
    cuts.dedup();
    let mut before = workload.served_by(ready);
    for (index, start) in cuts.iter().enumerate() {
        let end = cuts.get(index + 1).copied().unwrap_or(at);
        let Some((state, _)) = workload.server_at((start + 0.5).min(end)) else { continue };
        let served = workload.served_by(end);
        let requests = (served.requests - before.requests).max(0.0);
        let tokens = (served.generation_tokens - before.generation_tokens).max(0.0);
        before = served;
        let wait = (state.first_token_s - state.step_ms / 1e3).max(0.0);
        let queued = (state.waiting / state.finished_rps.max(1e-6)).max(0.002);
        ttft.observe(requests, state.first_token_s, 0.35);
        itl.observe(tokens - requests, state.step_ms / 1e3, 0.12);
        e2e.observe(requests, wait + f64::from(load.output_tokens) * state.step_ms / 1e3, 0.55);
        queue.observe(requests, queued, 0.4);
        prompt_lengths.observe(requests, f64::from(load.prompt_tokens), 0.6);
        output_lengths.observe(requests, f64::from(load.output_tokens), 0.5);
    }
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str, lines: &[(String, f64)]| {
        let _ = writeln!(out, "# HELP vllm:{name} {help}\n# TYPE vllm:{name} gauge");
        for (extra, value) in lines {
            let _ = writeln!(out, "vllm:{name}{{{extra}}} {}", float_to_go_string(*value));
        }
    };
    let counter = |out: &mut String, name: &str, help: &str, lines: &[(String, f64)]| {
        let _ = writeln!(out, "# HELP vllm:{name}_total {help}\n# TYPE vllm:{name}_total counter");
        for (extra, value) in lines {
            let _ = writeln!(out, "vllm:{name}_total{{{extra}}} {}", float_to_go_string(value.floor()));
        }
        let _ = writeln!(out, "# HELP vllm:{name}_created {help}\n# TYPE vllm:{name}_created gauge");
        for (extra, _) in lines {
            let _ = writeln!(out, "vllm:{name}_created{{{extra}}} {created}");
        }
    };
    let histogram = |out: &mut String, name: &str, help: &str, h: &Histogram| {
        let _ = writeln!(out, "# HELP vllm:{name} {help}\n# TYPE vllm:{name} histogram");
        let (engine, model) = labels.split_once(',').unwrap_or((&labels, ""));
        for (bound, count) in h.bounds.iter().zip(&h.counts) {
            let _ = writeln!(out, "vllm:{name}_bucket{{{engine},le=\"{}\",{model}}} {}", float_to_go_string(*bound), float_to_go_string(count.floor()));
        }
        let _ = writeln!(out, "vllm:{name}_bucket{{{engine},le=\"+Inf\",{model}}} {}", float_to_go_string(h.count.floor()));
        let _ = writeln!(out, "vllm:{name}_count{{{labels}}} {}", float_to_go_string(h.count.floor()));
        let _ = writeln!(out, "vllm:{name}_sum{{{labels}}} {}", float_to_go_string(h.sum));
        let _ = writeln!(out, "# HELP vllm:{name}_created {help}\n# TYPE vllm:{name}_created gauge\nvllm:{name}_created{{{labels}}} {created}");
    };
    let one = |value: f64| vec![(labels.clone(), value)];
    let running = state.map_or(0.0, |s| s.running.round());
    let waiting = state.map_or(0.0, |s| s.waiting.round());
    gauge(&mut out, "num_requests_running", "Number of requests in model execution batches.", &one(running));
    gauge(&mut out, "num_requests_waiting", "Number of requests waiting to be processed.", &one(waiting));
    let (engine, model) = labels.split_once(',').unwrap_or((&labels, ""));
    gauge(
        &mut out,
        "num_requests_waiting_by_reason",
        "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
        &[(format!("{engine},{model},reason=\"capacity\""), waiting), (format!("{engine},{model},reason=\"deferred\""), 0.0)],
    );
    gauge(
        &mut out,
        "engine_sleep_state",
        "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
        &[
            (format!("{labels},sleep_state=\"awake\""), 1.0),
            (format!("{labels},sleep_state=\"weights_offloaded\""), 0.0),
            (format!("{labels},sleep_state=\"discard_all\""), 0.0),
        ],
    );
    gauge(&mut out, "kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", &one(state.map_or(0.0, |s| (s.kv_usage * 1e4).round() / 1e4)));
    counter(&mut out, "prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", &one(served.prompt_tokens));
    counter(&mut out, "prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", &one(0.0));
    counter(&mut out, "num_preemptions", "Cumulative number of preemption from the engine.", &one(0.0));
    counter(&mut out, "prompt_tokens", "Number of prefill tokens processed.", &one(served.prompt_tokens));
    counter(&mut out, "generation_tokens", "Number of generation tokens processed.", &one(served.generation_tokens));
    // Most chat requests end at a stop token; some at their max_tokens.
    let reasons = [("stop", 0.88), ("length", 0.12), ("abort", 0.0), ("error", 0.0), ("repetition", 0.0)];
    let finished: Vec<(String, f64)> =
        reasons.iter().map(|(reason, share)| (format!("{engine},finished_reason=\"{reason}\",{model}"), served.requests * share)).collect();
    counter(&mut out, "request_success", "Count of successfully processed requests.", &finished);
    histogram(&mut out, "request_prompt_tokens", "Number of prefill tokens processed.", &prompt_lengths);
    histogram(&mut out, "request_generation_tokens", "Number of generation tokens processed.", &output_lengths);
    histogram(&mut out, "time_to_first_token_seconds", "Histogram of time to first token in seconds.", &ttft);
    histogram(&mut out, "inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", &itl);
    histogram(&mut out, "e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", &e2e);
    histogram(&mut out, "request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", &queue);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_prometheus_client_writes_them() {
        assert_eq!(float_to_go_string(5.0), "5.0");
        assert_eq!(float_to_go_string(0.001), "0.001");
        assert_eq!(float_to_go_string(2560.0), "2560.0");
        assert_eq!(float_to_go_string(1234567.0), "1.234567e+06");
        assert_eq!(float_to_go_string(1_764_928_800.25), "1.76492880025e+09");
        assert_eq!(float_to_go_string(f64::INFINITY), "+Inf");
        assert_eq!(float_to_go_string(0.00001), "1e-05");
    }

    use crate::commands::scheduler::serving_log::tests::server;

    #[test]
    fn uvicorn_answers_health_and_the_models_list() {
        let mut shell = server("8B", 2, "");
        let out = shell.run("curl -si gpu-002:8000/health").stdout();
        assert!(out.starts_with("HTTP/1.1 200 OK\r\ndate: ") && out.contains("\r\nserver: uvicorn\r\ncontent-length: 0\r\n\r\n"), "{out:?}");
        let models: serde_json::Value = serde_json::from_str(&shell.run("curl -s gpu-002:8000/v1/models").stdout()).expect("JSON");
        assert_eq!(models["data"][0]["id"], "Llama-3.1-8B-Instruct");
        assert_eq!(models["data"][0]["max_model_len"], 8192);
        assert_eq!(models["data"][0]["owned_by"], "vllm");
        assert_eq!(shell.run("curl -s gpu-002:8000/nothing").stdout(), "{\"detail\":\"Not Found\"}");
        assert_eq!(shell.run("curl -s localhost:8000/health").status, 7, "nothing listens where no server runs");
    }

    #[test]
    fn metrics_follow_the_servers_state_with_vllms_names_and_buckets() {
        let mut shell = server("8B", 2, "");
        let text = shell.run("curl -s gpu-002:8000/metrics").stdout();
        assert!(
            text.starts_with("# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n"),
            "{text}"
        );
        let value = |series: &str| -> f64 {
            text.lines().find(|line| line.starts_with(series)).and_then(|line| line.rsplit(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(-1.0)
        };
        let labels = "{engine=\"0\",model_name=\"Llama-3.1-8B-Instruct\"}";
        let requests = value(&format!("vllm:time_to_first_token_seconds_count{labels}"));
        let prompt = value(&format!("vllm:prompt_tokens_total{labels}"));
        assert!(requests > 5_000.0, "half an hour at 6 requests a second: {requests}");
        assert!((prompt / requests / 1000.0 - 1.0).abs() < 0.02, "{prompt} prompt tokens for {requests} requests");
        assert!(text.contains("vllm:inter_token_latency_seconds_bucket{engine=\"0\",le=\"0.01\",model_name=\"Llama-3.1-8B-Instruct\"} "), "{text}");
        assert!(text.contains("vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"7680.0\",model_name=\"Llama-3.1-8B-Instruct\"} "), "{text}");
        assert!(text.contains("# TYPE vllm:generation_tokens_created gauge\n"), "{text}");
        let running = value(&format!("vllm:num_requests_running{labels}"));
        assert!((1.0..20.0).contains(&running), "{running}");
        // Buckets only grow.
        let buckets: Vec<f64> =
            text.lines().filter(|l| l.starts_with("vllm:time_to_first_token_seconds_bucket")).filter_map(|l| l.rsplit(' ').next()?.parse().ok()).collect();
        assert!(buckets.windows(2).all(|w| w[0] <= w[1]) && buckets.len() == TTFT_BUCKETS.len() + 1, "{buckets:?}");
    }

    #[test]
    fn prometheus_scrapes_the_server_as_job_vllm() {
        let mut shell = server("8B", 2, "");
        let out = shell.run("promtool query instant http://mgmt-01:9090 'up{job=\"vllm\"}'").stdout();
        assert!(out.starts_with("up{instance=\"gpu-002:8000\", job=\"vllm\"} => 1 @["), "{out}");
        let query = "rate(vllm:inter_token_latency_seconds_sum[5m]) / rate(vllm:inter_token_latency_seconds_count[5m])";
        let out = shell.run(&format!("promtool query instant http://mgmt-01:9090 '{query}'")).stdout();
        let itl: f64 = out.split(" => ").nth(1).and_then(|v| v.split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        assert!((0.003..0.01).contains(&itl), "{out}");
        assert!(shell.run("curl -s mgmt-01:9090/api/v1/status/config").stdout().contains("job_name: vllm"));
    }

    /// Every counter and bucket of the page, by series.
    fn counters(text: &str) -> Vec<(String, f64)> {
        text.lines()
            .filter(|line| line.contains("_total{") || line.contains("_bucket{") || line.contains("_count{") || line.contains("_sum{"))
            .filter_map(|line| {
                let (series, value) = line.rsplit_once(' ')?;
                Some((series.to_string(), value.parse().ok()?))
            })
            .collect()
    }

    #[test]
    fn counters_and_buckets_only_grow_through_a_fault_and_the_engines_death() {
        let faults = "[[faults]]\nkind = \"gpu-thermal-slowdown\"\nnode = \"gpu-002\"\ngpu = 1\nat = \"2m\"\n[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = 0\nat = \"12m\"\n";
        let mut shell = server("8B", 2, faults);
        let mut before = counters(&shell.run("curl -s gpu-002:8000/metrics").stdout());
        // Scrapes every 37 s across the slowdown, up to the engine's death (the server exits 6 s after it).
        for _ in 0..19 {
            shell.run("sleep 37");
            let after = counters(&shell.run("curl -s gpu-002:8000/metrics").stdout());
            assert_eq!(after.len(), before.len());
            for ((series, old), (_, new)) in before.iter().zip(&after) {
                assert!(new >= old, "{series} went from {old} to {new}");
            }
            before = after;
        }
        // The GPU fails at 12 min: the engine is dead, the server not yet gone.
        shell.run("sleep 18");
        let dying = counters(&shell.run("curl -s gpu-002:8000/metrics").stdout());
        assert_eq!(dying.len(), before.len());
        assert!(dying.iter().zip(&before).all(|((_, new), (_, old))| new >= old), "a dead engine's server keeps its counters");
        assert_eq!(shell.run("curl -s -o /dev/null -w '%{http_code}' gpu-002:8000/health").stdout(), "503");
    }

    #[test]
    fn length_buckets_stop_at_the_longest_request() {
        assert_eq!(length_buckets(8192), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]);
    }
}
