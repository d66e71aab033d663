//! `promtool` 2.53: `query instant|range|labels|series` against a
//! Prometheus server (printed as client_golang's values print, or `-o
//! json`), and `--version`. The server is reached as Go's HTTP client
//! reaches it, with its errors: a refused or unanswered connection, a name
//! that does not resolve, a URL without its scheme.

use super::prometheus::{self, json, parse_duration, parse_time};
use super::promql::eval::{format_labels, Labels, Series, Value};
use super::promql::ErrorKind;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::network::{frontend_ip, MONITOR_HOST, MONITOR_IP};

pub struct Promtool;

static SIGNATURE: Signature = Signature {
    name: "promtool",
    summary: "Tooling for the Prometheus monitoring system",
    usage: "promtool [<flags>] <command> [<args> ...]",
    flags: &[
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Show context-sensitive help (also try --help-long and --help-man)." },
        Flag { short: None, long: Some("version"), value: None, help: "Show application version." },
        Flag { short: Some('o'), long: Some("format"), value: Some("promql"), help: "Output format of the query." },
        Flag { short: None, long: Some("time"), value: Some("TIME"), help: "Query evaluation time (RFC3339 or Unix timestamp)." },
        Flag { short: None, long: Some("start"), value: Some("START"), help: "Query range start time (RFC3339 or Unix timestamp)." },
        Flag { short: None, long: Some("end"), value: Some("END"), help: "Query range end time (RFC3339 or Unix timestamp)." },
        Flag { short: None, long: Some("step"), value: Some("STEP"), help: "Query step size (duration)." },
        Flag { short: None, long: Some("match"), value: Some("MATCH"), help: "Series selector. Can be specified multiple times." },
    ],
    examples: &[
        Example { command: "promtool query instant http://mgmt-01:9090 'up == 0'", description: "which scrape targets are down now" },
        Example {
            command: "promtool query range --start=$(date -d '-1 hour' +%s) --end=$(date +%s) --step=5m http://mgmt-01:9090 'max by (instance) (DCGM_FI_DEV_GPU_TEMP)'",
            description: "each node's hottest GPU over the last hour",
        },
    ],
};

const USAGE: &str = "usage: promtool [<flags>] <command> [<args> ...]

Tooling for the Prometheus monitoring system.


Flags:
  -h, --[no-]help            Show context-sensitive help (also try --help-long
                             and --help-man).
      --[no-]version         Show application version.
      --[no-]experimental    Enable experimental commands.
      --enable-feature=ENABLE-FEATURE ...
                             Comma separated feature names to enable (only
                             PromQL related and no-default-scrape-port). See
                             https://prometheus.io/docs/prometheus/latest/feature_flags/
                             for the options and more details.

Commands:
help [<command>...]
    Show help.

check config [<flags>] <config-files>...
    Check if the config files are valid or not.

check rules [<flags>] [<rule-files>...]
    Check if the rule files are valid or not.

query instant [<flags>] <server> <expr>
    Run instant query.

query range [<flags>] <server> <expr>
    Run range query.

query series --match=MATCH [<flags>] <server>
    Run series query.

query labels [<flags>] <server> <name>
    Run labels query.

";

fn kingpin(message: &str) -> Output {
    Output::error(format!("promtool: error: {message}, try --help\n"), 1)
}

/// Where a query goes: the server's URL taken apart, or Go's error for it.
struct Server {
    host: String,
    port: u16,
    base: String,
}

fn server(text: &str) -> Result<Server, String> {
    let Some((scheme, rest)) = text.split_once("://") else {
        // url.Parse reads `mgmt-01:9090` as scheme `mgmt-01`.
        let scheme = text.split_once(':').map_or("", |(scheme, _)| scheme);
        return Err(format!("unsupported protocol scheme {scheme:?}"));
    };
    if scheme != "http" && scheme != "https" {
        return Err(format!("unsupported protocol scheme {scheme:?}"));
    }
    let authority = rest.split('/').next().unwrap_or("");
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().map_err(|_| format!("invalid port {:?} after host", format!(":{port}")))?),
        None => (authority, if scheme == "https" { 443 } else { 80 }),
    };
    Ok(Server { host: host.to_string(), port, base: text.trim_end_matches('/').to_string() })
}

