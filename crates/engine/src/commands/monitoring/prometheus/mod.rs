//! The cluster's Prometheus (2.53, the LTS release), on the management
//! host `mgmt-01` (port 9090): it scrapes every node's exporters (see
//! [`scrape`]) and answers its HTTP API as Prometheus does: instant and
//! range queries in PromQL over the scraped history, label names and
//! values, series, targets, the configuration, build information, health.
//! Alerting rules are none until a lab loads some.

pub mod json;
pub mod scrape;

use super::rules;
use crate::commands::host::curl::Response;
use crate::commands::monitoring::promql::eval::{Evaluator, Labels, Value};
use crate::commands::monitoring::promql::parser;
use crate::commands::monitoring::promql::{valid_label_name, Error, ErrorKind};
use crate::model::time::{iso_utc, EpochSeconds};
use crate::model::Cluster;
use crate::rng::Rng;
use scrape::{Scrapes, SCRAPE_INTERVAL_MS};

pub const PORT: u16 = 9090;
pub const VERSION: &str = "2.53.3";
const REVISION: &str = "1491d29fb1e3d5fb8e0bc4b6d3e4b8c3f0ae8f0b";

/// The most points one range query may return per series, as Prometheus bounds it.
const MAX_POINTS: i64 = 11_000;

/// A request to the server: method, path with its query string, form body.
pub struct Request<'r> {
    pub method: &'r str,
    pub target: &'r str,
    pub body: &'r str,
}

/// The server's clock now, in ms: the lab's second and a seeded fraction.
pub fn now_ms(cluster: &Cluster) -> i64 {
    cluster.now * 1000 + Rng::derive(cluster.seed, &["prometheus", "now", &cluster.now.to_string()]).range_i64(0, 1000)
}

/// Go's `url.ParseQuery`: `&`-separated pairs, `+` a space, `%XX` a byte.
pub fn parse_form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (unescape(key), unescape(value))
        })
        .collect()
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes as curl's `--data-urlencode` does (letters, digits and `-._~` kept).
pub fn escape(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out += &format!("%{byte:02X}");
        }
    }
    out
}

/// A time parameter: Unix seconds (a fraction to the millisecond) or RFC 3339.
pub fn parse_time(text: &str) -> Option<i64> {
    if let Ok(seconds) = text.parse::<f64>() {
        return seconds.is_finite().then(|| (seconds * 1000.0).round() as i64).filter(|ms| ms.unsigned_abs() < 1 << 53);
    }
    // 2026-12-05T10:00:00Z, 2026-12-05T10:00:00.5Z, ...+01:00
    let (date, time) = text.split_once('T')?;
    let mut parts = date.split('-');
    let (year, month, day): (i64, u32, u32) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    let (clock, zone_seconds) = if let Some(clock) = time.strip_suffix('Z') {
        (clock, 0)
    } else {
        let split = time.rfind(['+', '-'])?;
        let (clock, zone) = time.split_at(split);
        let (hours, minutes) = zone[1..].split_once(':')?;
        let offset = i64::from(hours.parse::<u8>().ok()?) * 3600 + i64::from(minutes.parse::<u8>().ok()?) * 60;
        (clock, if zone.starts_with('-') { -offset } else { offset })
    };
    let (whole, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms = whole.split(':');
    let (h, m, s): (i64, i64, i64) =
        (i64::from(hms.next()?.parse::<u8>().ok()?), i64::from(hms.next()?.parse::<u8>().ok()?), i64::from(hms.next()?.parse::<u8>().ok()?));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || !(0..=9999).contains(&year) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}").get(..3)?.parse().ok()?;
    let seconds = crate::model::time::epoch_from_date(year, month, day) + h * 3600 + m * 60 + s - zone_seconds;
    Some(seconds * 1000 + millis)
}

/// A duration parameter: seconds (with a fraction) or `15s`, `1m`, `1h30m`.
pub fn parse_duration(text: &str) -> Option<i64> {
    if let Ok(seconds) = text.parse::<f64>() {
        return (seconds.is_finite() && seconds.abs() < 1e12).then(|| (seconds * 1000.0).round() as i64);
    }
    match crate::commands::monitoring::promql::lexer::tokens(text).ok()?.as_slice() {
        [(crate::commands::monitoring::promql::lexer::Token::Duration(ms), ..), (crate::commands::monitoring::promql::lexer::Token::End, ..)] => Some(*ms),
        _ => None,
    }
}

