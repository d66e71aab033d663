//! What Prometheus scraped: every node's node_exporter (job `node`, port
//! 9100) and dcgm-exporter (job `dcgm`, port 9400), and Prometheus itself,
//! every 15 s at an offset of its own per target, as Prometheus spreads
//! them. A scrape at an instant reads the exporter's page as the cluster
//! was then ([`Cluster::as_of`]): the series a query sees are the
//! exporters' own lines, with `job` and `instance` added, and the five
//! series Prometheus writes per scrape (`up`, `scrape_duration_seconds`...).
//! A series a scrape no longer finds, or a target that stops answering,
//! gets a stale marker.

use std::collections::HashMap;
use std::rc::Rc;

use crate::commands::gpu::dcgm_exporter;
use crate::commands::host::node_exporter;
use crate::commands::monitoring::promql::eval::{Labels, Series, Storage, STALE};
use crate::commands::monitoring::promql::parser::{MatchOp, Matcher};
use crate::commands::monitoring::promql::Error;
use crate::model::node::ServiceState;
use crate::model::service;
use crate::model::Cluster;
use crate::rng::Rng;

pub const SCRAPE_INTERVAL_MS: i64 = 15_000;

/// The most work one request may do, in exporter pages rendered for one
/// family (an hour of both exporters of eight nodes at 15 s is 3,840; a
/// scrape that keeps only `up` renders none, a whole page counts as
/// `WHOLE_PAGE`), and the most samples its scrapes may give: past either,
/// the query fails as Prometheus' sample limit fails it, before the page
/// would stall.
const MAX_SCRAPES: usize = 6_000;
const WHOLE_PAGE: usize = 50;
const MAX_SCRAPED_SAMPLES: usize = 1_000_000;

/// The most cluster states and scraped samples kept for reuse within a request.
const MAX_PASTS_KEPT: usize = 16;
const MAX_SAMPLES_KEPT: usize = 100_000;

/// The series Prometheus writes itself for each scrape.
const SYNTHETIC: [&str; 5] = ["scrape_duration_seconds", "scrape_samples_post_metric_relabeling", "scrape_samples_scraped", "scrape_series_added", "up"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exporter {
    Prometheus,
    Node,
    Dcgm,
    /// A vLLM server's own metrics (port 8000).
    Vllm,
}

#[derive(Clone, Debug)]
pub struct Target {
    pub job: &'static str,
    pub host: String,
    pub port: u16,
    pub exporter: Exporter,
    /// Where in each interval its scrapes fall (ms).
    pub offset_ms: i64,
}

impl Target {
    pub fn instance(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.instance())
    }

    /// Whether a series named `name` may come from this target.
    fn may_have(&self, name: Option<&str>) -> bool {
        let Some(name) = name else { return true };
        if SYNTHETIC.contains(&name) {
            return true;
        }
        match self.exporter {
            Exporter::Dcgm => name.starts_with("DCGM_"),
            Exporter::Vllm => name.starts_with("vllm:"),
            Exporter::Node => !name.starts_with("DCGM_") && !name.starts_with("vllm:"),
            Exporter::Prometheus => false,
        }
    }
}

/// The scrape configuration's targets, in its order.
pub fn targets(cluster: &Cluster) -> Vec<Target> {
    let target = |job: &'static str, host: &str, port: u16, exporter: Exporter| {
        let instance = format!("{host}:{port}");
        let offset_ms = Rng::derive(cluster.seed, &["prometheus", "scrape-offset", job, &instance]).range_i64(0, SCRAPE_INTERVAL_MS);
        Target { job, host: host.to_string(), port, exporter, offset_ms }
    };
    let mut all = vec![target("prometheus", "localhost", super::PORT, Exporter::Prometheus)];
    all.extend(cluster.nodes.iter().map(|node| target("node", &node.hostname, node_exporter::PORT, Exporter::Node)));
    all.extend(cluster.nodes.iter().map(|node| target("dcgm", &node.hostname, dcgm_exporter::PORT, Exporter::Dcgm)));
    all.extend(vllm_hosts(cluster).iter().map(|host| target("vllm", host, crate::commands::monitoring::vllm::PORT, Exporter::Vllm)));
    all
}