/// Whether client_golang's POST to `path` reaches the server, or Go's
/// error for why not; the caller then asks the server's engine itself.
fn reach(invocation: &Invocation, server: &Server, path: &str) -> Result<(), String> {
    let cluster = invocation.cluster;
    let url = format!("{}{path}", server.base);
    let me = invocation.node;
    let monitor = server.host == MONITOR_HOST || server.host == MONITOR_IP;
    let node = match server.host.as_str() {
        "localhost" | "127.0.0.1" => Some(me),
        host => cluster.nodes.iter().map(AsRef::as_ref).find(|node| node.hostname == host || frontend_ip(&node.hostname) == host),
    };
    let address = if monitor {
        MONITOR_IP.to_string()
    } else {
        node.map_or(String::new(), |node| if server.host == "localhost" { "127.0.0.1".into() } else { frontend_ip(&node.hostname) })
    };
    if !monitor {
        let Some(node) = node else {
            return Err(format!("Post {url:?}: dial tcp: lookup {} on 127.0.0.53:53: no such host", server.host));
        };
        if !node.up(cluster.now) {
            return Err(format!("Post {url:?}: dial tcp {address}:{}: i/o timeout", server.port));
        }
        return Err(format!("Post {url:?}: dial tcp {address}:{}: connect: connection refused", server.port));
    }
    if server.port != prometheus::PORT {
        return Err(format!("Post {url:?}: dial tcp {address}:{}: connect: connection refused", server.port));
    }
    if server.base.starts_with("https://") {
        return Err(format!("Post {url:?}: http: server gave HTTP response to HTTPS client"));
    }
    Ok(())
}

/// A label set as client_golang prints a metric: `up{instance="a", job="b"}`.
fn metric(labels: &Labels) -> String {
    format_labels(labels)
}

/// A series' time: the seconds, shortest.
fn at(ms: i64) -> String {
    json::float_f(ms as f64 / 1000.0)
}

/// client_golang's `LabelSet.Before`: fewer labels first, then by value
/// over the names of both, in order.
fn before(a: &Labels, b: &Labels) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| {
        let mut names: Vec<&String> = a.iter().chain(b.iter()).map(|(name, _)| name).collect();
        crate::sort::sort_by(&mut names, |x, y| x.cmp(y));
        names.dedup();
        let get = |labels: &Labels, name: &str| labels.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
        names.iter().map(|name| get(a, name).cmp(&get(b, name))).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
    })
}

fn print_value(value: &Value, at_ms: i64) -> String {
    match value {
        Value::Scalar(v) => format!("scalar: {} @[{}]\n", json::float_f(*v), at(at_ms)),
        Value::String(s) => format!("{s}\n"),
        Value::Vector(samples) => {
            let lines: Vec<String> = samples.iter().map(|s| format!("{} => {} @[{}]", metric(&s.labels), json::float_f(s.value), at(at_ms))).collect();
            format!("{}\n", lines.join("\n"))
        }
        Value::Matrix(series) => print_matrix(series),
    }
}

fn print_matrix(series: &[Series]) -> String {
    let mut series: Vec<&Series> = series.iter().collect();
    crate::sort::sort_by(&mut series, |a, b| before(&a.labels, &b.labels));
    let streams: Vec<String> = series
        .iter()
        .map(|s| {
            let points: Vec<String> = s.points.iter().map(|(t, v)| format!("{} @[{}]", json::float_f(*v), at(*t))).collect();
            format!("{} =>\n{}", metric(&s.labels), points.join("\n"))
        })
        .collect();
    format!("{}\n", streams.join("\n"))
}

/// The JSON client_golang encodes a value to (`json.Encoder`, a newline after).
fn json_value(value: &Value, at_ms: i64) -> String {
    let sample_time = |ms: i64| json::float_f(ms as f64 / 1000.0);
    let text = match value {
        Value::Scalar(v) => format!("{{\"value\":\"{}\",\"timestamp\":{}}}", json::float_f(*v), sample_time(at_ms)),
        Value::String(s) => format!("{{\"value\":{},\"timestamp\":{}}}", json::string(s, true), sample_time(at_ms)),
        Value::Vector(samples) => {
            let items: Vec<String> = samples
                .iter()
                .map(|s| format!("{{\"metric\":{},\"value\":[{},\"{}\"]}}", json::labels(&s.labels), json::timestamp(at_ms), json::float_f(s.value)))
                .collect();
            format!("[{}]", items.join(","))
        }
        Value::Matrix(series) => json::matrix(series).trim_start_matches("{\"resultType\":\"matrix\",\"result\":").trim_end_matches('}').to_string(),
    };
    format!("{text}\n")
}