fn json(status: u16, body: String) -> Response {
    Response::with_type(status, "application/json", body)
}

fn bad_data(message: &str) -> Response {
    json(400, json::error("bad_data", message))
}

fn query_error(error: &Error) -> Response {
    match error.kind {
        ErrorKind::Parse => bad_data(&format!("invalid parameter \"query\": {error}")),
        ErrorKind::Execution => json(422, json::error("execution", &error.to_string())),
    }
}

/// The server's answer.
pub fn serve(cluster: &Cluster, request: &Request) -> Response {
    let (path, query) = request.target.split_once('?').unwrap_or((request.target, ""));
    let path = path.split('#').next().unwrap_or("/");
    // Go's FormValue: a POST's body before the URL's query.
    let mut params = if request.method == "POST" { parse_form(request.body) } else { Vec::new() };
    params.extend(parse_form(query));
    let param = |name: &str| params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let api = path.starts_with("/api/v1/");
    if api && !matches!(request.method, "GET" | "POST" | "HEAD") {
        return Response::with_type(405, "text/plain; charset=utf-8", "Method Not Allowed\n".to_string());
    }
    let now = now_ms(cluster);
    match path {
        "/api/v1/query" => {
            let at = match param("time") {
                None | Some("") => now,
                Some(text) => match parse_time(text) {
                    Some(ms) => ms,
                    None => return bad_data(&format!("invalid parameter \"time\": Invalid time value for 'time': cannot parse {text:?} to a valid timestamp")),
                },
            };
            instant_query(cluster, param("query").unwrap_or(""), at, now)
        }
        "/api/v1/query_range" => range_query(cluster, param("query").unwrap_or(""), param("start"), param("end"), param("step"), now),
        "/api/v1/labels" => {
            let names = label_values(cluster, None, now);
            json(200, json::success(&string_list(&names)))
        }
        "/api/v1/series" => {
            let matches: Vec<&str> = params.iter().filter(|(key, _)| key == "match[]").map(|(_, v)| v.as_str()).collect();
            series(cluster, &matches, now)
        }
        "/api/v1/targets" => json(200, json::success(&targets_json(cluster, now))),
        "/api/v1/alerts" => json(200, json::success(&alerts_json(cluster, now))),
        "/api/v1/rules" => match param("type") {
            None | Some("") => json(200, json::success(&rules_json(cluster, now, None))),
            Some(kind @ ("alert" | "record")) => json(200, json::success(&rules_json(cluster, now, Some(kind)))),
            Some(other) => bad_data(&format!("invalid parameter \"type\": not supported value {other:?}")),
        },
        "/api/v1/status/config" => json(200, json::success(&format!("{{\"yaml\":{}}}", json::string(&config_yaml(cluster), true)))),
        "/api/v1/status/buildinfo" => json(
            200,
            json::success(&format!(
                "{{\"version\":\"{VERSION}\",\"revision\":\"{REVISION}\",\"branch\":\"HEAD\",\"buildUser\":\"root@buildkitsandbox\",\"buildDate\":\"20241105-10:21:43\",\"goVersion\":\"go1.22.8\"}}"
            )),
        ),
        "/-/healthy" => Response::with_type(200, "", "Prometheus Server is Healthy.\n".to_string()),
        // The lifecycle API is on; a reload has nothing to do, the rules'
        // reloader having loaded every file as it was written.
        "/-/reload" if matches!(request.method, "POST" | "PUT") => Response::with_type(200, "", String::new()),
        "/-/reload" => Response::with_type(405, "", "Only POST or PUT requests allowed\n".to_string()),
        "/-/ready" => Response::with_type(200, "", "Prometheus Server is Ready.\n".to_string()),
        "/" => Response::redirect("/graph", "<a href=\"/graph\">Found</a>.\n\n"),
        "/graph" => Response::with_type(200, "text/html; charset=utf-8", GRAPH_PAGE.to_string()),
        _ => match path.strip_prefix("/api/v1/label/").and_then(|rest| rest.strip_suffix("/values")) {
            Some(name) => {
                let name = unescape(name);
                if !valid_label_name(&name) {
                    return bad_data(&format!("invalid label name: {name:?}"));
                }
                json(200, json::success(&string_list(&label_values(cluster, Some(&name), now))))
            }
            None => Response::not_found(),
        },
    }
}

