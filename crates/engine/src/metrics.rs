//! The metrics panel: each workload's progress and telemetry over simulated
//! time, as SVG charts with a text summary each (the figure's caption, for
//! everyone and for screen readers; the chart's title names it), rendered
//! by the engine so that the page only shows them and a test can read them.
//!
//! Every value is read off the model: the job's recorded pace (step time,
//! tokens per second, input wait, its slowest GPU's clock), its phases
//! (setup, stepping, saving a checkpoint, waiting on a lost peer, ended),
//! and what a phase does to its GPUs (busy, waiting with NCCL's kernels
//! resident, idle) and rails (each rail's share of the gradient
//! all-reduce). The accepted baseline is the same job on the healthy
//! cluster. Changes of the job's pace in the window are marked as a
//! monitor shows them (the slowdown began, the job stopped, the pace
//! recovered), never with their cause: the cause is what the lab asks.

use std::fmt::Write;

use crate::model::time::civil;
use crate::model::workload::{Event, Pace, Workload};
use crate::model::Cluster;

/// Points per chart.
const SAMPLES: usize = 96;
const WIDTH: f64 = 320.0;
const HEIGHT: f64 = 112.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 8.0;
const BOTTOM: f64 = 20.0;

/// What a job is doing at an instant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Idle,
    Setup,
    Stepping(Pace),
    Saving,
    /// A peer was lost: the ranks wait in NCCL until the watchdog.
    Waiting,
}

/// The charts, in order: title and unit.
const CHARTS: [(&str, &str); 7] = [
    ("Step time", "ms"),
    ("Throughput", "tokens/s"),
    ("GPU utilization", "%"),
    ("SM clock (slowest GPU)", "MHz"),
    ("GPU power", "W"),
    ("InfiniBand per rail", "Gb/s"),
    ("Input wait", "ms"),
];

/// One chart: a series over time (None: no value then), the baseline.
struct Chart<'t> {
    title: String,
    unit: &'t str,
    points: Vec<(i64, Option<f64>)>,
    baseline: Option<f64>,
}

/// What turns a job's phase into the charts' values.
struct Context {
    tokens: f64,
    max_clock: f64,
    idle_clock: f64,
    idle_power: f64,
    /// Bytes through each rail per step.
    rail_bytes: f64,
    /// A server's load.
    load: Option<crate::model::workload::Load>,
}

impl Context {
    /// Each chart's value in `phase` (None: nothing to draw then). A job
    /// that steps keeps its GPUs busy and draws power by how much of the
    /// step computes; one waiting on a lost peer keeps them "utilized"
    /// (NCCL's kernels spin) at low power. Setup and checkpoint saves make
    /// no progress; the GPUs read busy then, as nvidia-smi shows them.
    fn values(&self, phase: &Phase) -> [Option<f64>; CHARTS.len()] {
        match phase {
            Phase::Stepping(pace @ Pace { serving: Some(serving), .. }) => {
                // A server's step is the time between tokens; its throughput
                // the tokens it generates for the requests it finishes.
                let (rate, output) = self.load.map_or((0.0, 0.0), |load| (load.requests_per_s, f64::from(load.output_tokens)));
                let busy = crate::model::workload::pace::serving_busy(serving);
                [
                    Some(pace.step_ms),
                    Some(rate.min(serving.capacity_rps) * output),
                    Some(busy * 96.0),
                    Some(self.max_clock * pace.clock),
                    Some(crate::model::workload::pace::serving_watts(self.idle_power, serving)),
                    Some(0.0),
                    None,
                ]
            }
            Phase::Stepping(pace) => {
                let seconds = pace.step_ms / 1e3;
                [
                    Some(pace.step_ms),
                    Some(self.tokens / seconds),
                    Some(99.0),
                    Some(self.max_clock * pace.clock),
                    Some(640.0 * (0.4 + 0.6 * pace.compute_ms / pace.step_ms)),
                    Some(self.rail_bytes / seconds * 8.0 / 1e9),
                    Some(pace.input_ms),
                ]
            }
            Phase::Waiting => [None, Some(0.0), Some(99.0), Some(self.max_clock), Some(205.0), Some(0.0), None],
            // nvidia-smi shows a running job's GPUs busy whatever it does; so does the panel.
            Phase::Setup | Phase::Saving => [None, Some(0.0), Some(99.0), Some(self.max_clock), Some(640.0), Some(0.0), None],
            Phase::Idle => [None, None, Some(0.0), Some(self.idle_clock), Some(self.idle_power), None, None],
        }
    }
}

/// A run of a job: its instance and what it did up to now.
struct Run<'w> {
    workload: &'w Workload,
    events: Vec<Event>,
}