/// The API's error as promtool reports it.
fn api_error(error: &super::promql::Error, query_parameter: bool) -> Output {
    let (kind, message) = match error.kind {
        ErrorKind::Parse if query_parameter => ("bad_data", format!("invalid parameter \"query\": {error}")),
        ErrorKind::Parse => ("bad_data", error.to_string()),
        ErrorKind::Execution => ("execution", error.to_string()),
    };
    Output::error(format!("query error: {kind}: {message}\n"), 1)
}

struct Options {
    json: bool,
    time: Option<String>,
    start: Option<String>,
    end: Option<String>,
    step: Option<String>,
    matches: Vec<String>,
}

impl Command for Promtool {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut options = Options { json: false, time: None, start: None, end: None, step: None, matches: Vec::new() };
        let mut words = Vec::new();
        for arg in crate::commands::options::scan(&SIGNATURE, invocation.args()) {
            use crate::commands::options::Arg;
            match arg {
                Arg::Flag(flag, value) => match flag.long.unwrap_or_default() {
                    "help" => return Output::ok(USAGE),
                    "version" => return Output::ok(format!(
                        "promtool, version {} (branch: HEAD, revision: 1491d29fb1e3d5fb8e0bc4b6d3e4b8c3f0ae8f0b)\n  build user:       root@buildkitsandbox\n  build date:       20241105-10:21:43\n  go version:       go1.22.8\n  platform:         linux/amd64\n  tags:             netgo,builtinassets,stringlabels\n",
                        prometheus::VERSION
                    )),
                    "format" => match value.as_deref() {
                        Some("json") => options.json = true,
                        Some("promql") => options.json = false,
                        Some(other) => return kingpin(&format!("enum value must be one of promql,json, got '{other}'")),
                        None => {}
                    },
                    "time" => options.time = value,
                    "start" => options.start = value,
                    "end" => options.end = value,
                    "step" => options.step = value,
                    "match" => options.matches.extend(value),
                    _ => {}
                },
                Arg::Positional(word) => words.push(word),
                Arg::Unknown(text) => return kingpin(&format!("unknown long flag '{}'", text.split('=').next().unwrap_or(&text))),
                Arg::MissingValue(flag) => return kingpin(&format!("expected argument for flag '--{}'", flag.long.unwrap_or_default())),
            }
        }
        let mut words = words.into_iter();
        match (words.next().as_deref(), words.next().as_deref()) {
            (None, _) => Output::error(format!("{USAGE}promtool: error: expected command but got nothing\n"), 1),
            (Some("help"), _) => Output::ok(USAGE),
            (Some("query"), Some(kind @ ("instant" | "range" | "labels" | "series"))) => query(invocation, kind, words.collect(), &options),
            (Some("query"), Some(other)) => kingpin(&format!("expected command but got {other:?}")),
            (Some("query"), None) => kingpin("expected command but got nothing"),
            (Some("check"), Some("rules")) => check_rules(invocation, words.collect()),
            (Some("check" | "test" | "tsdb" | "debug" | "push" | "promql"), _) => Output::error(
                "promtool: this subcommand is not emulated; try 'promtool check rules FILE' or 'promtool query instant http://mgmt-01:9090 EXPR'\n".to_string(),
                1,
            ),
            (Some(other), _) => kingpin(&format!("expected command but got {other:?}")),
        }
    }
}

/// `promtool check rules FILE...`: each file's groups checked as
/// Prometheus loads them (standard input when no file is named).
fn check_rules(invocation: &Invocation, files: Vec<String>) -> Output {
    let view = crate::commands::files::View::for_command(invocation);
    let mut output = Output::default();
    let inputs: Vec<(String, Result<String, String>)> = if files.is_empty() {
        vec![("standard input".to_string(), Ok(invocation.stdin.to_string()))]
    } else {
        files
            .iter()
            .map(|file| (file.clone(), view.read(file).map(|text| text.into_owned()).map_err(|reason| format!("open {file}: {}", reason.to_lowercase()))))
            .collect()
    };
    for (name, text) in inputs {
        output.stdout += &format!("Checking {name}\n");
        let result = text.map_err(|error| vec![error]).and_then(|text| super::rules::parse_file(&name, &text));
        match result {
            Ok(groups) => output.stdout += &format!("  SUCCESS: {} rules found\n\n", groups.iter().map(|group| group.rules.len()).sum::<usize>()),
            Err(errors) => {
                output.stderr += "  FAILED:\n";
                for error in errors {
                    output.stderr += &format!("{error}\n");
                }
                output.status = 1;
            }
        }
    }
    output
}