fn string_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| json::string(item, true)).collect();
    format!("[{}]", quoted.join(","))
}

/// Evaluates `query` at `at` (ms): the value, or the API's error.
pub fn evaluate(cluster: &Cluster, query: &str, at: i64, now: i64) -> Result<Value, Error> {
    let expr = parser::parse(query)?;
    let mut storage = Scrapes::new(cluster, now);
    Evaluator::new(&mut storage, at, at).eval(&expr, at)
}

fn instant_query(cluster: &Cluster, query: &str, at: i64, now: i64) -> Response {
    match evaluate(cluster, query, at, now) {
        Ok(value) => json(200, json::success(&json::result(&value, at))),
        Err(error) => query_error(&error),
    }
}

/// A range query's series, or the API's error as (status, kind, message).
pub fn evaluate_range(
    cluster: &Cluster,
    query: &str,
    start: i64,
    end: i64,
    step: i64,
    now: i64,
) -> Result<Vec<crate::commands::monitoring::promql::eval::Series>, Error> {
    let expr = parser::parse(query)?;
    if matches!(expr.kind(), parser::Type::String | parser::Type::Matrix) {
        return Err(Error {
            kind: ErrorKind::Parse,
            position: None,
            message: format!("invalid expression type {:?} for range query, must be Scalar or instant Vector", expr.kind().name()),
        });
    }
    let mut steps = Vec::new();
    let mut t = start;
    while t <= end {
        steps.push(t);
        t += step;
    }
    let mut storage = Scrapes::new(cluster, now);
    Evaluator::new(&mut storage, start, end).range(&expr, &steps)
}

fn range_query(cluster: &Cluster, query: &str, start: Option<&str>, end: Option<&str>, step: Option<&str>, now: i64) -> Response {
    let time = |name: &str, text: Option<&str>| {
        let text = text.unwrap_or("");
        parse_time(text).ok_or_else(|| bad_data(&format!("invalid parameter \"{name}\": cannot parse {text:?} to a valid timestamp")))
    };
    let start = match time("start", start) {
        Ok(ms) => ms,
        Err(response) => return response,
    };
    let end = match time("end", end) {
        Ok(ms) => ms,
        Err(response) => return response,
    };
    if end < start {
        return bad_data("invalid parameter \"end\": end timestamp must not be before start time");
    }
    let step_text = step.unwrap_or("");
    let Some(step) = parse_duration(step_text) else {
        return bad_data(&format!("invalid parameter \"step\": cannot parse {step_text:?} to a valid duration"));
    };
    if step <= 0 {
        return bad_data("invalid parameter \"step\": zero or negative query resolution step widths are not accepted. Try a positive integer");
    }
    if (end - start) / step > MAX_POINTS {
        return bad_data("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)");
    }
    match evaluate_range(cluster, query, start, end, step, now) {
        Ok(series) => json(200, json::success(&json::matrix(&series))),
        Err(error) if error.kind == ErrorKind::Parse && error.position.is_none() && error.message.starts_with("invalid expression type") => {
            bad_data(&format!("invalid parameter \"query\": {}", error.message))
        }
        Err(error) => query_error(&error),
    }
}

/// The newest scrape of every target: what `labels`, `label/.../values`
/// and `series` read when no time range is given (the head block).
fn latest(cluster: &Cluster, now: i64) -> Vec<Labels> {
    let mut storage = Scrapes::new(cluster, now);
    let mut all = Vec::new();
    for index in 0..storage.targets.len() {
        let Some(&at) = storage.times(index, now - SCRAPE_INTERVAL_MS, now).last() else { continue };
        if let Ok(scrape) = storage.scrape(index, at, None) {
            all.extend(scrape.samples.iter().map(|(labels, _)| labels.clone()));
        }
    }
    all
}

