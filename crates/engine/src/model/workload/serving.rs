//! A serving job's state over time: from its recorded paces (each a
//! steady state the performance model found, [`Serving`]) and its load,
//! the requests it runs and queues at an instant and what it has served
//! by then. A server that cannot keep up queues the excess, and drains
//! the queue once it can again: the backlog is integrated over the paces,
//! piecewise linear, so every reader (its log, its metrics) agrees.

use super::{Load, Serving, Workload};

/// What a server is doing at an instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerState {
    /// Requests in its batch, and waiting for a place in it.
    pub running: f64,
    pub waiting: f64,
    /// One engine step (the time between a request's tokens), ms.
    pub step_ms: f64,
    /// Time to a request's first token: its wait, its prefill, a step (s).
    pub first_token_s: f64,
    /// Requests it finishes each second.
    pub finished_rps: f64,
    /// The share of its KV cache in use.
    pub kv_usage: f64,
}

/// What a server has served by an instant: requests finished, and their
/// prompt and generated tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Served {
    pub requests: f64,
    pub prompt_tokens: f64,
    pub generation_tokens: f64,
}

impl Workload {
    /// The server's load (None for a training job).
    pub fn load(&self) -> Option<Load> {
        self.spec.load
    }

    /// Its paces from when it took requests to `until` (or its end), each
    /// with when it began and ended.
    fn serving_spans(&self, until: f64) -> Vec<(f64, f64, Serving)> {
        let ready = self.ready_at();
        let end = self.end.as_ref().map_or(f64::INFINITY, |(at, _)| *at as f64).min(until);
        let mut spans = Vec::new();
        for (at, (from, pace)) in self.segments.iter().enumerate() {
            let begin = (*from as f64).max(ready);
            let next = self.segments.get(at + 1).map_or(f64::INFINITY, |(t, _)| *t as f64).min(end);
            if begin >= next {
                continue;
            }
            match pace {
                Ok(pace) => {
                    if let Some(serving) = pace.serving {
                        spans.push((begin, next, serving));
                    }
                }
                // A fault stopped the server: nothing more is served.
                Err(_) => break,
            }
        }
        spans
    }

    /// The state at `t`, and what it has served by then; None while it
    /// does not take requests.
    pub fn server_at(&self, t: f64) -> Option<(ServerState, Served)> {
        let load = self.load()?;
        let spans = self.serving_spans(t);
        let last = spans.last().copied().filter(|(_, end, _)| t <= *end)?;
        let walk = walk(&spans, load, t);
        let lambda = load.requests_per_s;
        let (prompt, output) = (f64::from(load.prompt_tokens), f64::from(load.output_tokens));
        let serving = last.2;
        let saturated = walk.backlog > 0.0 || lambda >= serving.capacity_rps;
        let (running, step_ms) = if saturated { (serving.saturated_running, serving.saturated_step_ms) } else { (serving.running, serving.steady_step_ms) };
        let wait_s = if saturated { walk.backlog / serving.capacity_rps.max(1e-6) } else { 0.0 };
        let context = prompt + output / 2.0;
        let kv_usage = (running * context / (serving.kv_tokens.max(1) as f64)).min(1.0);
        let first_token_s = wait_s + (serving.prefill_ms + step_ms) / 1e3;
        let state = ServerState { running, waiting: walk.backlog, step_ms, first_token_s, finished_rps: walk.finished_rps, kv_usage };
        Some((state, walk.served))
    }

    /// What it has served by `t`, whether or not it still takes requests
    /// (a dead engine's server keeps its counters until it exits).
    pub fn served_by(&self, t: f64) -> Served {
        match self.load() {
            Some(load) => walk(&self.serving_spans(t), load, t).served,
            None => Served::default(),
        }
    }
}

/// The queue and the requests served, walked over a server's paces to `t`.
struct Walk {
    backlog: f64,
    served: Served,
    finished_rps: f64,
}

fn walk(spans: &[(f64, f64, Serving)], load: Load, t: f64) -> Walk {
    let lambda = load.requests_per_s;
    let (prompt, output) = (f64::from(load.prompt_tokens), f64::from(load.output_tokens));
    let mut out = Walk { backlog: 0.0, served: Served::default(), finished_rps: 0.0 };
    for (begin, end, serving) in spans {
        let span = (end.min(t) - begin).max(0.0);
        let capacity = serving.capacity_rps;
        let finished = if lambda < capacity {
            // It drains any backlog at full rate, then keeps up.
            let draining = (out.backlog / (capacity - lambda)).min(span);
            if draining < span {
                out.backlog = 0.0;
                out.finished_rps = lambda;
            } else {
                out.backlog = (out.backlog - (capacity - lambda) * span).max(0.0);
                out.finished_rps = capacity;
            }
            capacity * draining + lambda * (span - draining)
        } else {
            out.backlog += (lambda - capacity) * span;
            out.finished_rps = capacity;
            capacity * span
        };
        out.served.requests += finished;
        out.served.prompt_tokens += finished * prompt;
        out.served.generation_tokens += finished * output;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serving(capacity_rps: f64) -> Serving {
        Serving {
            prefill_ms: 10.0,
            running: 4.0,
            steady_step_ms: 5.0,
            capacity_rps,
            saturated_running: 64.0,
            saturated_step_ms: 20.0,
            kv_tokens: 100_000,
            compute_share: 0.2,
        }
    }

    #[test]
    fn a_queue_built_while_slow_drains_to_nothing_once_fast_again() {
        let load = Load { requests_per_s: 10.0, prompt_tokens: 100, output_tokens: 10, max_num_seqs: 64, memory_permille: 900 };
        let spans = [(0.0, 100.0, serving(5.0)), (100.0, 1_000.0, serving(20.0))];
        // 500 queued by 100 s, drained at 10 a second by 150 s.
        assert!((walk(&spans, load, 100.0).backlog - 500.0).abs() < 1e-6);
        assert!((walk(&spans, load, 125.0).backlog - 250.0).abs() < 1e-6);
        for t in [150.0, 150.000_001, 151.0, 600.0] {
            let walked = walk(&spans, load, t);
            assert_eq!(walked.backlog, 0.0, "at {t}");
        }
        assert_eq!(walk(&spans, load, 600.0).finished_rps, 10.0);
        // Everything that arrived was served once the queue is gone.
        assert!((walk(&spans, load, 600.0).served.requests - 6_000.0).abs() < 1e-6);
    }
}
