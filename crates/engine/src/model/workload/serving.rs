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
        let lambda = load.requests_per_s;
        let (prompt, output) = (f64::from(load.prompt_tokens), f64::from(load.output_tokens));
        let mut backlog = 0.0;
        let mut served = Served::default();
        let mut finished_rps = 0.0;
        for (begin, end, serving) in &spans {
            let end = end.min(t);
            let span = (end - begin).max(0.0);
            let capacity = serving.capacity_rps;
            let finished = if lambda < capacity {
                // It drains any backlog at full rate, then keeps up.
                let draining = (backlog / (capacity - lambda)).min(span);
                backlog -= (capacity - lambda) * draining;
                finished_rps = if draining < span { lambda } else { capacity };
                capacity * draining + lambda * (span - draining)
            } else {
                backlog += (lambda - capacity) * span;
                finished_rps = capacity;
                capacity * span
            };
            served.requests += finished;
            served.prompt_tokens += finished * prompt;
            served.generation_tokens += finished * output;
        }
        let serving = last.2;
        let saturated = backlog > 0.0 || lambda >= serving.capacity_rps;
        let (running, step_ms) = if saturated { (serving.saturated_running, serving.saturated_step_ms) } else { (serving.running, serving.steady_step_ms) };
        let wait_s = if saturated { backlog / serving.capacity_rps.max(1e-6) } else { 0.0 };
        let context = prompt + output / 2.0;
        let kv_usage = (running * context / (serving.kv_tokens.max(1) as f64)).min(1.0);
        let state = ServerState { running, waiting: backlog, step_ms, first_token_s: wait_s + (serving.prefill_ms + step_ms) / 1e3, finished_rps, kv_usage };
        Some((state, served))
    }
}