/// Label names (`name` None) or one label's values, sorted.
pub fn label_values(cluster: &Cluster, name: Option<&str>, now: i64) -> Vec<String> {
    let mut values: Vec<String> = latest(cluster, now)
        .iter()
        .flat_map(|labels| {
            labels
                .iter()
                .filter(|(label, _)| name.is_none_or(|name| label == name))
                .map(|(label, value)| if name.is_some() { value.clone() } else { label.clone() })
                .collect::<Vec<_>>()
        })
        .collect();
    crate::sort::sort_by(&mut values, |a, b| a.cmp(b));
    values.dedup();
    values
}

fn series(cluster: &Cluster, matches: &[&str], now: i64) -> Response {
    match matching_series(cluster, matches, now) {
        Ok(found) => {
            let items: Vec<String> = found.iter().map(json::labels).collect();
            json(200, json::success(&format!("[{}]", items.join(","))))
        }
        Err(message) => bad_data(&message),
    }
}

/// The series `matches` select in the newest scrapes, or the API's complaint.
pub fn matching_series(cluster: &Cluster, matches: &[&str], now: i64) -> Result<Vec<Labels>, String> {
    if matches.is_empty() {
        return Err("no match[] parameter provided".into());
    }
    let mut selectors = Vec::new();
    for text in matches {
        match parser::parse(text) {
            Ok(parser::Expr::Vector(selector)) => selectors.push(selector),
            Ok(_) => return Err("invalid parameter \"match[]\": 1:1: parse error: unexpected expression type, expected vector selector".into()),
            Err(error) => return Err(format!("invalid parameter \"match[]\": {error}")),
        }
    }
    let mut found: Vec<Labels> = latest(cluster, now)
        .into_iter()
        .filter(|labels| {
            selectors
                .iter()
                .any(|selector| selector.matchers.iter().all(|m| m.matches(labels.iter().find(|(n, _)| *n == m.name).map_or("", |(_, v)| v.as_str()))))
        })
        .collect();
    crate::sort::sort_by(&mut found, |a, b| a.cmp(b));
    found.dedup();
    Ok(found)
}

/// RFC 3339 with nanoseconds, as Go prints a scrape's time.
fn rfc3339_nano(ms: i64, extra_nanos: u32) -> String {
    let seconds: EpochSeconds = ms.div_euclid(1000);
    let base = iso_utc(seconds);
    let nanos = (ms.rem_euclid(1000) as u32) * 1_000_000 + extra_nanos;
    let fraction = format!("{nanos:09}");
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        base
    } else {
        format!("{}.{fraction}Z", base.trim_end_matches('Z'))
    }
}

fn targets_json(cluster: &Cluster, now: i64) -> String {
    let mut storage = Scrapes::new(cluster, now);
    let mut items = Vec::new();
    for index in 0..storage.targets.len() {
        let target = storage.targets[index].clone();
        let last = storage.times(index, now - SCRAPE_INTERVAL_MS, now).last().copied();
        let scrape = last.and_then(|at| storage.scrape(index, at, Some("up")).ok());
        let up = scrape.as_ref().is_some_and(|s| s.up);
        let mut rng = Rng::derive(cluster.seed, &["prometheus", "target", &target.instance(), &now.to_string()]);
        let (health, error) = match (&scrape, up) {
            (None, _) => ("unknown", String::new()),
            (Some(_), true) => ("up", String::new()),
            (Some(_), false) => ("down", target_error(cluster, &target)),
        };
        let duration = if up { 0.002 + rng.unit_f64() * 0.03 } else { 0.000_5 + rng.unit_f64() * 0.001 };
        let discovered = format!(
            "{{\"__address__\":\"{}\",\"__metrics_path__\":\"/metrics\",\"__scheme__\":\"http\",\"__scrape_interval__\":\"15s\",\"__scrape_timeout__\":\"10s\",\"job\":\"{}\"}}",
            target.instance(),
            target.job
        );
        items.push(format!(
            "{{\"discoveredLabels\":{discovered},\"labels\":{{\"instance\":\"{}\",\"job\":\"{}\"}},\"scrapePool\":\"{}\",\"scrapeUrl\":\"{}\",\"globalUrl\":\"{}\",\"lastError\":{},\"lastScrape\":\"{}\",\"lastScrapeDuration\":{},\"health\":\"{health}\",\"scrapeInterval\":\"15s\",\"scrapeTimeout\":\"10s\"}}",
            target.instance(),
            target.job,
            target.job,
            target.url(),
            target.url().replace("localhost", "mgmt-01"),
            json::string(&error, true),
            rfc3339_nano(last.unwrap_or(now), rng.range_u64(0, 1_000_000) as u32),
            json::float_f((duration * 1e9).round() / 1e9),
        ));
    }
    // Go's map of the jobs, in key order.
    let servers = if scrape::vllm_hosts(cluster).is_empty() { "" } else { ",\"vllm\":0" };
    format!("{{\"activeTargets\":[{}],\"droppedTargets\":[],\"droppedTargetCounts\":{{\"dcgm\":0,\"node\":0,\"prometheus\":0{servers}}}}}", items.join(","))
}