fn query(invocation: &Invocation, kind: &str, args: Vec<String>, options: &Options) -> Output {
    let cluster = invocation.cluster;
    let needs = match kind {
        "series" => 1,
        _ => 2,
    };
    if args.is_empty() {
        return kingpin("required argument 'server' not provided");
    }
    if args.len() < needs {
        return kingpin(if kind == "labels" { "required argument 'name' not provided" } else { "required argument 'expr' not provided" });
    }
    if args.len() > needs {
        return kingpin(&format!("unexpected {}", args[needs]));
    }
    let server = match server(&args[0]) {
        Ok(server) => server,
        Err(error) => return Output::error(format!("query error: Post \"{}/api/v1/query\": {error}\n", args[0].trim_end_matches('/')), 1),
    };
    let now = prometheus::now_ms(cluster);
    let time = |text: &Option<String>, default: i64| -> Result<i64, Output> {
        match text {
            None => Ok(default),
            Some(text) => parse_time(text).ok_or_else(|| Output::error(format!("error parsing time: cannot parse {text:?} to a valid timestamp\n"), 1)),
        }
    };
    match kind {
        "instant" => {
            let at = match time(&options.time, now) {
                Ok(at) => at,
                Err(output) => return output,
            };
            if let Err(error) = reach(invocation, &server, "/api/v1/query") {
                return Output::error(format!("query error: {error}\n"), 1);
            }
            match prometheus::evaluate(cluster, &args[1], at, now) {
                Ok(value) => Output::ok(if options.json { json_value(&value, at) } else { print_value(&value, at) }),
                Err(error) => api_error(&error, true),
            }
        }
        "range" => {
            let end = match time(&options.end, now) {
                Ok(end) => end,
                Err(output) => return output,
            };
            let start = match time(&options.start, end - 300_000) {
                Ok(start) => start,
                Err(output) => return output,
            };
            if start >= end && options.start.is_some() {
                return Output::error("start time is not before end time\n", 1);
            }
            let step = match &options.step {
                Some(text) => match parse_duration(text) {
                    Some(step) if step > 0 => step,
                    _ => return kingpin(&format!("time: invalid duration {text:?}")),
                },
                None => ((end - start) / 1000 / 250).max(1) * 1000,
            };
            if let Err(error) = reach(invocation, &server, "/api/v1/query_range") {
                return Output::error(format!("query error: {error}\n"), 1);
            }
            if (end - start) / step > 11_000 {
                return Output::error(
                    "query error: bad_data: exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)\n",
                    1,
                );
            }
            match prometheus::evaluate_range(cluster, &args[1], start, end, step, now) {
                Ok(series) => Output::ok(if options.json { json_value(&Value::Matrix(series), end) } else { print_matrix(&series) }),
                Err(error) => api_error(&error, true),
            }
        }
        _ => {
            let path = if kind == "labels" { format!("/api/v1/label/{}/values", args[1]) } else { "/api/v1/series".to_string() };
            if kind == "series" && options.matches.is_empty() {
                return kingpin("required flag --match not provided");
            }
            if let Err(error) = reach(invocation, &server, &path) {
                return Output::error(format!("query error: {error}\n"), 1);
            }
            if kind == "labels" {
                let values = prometheus::label_values(cluster, Some(&args[1]), now);
                return Output::ok(values.iter().map(|value| format!("{value}\n")).collect::<String>());
            }
            let matches: Vec<&str> = options.matches.iter().map(String::as_str).collect();
            match prometheus::matching_series(cluster, &matches, now) {
                Ok(found) => Output::ok(found.iter().map(|labels| format!("{}\n", label_set(labels))).collect::<String>()),
                Err(message) => Output::error(format!("query error: bad_data: {message}\n"), 1),
            }
        }
    }
}

/// client_golang's `LabelSet.String()`: `{__name__="up", job="node"}`.
fn label_set(labels: &Labels) -> String {
    let pairs: Vec<String> = labels.iter().map(|(name, value)| format!("{name}={}", super::promql::lexer::quote(value))).collect();
    format!("{{{}}}", pairs.join(", "))
}