impl Run<'_> {
    fn phase(&self, t: i64, now: i64) -> Phase {
        let w = self.workload;
        let end = w.end.as_ref().map_or(i64::MAX, |(at, _)| *at);
        if t < w.started || t >= end || t > now {
            return Phase::Idle;
        }
        if (t as f64) < w.ready_at() {
            return Phase::Setup;
        }
        for event in &self.events {
            match event {
                Event::Stopped { at, .. } if *at <= t => return Phase::Waiting,
                Event::Saved { at, seconds, .. } if *at <= t as f64 && seconds.is_none_or(|s| (t as f64) < at + s) => return Phase::Saving,
                _ => {}
            }
        }
        match w.pace_at(t as f64) {
            Some(Ok(pace)) => Phase::Stepping(*pace),
            _ => Phase::Waiting,
        }
    }
}

/// The panel's HTML: per job, a heading and its charts (`<figure>`s with
/// an SVG each and its summary as the caption). Empty without jobs.
pub fn panel(cluster: &Cluster) -> String {
    let now = cluster.now;
    let mut names: Vec<&str> = Vec::new();
    for workload in &cluster.workloads {
        if !names.contains(&workload.spec.name.as_str()) {
            names.push(&workload.spec.name);
        }
    }
    let healthy = cluster.healthy();
    let mut out = String::new();
    for (index, name) in names.iter().enumerate() {
        let runs: Vec<Run> =
            cluster.workloads.iter().filter(|w| w.spec.name == *name).map(|workload| Run { workload, events: workload.timeline(now) }).collect();
        // The latest run's configuration: a job the trainee resized is
        // measured against its own healthy pace, not the first run's.
        let Some(latest) = runs.last() else { continue };
        let spec = &latest.workload.spec;
        let start = runs.iter().map(|r| r.workload.started).min().unwrap_or(now);
        // Up to the last two hours, so that recent changes stay readable.
        let from = start.max(now - 2 * 3600);
        if now <= from {
            continue;
        }
        let first_node = spec.nodes.first().and_then(|host| cluster.node(host));
        let context = Context {
            tokens: f64::from(spec.global_batch) * f64::from(spec.seq_len),
            max_clock: f64::from(cluster.preset.gpu.max_sm_clock_mhz),
            idle_clock: f64::from(cluster.preset.gpu.idle_sm_clock_mhz),
            idle_power: f64::from(cluster.preset.gpu.idle_power_w.0 + cluster.preset.gpu.idle_power_w.1) / 2.0,
            rail_bytes: spec.rail_bytes_per_step(first_node.map_or(1, |node| node.hcas.len())),
            load: spec.load,
        };
        // The accepted baseline: the same job stepping on the healthy cluster.
        let baseline = crate::perf::workload_pace(&healthy, spec, cluster.storage_gb_per_s()).ok().map(|pace| context.values(&Phase::Stepping(pace)));
        let times: Vec<i64> = (0..SAMPLES).map(|i| from + ((now - from) as f64 * i as f64 / (SAMPLES - 1) as f64).round() as i64).collect();
        let samples: Vec<(i64, [Option<f64>; CHARTS.len()])> = times
            .iter()
            .map(|t| {
                let phase = runs.iter().map(|run| run.phase(*t, now)).find(|phase| *phase != Phase::Idle).unwrap_or(Phase::Idle);
                (*t, context.values(&phase))
            })
            .collect();
        let marks = pace_marks(&runs, from, now);
        // The rails the job's traffic is spread over, named.
        let rails: Vec<&str> = first_node.map(|node| node.hcas.iter().map(|hca| hca.name.as_str()).collect()).unwrap_or_default();
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        for (number, (title, unit)) in CHARTS.iter().enumerate() {
            let title = match (*title, rails.first(), rails.last()) {
                ("Step time", ..) if spec.load.is_some() => "Time between tokens".to_string(),
                ("Throughput", ..) if spec.load.is_some() => "Generated tokens".to_string(),
                ("InfiniBand per rail", Some(first), Some(last)) if rails.len() > 1 => format!("InfiniBand on each rail, {first} to {last}"),
                (title, _, _) => title.to_string(),
            };
            let chart =
                Chart { title, unit, points: samples.iter().map(|(t, values)| (*t, values[number])).collect(), baseline: baseline.and_then(|b| b[number]) };
            out += &figure(&format!("metric-{index}-{number}"), &chart, &marks, from, now);
        }
    }
    out
}