/// Why a target's last scrape failed, in Go's words.
fn target_error(cluster: &Cluster, target: &scrape::Target) -> String {
    let address = crate::model::network::frontend_ip(&target.host);
    let node = cluster.node(&target.host);
    if node.is_some_and(|node| node.up(cluster.now)) {
        format!("Get \"{}\": dial tcp {address}:{}: connect: connection refused", target.url(), target.port)
    } else {
        format!("Get \"{}\": context deadline exceeded", target.url())
    }
}

/// `/etc/prometheus/prometheus.yml` as the server reads it back.
pub fn config_yaml(cluster: &Cluster) -> String {
    let list = |port: u16| -> String { cluster.nodes.iter().map(|node| format!("    - {}:{port}\n", node.hostname)).collect() };
    let servers: String = scrape::vllm_hosts(cluster).iter().map(|host| format!("    - {host}:{}\n", crate::commands::monitoring::vllm::PORT)).collect();
    let servers = if servers.is_empty() { String::new() } else { job_yaml("vllm", &servers) };
    format!(
        "global:\n  scrape_interval: 15s\n  scrape_timeout: 10s\n  scrape_protocols:\n  - OpenMetricsText1.0.0\n  - OpenMetricsText0.0.1\n  - PrometheusText0.0.4\n  evaluation_interval: 15s\nalerting:\n  alertmanagers:\n  - follow_redirects: true\n    enable_http2: true\n    scheme: http\n    timeout: 10s\n    api_version: v2\n    static_configs:\n    - targets: []\nrule_files:\n- {RULES}/*.yml\n- {RULES}/*.yaml\nscrape_configs:\n- job_name: prometheus\n  honor_timestamps: true\n  track_timestamps_staleness: false\n  scrape_interval: 15s\n  scrape_timeout: 10s\n  scrape_protocols:\n  - OpenMetricsText1.0.0\n  - OpenMetricsText0.0.1\n  - PrometheusText0.0.4\n  metrics_path: /metrics\n  scheme: http\n  enable_compression: true\n  follow_redirects: true\n  enable_http2: true\n  static_configs:\n  - targets:\n    - localhost:9090\n{}{}{servers}",
        job_yaml("node", &list(crate::commands::host::node_exporter::PORT)),
        job_yaml("dcgm", &list(crate::commands::gpu::dcgm_exporter::PORT)),
        RULES = crate::model::storage::RULES_DIR,
    )
}

fn job_yaml(name: &str, targets: &str) -> String {
    format!(
        "- job_name: {name}\n  honor_timestamps: true\n  track_timestamps_staleness: false\n  scrape_interval: 15s\n  scrape_timeout: 10s\n  scrape_protocols:\n  - OpenMetricsText1.0.0\n  - OpenMetricsText0.0.1\n  - PrometheusText0.0.4\n  metrics_path: /metrics\n  scheme: http\n  enable_compression: true\n  follow_redirects: true\n  enable_http2: true\n  static_configs:\n  - targets:\n{targets}"
    )
}

/// An alert as the API writes it.
fn alert_json(alert: &rules::Alert) -> String {
    let kept = alert.keep_firing_since_ms.map_or(String::new(), |ms| format!("\"keepFiringSince\":\"{}\",", rfc3339_nano(ms, 0)));
    format!(
        "{{\"labels\":{},\"annotations\":{},\"state\":\"{}\",\"activeAt\":\"{}\",{kept}\"value\":\"{}\"}}",
        json::labels(&alert.labels),
        json::labels(&alert.annotations),
        if alert.firing { "firing" } else { "pending" },
        rfc3339_nano(alert.active_at_ms, 0),
        json::float_e(alert.value)
    )
}