/// The nodes the lab's servers run on, in the lab's order: the `vllm`
/// job's static targets.
pub fn vllm_hosts(cluster: &Cluster) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for spec in cluster.workload_specs.iter().filter(|spec| spec.load.is_some()) {
        if let Some(host) = spec.nodes.first().filter(|host| !hosts.contains(host)) {
            hosts.push(host.clone());
        }
    }
    hosts
}

/// One scrape: whether the target answered, and the samples it gave.
#[derive(Clone, Debug, Default)]
pub struct Scrape {
    pub up: bool,
    pub samples: Vec<(Labels, f64)>,
    pub duration_seconds: f64,
    /// Samples in the whole page (the name filter aside).
    pub scraped: usize,
}

pub struct Scrapes<'c> {
    cluster: &'c Cluster,
    pub targets: Vec<Target>,
    /// When the first scrape was (ms): the data begins there.
    pub first_ms: i64,
    /// The newest instant (ms): now.
    pub now_ms: i64,
    /// The cluster as it was in each scrape interval.
    pasts: HashMap<i64, Cluster>,
    /// Scrapes done, by target, time and the name they were filtered by.
    done: HashMap<(usize, i64, Option<String>), Rc<Scrape>>,
    kept_samples: usize,
    pages: usize,
    samples: usize,
}