/// Where the job's pace changed in the window, as a monitor sees it: when
/// it slowed (more than 2%), stopped or recovered, and when it trained
/// again after a stop (with the restart time).
fn pace_marks(runs: &[Run], from: i64, now: i64) -> Vec<(i64, String)> {
    let mut marks = Vec::new();
    for run in runs {
        for pair in run.workload.segments.windows(2) {
            let (before, (at, after)) = (&pair[0].1, &pair[1]);
            if !(from..=now).contains(at) {
                continue;
            }
            let what = match (before, after) {
                (Ok(_), Err(_)) => "The job stopped",
                (Ok(old), Ok(new)) if new.step_ms > old.step_ms * 1.02 => "The slowdown began",
                (Ok(old), Ok(new)) if new.step_ms * 1.02 < old.step_ms => "The pace recovered",
                _ => continue,
            };
            marks.push((*at, what.to_string()));
        }
    }
    // The restart time an operator keeps: the stop to the next first step.
    for restart in crate::model::workload::restarts(runs.iter().map(|run| run.workload), now) {
        if restart.resumed.is_some() && (from..=now).contains(&restart.at) {
            let span = match (restart.seconds / 60, restart.seconds % 60) {
                (0, seconds) => format!("{seconds} s"),
                (minutes, seconds) => format!("{minutes} min {seconds} s"),
            };
            marks.push((restart.at, format!("Training resumed (restart time {span})")));
        }
    }
    crate::sort::sort(&mut marks);
    marks
}

/// A number as the summary says it: few digits, grouped.
fn figure_text(value: f64) -> String {
    if value >= 10_000.0 {
        let whole = value.round() as u64;
        let digits = whole.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        grouped
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn clock(at: i64) -> String {
    let c = civil(at);
    format!("{:02}:{:02}", c.hour, c.minute)
}

fn summary(chart: &Chart, marks: &[(i64, String)]) -> String {
    let values: Vec<f64> = chart.points.iter().filter_map(|(_, v)| *v).collect();
    let unit = chart.unit;
    let mut text = format!("{} ({unit}): ", chart.title);
    match (values.first(), values.last()) {
        (Some(first), Some(last)) => {
            let (low, high) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            let _ =
                write!(text, "{} at the start, {} at the end, range {} to {}", figure_text(*first), figure_text(*last), figure_text(low), figure_text(high));
        }
        _ => text += "no value in this window",
    }
    if let Some(baseline) = chart.baseline {
        let _ = write!(text, "; baseline {}", figure_text(baseline));
    }
    text.push('.');
    for (at, what) in marks {
        let _ = write!(text, " {what} at {}.", clock(*at));
    }
    text
}

fn figure(id: &str, chart: &Chart, marks: &[(i64, String)], from: i64, to: i64) -> String {
    let values: Vec<f64> = chart.points.iter().filter_map(|(_, v)| *v).chain(chart.baseline).collect();
    let high = values.iter().copied().fold(0.0_f64, f64::max).max(1e-9) * 1.15;
    let x = |t: i64| LEFT + (t - from) as f64 / (to - from).max(1) as f64 * (WIDTH - LEFT - RIGHT);
    let y = |v: f64| TOP + (1.0 - v / high) * (HEIGHT - TOP - BOTTOM);
    let text = escape(&summary(chart, marks));
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<figure class=\"metric\"><svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-labelledby=\"{id}-t\"><title id=\"{id}-t\">{} ({})</title>",
        escape(&chart.title),
        escape(chart.unit)
    );
    let bottom = HEIGHT - BOTTOM;
    let _ = write!(svg, "<path class=\"axis\" d=\"M{LEFT} {TOP}V{bottom}H{}\"/>", WIDTH - RIGHT);
    let _ = write!(svg, "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", LEFT - 3.0, TOP + 8.0, figure_text(high / 1.15));
    let _ = write!(svg, "<text class=\"tick\" x=\"{}\" y=\"{bottom}\" text-anchor=\"end\">0</text>", LEFT - 3.0);
    let _ = write!(svg, "<text class=\"tick\" x=\"{LEFT}\" y=\"{}\">{}</text>", HEIGHT - 6.0, clock(from));
    let _ = write!(svg, "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", WIDTH - RIGHT, HEIGHT - 6.0, clock(to));
    if let Some(baseline) = chart.baseline {
        let _ = write!(svg, "<path class=\"baseline\" d=\"M{LEFT} {:.1}H{}\"/>", y(baseline), WIDTH - RIGHT);
    }
    for (at, what) in marks {
        let _ = write!(svg, "<path class=\"change\" d=\"M{:.1} {TOP}V{bottom}\"><title>{}</title></path>", x(*at), escape(what));
    }
    // One path; a gap (no value) lifts the pen.
    let mut d = String::new();
    let mut pen_down = false;
    for (t, value) in &chart.points {
        match value {
            Some(v) => {
                let _ = write!(d, "{}{:.1} {:.1}", if pen_down { "L" } else { "M" }, x(*t), y(*v));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    let _ = writeln!(svg, "<path class=\"series\" d=\"{d}\"/></svg><figcaption>{text}</figcaption></figure>");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!([figure_text(184_123.4), figure_text(214.4), figure_text(0.84)], ["184,123", "214", "0.8"]);
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