/// `/api/v1/alerts`: every loaded alerting rule's alerts now.
fn alerts_json(cluster: &Cluster, now: i64) -> String {
    let mut storage = Scrapes::new(cluster, now);
    let mut items = Vec::new();
    for (group, loaded) in rules::loaded(cluster) {
        for rule in &group.rules {
            items.extend(rules::alerts(&mut storage, &group, rule, loaded, now).iter().map(alert_json));
        }
    }
    format!("{{\"alerts\":[{}]}}", items.join(","))
}

/// `/api/v1/rules`: the loaded groups, their rules (of `kind` only, when
/// given) with each alerting rule's state and alerts.
fn rules_json(cluster: &Cluster, now: i64, kind: Option<&str>) -> String {
    let mut storage = Scrapes::new(cluster, now);
    let mut groups = Vec::new();
    for (group, loaded) in rules::loaded(cluster) {
        let last = rules::last_evaluation(&group, loaded, now).unwrap_or(loaded);
        let evaluated = rfc3339_nano(last, 412_337);
        let mut items = Vec::new();
        for rule in &group.rules {
            let query = json::string(&rule.expr_text.split_whitespace().collect::<Vec<_>>().join(" "), true);
            match (&rule.name, kind) {
                (rules::Name::Alert(name), None | Some("alert")) => {
                    let alerts = rules::alerts(&mut storage, &group, rule, loaded, now);
                    let state = if alerts.iter().any(|a| a.firing) {
                        "firing"
                    } else if alerts.is_empty() {
                        "inactive"
                    } else {
                        "pending"
                    };
                    let listed: Vec<String> = alerts.iter().map(alert_json).collect();
                    items.push(format!(
                        "{{\"state\":\"{state}\",\"name\":{},\"query\":{query},\"duration\":{},\"keepFiringFor\":{},\"labels\":{},\"annotations\":{},\"alerts\":[{}],\"health\":\"ok\",\"evaluationTime\":0.000512337,\"lastEvaluation\":\"{evaluated}\",\"type\":\"alerting\"}}",
                        json::string(name, true),
                        rule.for_ms / 1000,
                        rule.keep_firing_for_ms / 1000,
                        json::labels(&rule.labels),
                        json::labels(&rule.annotations),
                        listed.join(",")
                    ));
                }
                (rules::Name::Record(name), None | Some("record")) => {
                    let labels = if rule.labels.is_empty() { String::new() } else { format!("\"labels\":{},", json::labels(&rule.labels)) };
                    items.push(format!(
                        "{{\"name\":{},\"query\":{query},{labels}\"health\":\"ok\",\"evaluationTime\":0.000301822,\"lastEvaluation\":\"{evaluated}\",\"type\":\"recording\"}}",
                        json::string(name, true)
                    ));
                }
                _ => {}
            }
        }
        if items.is_empty() && kind.is_some() {
            continue;
        }
        groups.push(format!(
            "{{\"name\":{},\"file\":{},\"rules\":[{}],\"interval\":{},\"limit\":0,\"evaluationTime\":0.000931552,\"lastEvaluation\":\"{evaluated}\"}}",
            json::string(&group.name, true),
            json::string(&group.file, true),
            items.join(","),
            group.interval_ms / 1000
        ));
    }
    format!("{{\"groups\":[{}]}}", groups.join(","))
}

/// The web UI's page: a script-driven application a terminal cannot run.
const GRAPH_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"/><link rel=\"shortcut icon\" href=\"./favicon.ico\"/><meta name=\"viewport\" content=\"width=device-width,initial-scale=1,shrink-to-fit=no\"/><meta name=\"theme-color\" content=\"#000000\"/><script>const GLOBAL_CONSOLES_LINK=\"\",GLOBAL_AGENT_MODE=\"false\",GLOBAL_READY=\"true\"</script><link rel=\"manifest\" href=\"./manifest.json\" crossorigin=\"use-credentials\"/><title>Prometheus Time Series Collection and Processing Server</title></head><body class=\"bootstrap\"><noscript>You need to enable JavaScript to run this app.</noscript><div id=\"root\"></div></body></html>";

#[cfg(test)]
mod tests;