impl<'c> Scrapes<'c> {
    pub fn new(cluster: &'c Cluster, now_ms: i64) -> Scrapes<'c> {
        // Prometheus has scraped the nodes since they first booted.
        let first = cluster.as_of(i64::MIN / 2).nodes.iter().map(|node| node.booted_at).min().unwrap_or(cluster.started_at());
        Scrapes {
            cluster,
            targets: targets(cluster),
            first_ms: first * 1000,
            now_ms,
            pasts: HashMap::new(),
            done: HashMap::new(),
            kept_samples: 0,
            pages: 0,
            samples: 0,
        }
    }

    /// The instants (ms) target `index` was scraped in [start, end].
    pub fn times(&self, index: usize, start: i64, end: i64) -> Vec<i64> {
        let offset = self.targets[index].offset_ms;
        let start = start.max(self.first_ms);
        let end = end.min(self.now_ms);
        if end < start {
            return Vec::new();
        }
        let first = (start - offset).div_euclid(SCRAPE_INTERVAL_MS) + i64::from((start - offset).rem_euclid(SCRAPE_INTERVAL_MS) != 0);
        let mut times = Vec::new();
        let mut t = first * SCRAPE_INTERVAL_MS + offset;
        while t <= end {
            times.push(t);
            t += SCRAPE_INTERVAL_MS;
        }
        times
    }

    /// The cluster as it was at `at_ms`: the interval's state, its clock set to then.
    fn past(&mut self, at_ms: i64) -> &Cluster {
        let interval = at_ms.div_euclid(SCRAPE_INTERVAL_MS);
        let cluster = self.cluster;
        if self.pasts.len() >= MAX_PASTS_KEPT && !self.pasts.contains_key(&interval) {
            self.pasts.clear();
        }
        let past = self.pasts.entry(interval).or_insert_with(|| cluster.as_of(at_ms.div_euclid(1000)));
        past.now = at_ms.div_euclid(1000).min(cluster.now);
        past
    }

    /// Target `index` scraped at `at_ms`, keeping the series named `name` (all without one).
    pub fn scrape(&mut self, index: usize, at_ms: i64, name: Option<&str>) -> Result<Rc<Scrape>, Error> {
        let key = (index, at_ms, name.map(str::to_string));
        if let Some(done) = self.done.get(&key) {
            return Ok(done.clone());
        }
        let target = self.targets[index].clone();
        // A scrape kept for `up` alone needs only whether the target answered.
        let page_needed = target.exporter != Exporter::Prometheus && name.is_none_or(|name| !SYNTHETIC.contains(&name));
        if page_needed {
            self.pages += if name.is_some() { 1 } else { WHOLE_PAGE };
        }
        if self.pages > MAX_SCRAPES {
            return Err(Error::execution("query processing would load too many samples into memory in query execution"));
        }
        let seed = self.cluster.seed;
        let past = self.past(at_ms);
        let seconds = past.now;
        let mut rng = Rng::derive(seed, &["prometheus", "scrape", &target.instance(), &at_ms.to_string()]);
        let page = match target.exporter {
            Exporter::Prometheus => Some(String::new()),
            // A scrape kept for `up` alone needs only whether it answers.
            Exporter::Vllm => past.node(&target.host).and_then(|node| match page_needed {
                true => crate::commands::monitoring::vllm::serve(past, node, "/metrics").map(|response| response.body),
                false => crate::commands::monitoring::vllm::server_on(past, node).map(|_| String::new()),
            }),
            exporter => past.node(&target.host).and_then(|node| {
                let unit = if exporter == Exporter::Dcgm { service::EXPORTER_UNIT } else { service::NODE_EXPORTER_UNIT };
                let (state, since) = service::state_of(node, unit)?;
                let answers = node.up(seconds) && state == ServiceState::Active && seconds >= since;
                answers.then(|| match exporter {
                    _ if !page_needed => String::new(),
                    Exporter::Dcgm => dcgm_exporter::metrics(past, node),
                    _ => node_exporter::metrics_named(past, node, name),
                })
            }),
        };
        let mut scrape = Scrape { up: page.is_some(), ..Scrape::default() };
        if let Some(page) = page {
            let base = [("instance".to_string(), target.instance()), ("job".to_string(), target.job.to_string())];
            for line in page.lines().filter(|line| !line.starts_with('#') && !line.is_empty()) {
                scrape.scraped += 1;
                if let Some(name) = name {
                    let rest = line.strip_prefix(name);
                    if !rest.is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' ')) {
                        continue;
                    }
                }
                if let Some((labels, value)) = parse_line(line, &base) {
                    scrape.samples.push((labels, value));
                }
            }
            // A page of a thousand lines takes the exporter some milliseconds.
            scrape.duration_seconds = ((0.002 + scrape.scraped as f64 * 0.000_012) * (0.8 + 0.4 * rng.unit_f64()) * 1e6).round() / 1e6;
        }
        let synthetic = [
            ("scrape_duration_seconds", if scrape.up { scrape.duration_seconds } else { 0.0 }),
            ("scrape_samples_post_metric_relabeling", scrape.scraped as f64),
            ("scrape_samples_scraped", scrape.scraped as f64),
            ("scrape_series_added", 0.0),
            ("up", if scrape.up { 1.0 } else { 0.0 }),
        ];
        for (series, value) in synthetic {
            if name.is_none_or(|name| name == series) {
                let mut labels = vec![
                    ("__name__".to_string(), series.to_string()),
                    ("instance".to_string(), target.instance()),
                    ("job".to_string(), target.job.to_string()),
                ];
                crate::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
                scrape.samples.push((labels, value));
            }
        }
        self.samples += scrape.samples.len();
        if self.samples > MAX_SCRAPED_SAMPLES {
            return Err(Error::execution("query processing would load too many samples into memory in query execution"));
        }
        let scrape = Rc::new(scrape);
        if self.kept_samples + scrape.samples.len() > MAX_SAMPLES_KEPT {
            self.done.clear();
            self.kept_samples = 0;
        }
        self.kept_samples += scrape.samples.len();
        self.done.insert(key, scrape.clone());
        Ok(scrape)
    }
}

/// A line of the text format: `name{label="value",...} value`.
fn parse_line(line: &str, base: &[(String, String)]) -> Option<(Labels, f64)> {
    let (series, value) = line.rsplit_once(' ')?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        number => number.parse().ok()?,
    };
    let (name, labels_text) = match series.split_once('{') {
        Some((name, rest)) => (name, rest.strip_suffix('}')?),
        None => (series, ""),
    };
    let mut labels: Labels = vec![("__name__".to_string(), name.to_string())];
    let mut rest = labels_text;
    while !rest.is_empty() {
        let (label, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => return None,
                },
                '"' => {
                    end = Some(i);
                    break;
                }
                c => value.push(c),
            }
        }
        let end = end?;
        // A label the target sets itself is kept as `exported_` (honor_labels: false).
        let label = if base.iter().any(|(name, _)| name == label) { format!("exported_{label}") } else { label.to_string() };
        labels.push((label, value));
        rest = after[end + 1..].trim_start_matches(',');
    }
    labels.extend(base.iter().cloned());
    crate::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
    Some((labels, value))
}

fn label<'l>(labels: &'l Labels, name: &str) -> &'l str {
    labels.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
}

impl Storage for Scrapes<'_> {
    fn select(&mut self, matchers: &[Matcher], start: i64, end: i64) -> Result<Vec<Series>, Error> {
        let name = matchers.iter().find(|m| m.name == "__name__" && m.op == MatchOp::Equal).map(|m| m.value.clone());
        let target_labels = |target: &Target| [("job", target.job.to_string()), ("instance", target.instance())];
        let mut out: Vec<Series> = Vec::new();
        for index in 0..self.targets.len() {
            let target = self.targets[index].clone();
            if !target.may_have(name.as_deref()) {
                continue;
            }
            // A matcher on the target's own labels rules it out before any scrape.
            if target_labels(&target).iter().any(|(label, value)| matchers.iter().any(|m| m.name == *label && !m.matches(value))) {
                continue;
            }
            let mut series: Vec<Series> = Vec::new();
            let mut index_of: HashMap<Labels, usize> = HashMap::new();
            // The scrape each series was last seen in, for stale markers.
            let mut seen_in: Vec<usize> = Vec::new();
            for (scrape_number, at) in self.times(index, start, end).into_iter().enumerate() {
                let scrape = self.scrape(index, at, name.as_deref())?;
                for (labels, value) in &scrape.samples {
                    if !matchers.iter().all(|m| m.matches(label(labels, &m.name))) {
                        continue;
                    }
                    let i = match index_of.get(labels) {
                        Some(&i) => i,
                        None => {
                            index_of.insert(labels.clone(), series.len());
                            series.push(Series { labels: labels.clone(), points: Vec::new() });
                            seen_in.push(scrape_number);
                            series.len() - 1
                        }
                    };
                    series[i].points.push((at, *value));
                    seen_in[i] = scrape_number + 1;
                }
                // A series the previous scrape had and this one lacks went stale.
                for (i, seen) in seen_in.iter().enumerate() {
                    if *seen == scrape_number {
                        series[i].points.push((at, STALE));
                    }
                }
            }
            out.extend(series);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_text_format_take_the_targets_labels() {
        let base = [("instance".to_string(), "gpu-001:9400".to_string()), ("job".to_string(), "dcgm".to_string())];
        let (labels, value) = parse_line("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",Hostname=\"gpu-001\",job=\"x\\\"y\"} 41", &base).unwrap();
        assert_eq!(value, 41.0);
        let names: Vec<&str> = labels.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Hostname", "__name__", "exported_job", "gpu", "instance", "job"]);
        assert_eq!(label(&labels, "exported_job"), "x\"y");
        assert_eq!(parse_line("node_load1 0.5", &base).unwrap().1, 0.5);
    }
}
