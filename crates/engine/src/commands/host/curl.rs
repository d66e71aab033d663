//! `curl [options] URL...` as Ubuntu 22.04's curl 7.81.0 answers: HTTP to
//! the services the nodes run (dcgm-exporter on port 9400, node_exporter on
//! 9100). A port nothing
//! listens on refuses the connection, a node that is down lets it time out,
//! a name the lab does not know fails to resolve; TLS to a plain-HTTP port
//! fails as OpenSSL 3 does. The server's headers are Go net/http's: the
//! handler's own sorted, then `Date`, `Content-Length` (a body under 2 KiB,
//! which Go buffers) or `Transfer-Encoding: chunked`, and the sniffed
//! `Content-Type`.
//!
//! The progress meter goes to standard error when the body does not go to
//! the terminal and `-s` is not given: its first line at the start of the
//! transfer, `\r`, and its last when it ends, as curl redraws it.

use crate::commands::files::View;
use crate::commands::gpu::dcgm_exporter;
use crate::commands::host::node_exporter;
use crate::commands::monitoring::prometheus;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::network::{frontend_ip, MONITOR_HOST, MONITOR_IP};
use crate::model::service::{self, EXPORTER_UNIT};
use crate::model::time::http_date;
use crate::model::Node;
use crate::rng::Rng;

pub struct Curl;

static SIGNATURE: Signature = Signature {
    name: "curl",
    summary: "transfer a URL",
    usage: "curl [options...] <url>",
    flags: &[
        Flag { short: Some('s'), long: Some("silent"), value: None, help: "Silent mode" },
        Flag { short: Some('S'), long: Some("show-error"), value: None, help: "Show error even when -s is used" },
        Flag { short: Some('f'), long: Some("fail"), value: None, help: "Fail silently (no output at all) on HTTP errors" },
        Flag { short: Some('o'), long: Some("output"), value: Some("file"), help: "Write to file instead of stdout" },
        Flag { short: Some('i'), long: Some("include"), value: None, help: "Include protocol response headers in the output" },
        Flag { short: Some('I'), long: Some("head"), value: None, help: "Show document info only" },
        Flag { short: Some('L'), long: Some("location"), value: None, help: "Follow redirects" },
        Flag { short: Some('k'), long: Some("insecure"), value: None, help: "Allow insecure server connections when using SSL" },
        Flag { short: Some('m'), long: Some("max-time"), value: Some("seconds"), help: "Maximum time allowed for transfer" },
        Flag { short: None, long: Some("connect-timeout"), value: Some("seconds"), help: "Maximum time allowed for connection" },
        Flag { short: Some('H'), long: Some("header"), value: Some("header/@file"), help: "Pass custom header(s) to server" },
        Flag { short: Some('X'), long: Some("request"), value: Some("method"), help: "Specify request method to use" },
        Flag { short: Some('w'), long: Some("write-out"), value: Some("format"), help: "Use output FORMAT after completion" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "Make the operation more talkative" },
        Flag { short: Some('d'), long: Some("data"), value: Some("data"), help: "HTTP POST data" },
        Flag { short: None, long: Some("data-raw"), value: Some("data"), help: "HTTP POST data, '@' allowed" },
        Flag { short: None, long: Some("data-urlencode"), value: Some("data"), help: "HTTP POST data url encoded" },
        Flag { short: Some('G'), long: Some("get"), value: None, help: "Put the post data in the URL and use GET" },
        Flag { short: Some('g'), long: Some("globoff"), value: None, help: "Disable URL sequences and ranges using {} and []" },
    ],
    examples: &[
        Example { command: "curl -s localhost:9400/metrics | grep XID", description: "read a node's GPU metrics from dcgm-exporter" },
        Example { command: "curl -s -o /dev/null -w '%{http_code}\\n' gpu-002:9400/health", description: "whether a node's exporter answers" },
        Example {
            command: "curl -s mgmt-01:9090/api/v1/query --data-urlencode 'query=up == 0'",
            description: "ask the cluster's Prometheus which targets are down",
        },
    ],
};

const TRY: &str = "curl: try 'curl --help' or 'curl --manual' for more information\n";

/// An HTTP response as a server on a node writes it.
pub struct Response {
    pub status: u16,
    /// The handler's own headers, sorted as Go writes them.
    headers: Vec<(&'static str, String)>,
    /// What Go sniffs from the body, or the handler set.
    pub content_type: &'static str,
    pub body: String,
    /// Written by uvicorn (a Python server) rather than Go's net/http:
    /// lower-case headers, its `server` header, always a length.
    uvicorn: bool,
}

impl Response {
    pub fn ok(content_type: &'static str, body: String) -> Response {
        Response { status: 200, headers: vec![("X-Content-Type-Options", "nosniff".into())], content_type, body, uvicorn: false }
    }

    /// A response of a Starlette app under uvicorn, of `content_type`.
    pub fn uvicorn(status: u16, content_type: &'static str, body: String) -> Response {
        Response { status, headers: Vec::new(), content_type, body, uvicorn: true }
    }

    /// Go's `http.NotFound`, which gorilla/mux answers for a route it lacks.
    pub fn not_found() -> Response {
        Response {
            status: 404,
            headers: vec![("Content-Type", "text/plain; charset=utf-8".into()), ("X-Content-Type-Options", "nosniff".into())],
            content_type: "",
            body: "404 page not found\n".to_string(),
            uvicorn: false,
        }
    }

    /// A handler that sets its own type (none: Go sniffs a text body, and
    /// sends an empty one with no type).
    pub fn with_type(status: u16, content_type: &'static str, body: String) -> Response {
        match content_type {
            "" if body.is_empty() => Response { status, headers: Vec::new(), content_type: "", body, uvicorn: false },
            "" => Response { status, headers: Vec::new(), content_type: "text/plain; charset=utf-8", body, uvicorn: false },
            _ => Response { status, headers: vec![("Content-Type", content_type.into())], content_type: "", body, uvicorn: false },
        }
    }

    /// Go's `http.Redirect` with 302 Found.
    pub fn redirect(location: &str, body: &str) -> Response {
        Response {
            status: 302,
            headers: vec![("Content-Type", "text/html; charset=utf-8".into()), ("Location", location.into())],
            content_type: "",
            body: body.to_string(),
            uvicorn: false,
        }
    }

    /// The body's type as the client reads it.
    fn media_type(&self) -> &str {
        self.headers.iter().find(|(name, _)| *name == "Content-Type").map_or(self.content_type, |(_, value)| value.as_str())
    }

    /// Go sends a body it could buffer whole (under 2048 bytes) with its length.
    fn chunked(&self) -> bool {
        !self.uvicorn && self.body.len() >= 2048
    }

    fn head(&self, now: i64) -> String {
        let reason = match self.status {
            200 => "OK",
            302 => "Found",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            422 => "Unprocessable Entity",
            503 => "Service Unavailable",
            _ => "Internal Server Error",
        };
        let mut text = format!("HTTP/1.1 {} {reason}\r\n", self.status);
        if self.uvicorn {
            // Uvicorn's own headers first, then the response's.
            text += &format!("date: {}\r\nserver: uvicorn\r\ncontent-length: {}\r\n", http_date(now), self.body.len());
            if !self.content_type.is_empty() {
                text += &format!("content-type: {}\r\n", self.content_type);
            }
            return text + "\r\n";
        }
        for (name, value) in &self.headers {
            text += &format!("{name}: {value}\r\n");
        }
        text += &format!("Date: {}\r\n", http_date(now));
        if !self.chunked() {
            text += &format!("Content-Length: {}\r\n", self.body.len());
        }
        if !self.content_type.is_empty() {
            text += &format!("Content-Type: {}\r\n", self.content_type);
        }
        if self.chunked() {
            text += "Transfer-Encoding: chunked\r\n";
        }
        text + "\r\n"
    }
}

/// What a node listening on `port` answers for `path`, or None when
/// nothing listens there.
fn listener(invocation: &Invocation, node: &Node, port: u16, path: &str) -> Option<Response> {
    let cluster = invocation.cluster;
    let (unit, serve): (&str, fn(&crate::model::Cluster, &Node, &str) -> Response) = match port {
        dcgm_exporter::PORT => (EXPORTER_UNIT, dcgm_exporter::serve),
        node_exporter::PORT => (service::NODE_EXPORTER_UNIT, node_exporter::serve),
        crate::commands::monitoring::vllm::PORT => return crate::commands::monitoring::vllm::serve(cluster, node, path),
        _ => return None,
    };
    let (state, since) = service::state_of(node, unit)?;
    (state == crate::model::node::ServiceState::Active && cluster.now >= since).then(|| serve(cluster, node, path))
}

/// A URL as curl takes it apart: scheme, host, port, path.
struct Url {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

fn parse_url(text: &str) -> Result<Url, Output> {
    let bad = || Output::error("curl: (3) URL using bad/illegal format or missing URL\n", 3);
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_string(), text),
    };
    if scheme != "http" && scheme != "https" {
        return Err(Output::error(format!("curl: (1) Protocol \"{scheme}\" not supported or disabled in libcurl\n"), 1));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    // An IPv6 address is bracketed: its colons are not the port's.
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, rest)) if rest.is_empty() || rest.starts_with(':') => (host, rest.strip_prefix(':')),
            _ => return Err(bad()),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        None | Some("") => {
            if scheme == "https" {
                443
            } else {
                80
            }
        }
        Some(port) => match port.parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => return Err(bad()),
        },
    };
    if host.is_empty() {
        return Err(bad());
    }
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    Ok(Url { scheme, host: host.to_string(), port, path })
}

/// curl's five-column size: bytes, then k, then M with a decimal.
fn max5(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    if bytes < 100_000 {
        format!("{bytes:5}")
    } else if bytes < 10_000 * KB {
        format!("{:4}k", bytes / KB)
    } else if bytes < 100 * MB {
        format!("{:2}.{}M", bytes / MB, bytes % MB / (MB / 10))
    } else {
        format!("{:4}M", bytes / MB)
    }
}

/// The meter's last line for `received` bytes in `micros`; `known` when
/// the server sent the length.
fn meter_line(received: u64, known: bool, micros: u64) -> String {
    let speed = received.saturating_mul(1_000_000) / micros.max(1);
    let percent = if received > 0 || known { 100 } else { 0 };
    let received_percent = if known { percent } else { 0 };
    let dashes = "--:--:--";
    format!(
        "\r{percent:3} {}  {received_percent:3} {}    0     0  {}      0 {dashes} {dashes} {dashes} {}",
        max5(received),
        max5(received),
        max5(speed),
        max5(speed)
    )
}

const METER_HEADER: &str =
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n";

#[derive(Default)]
struct Options {
    silent: bool,
    show_error: bool,
    fail: bool,
    include: bool,
    head: bool,
    output: Option<String>,
    write_out: Option<String>,
    timeout_ms: Option<u64>,
    verbose: bool,
    /// `-d` and `--data-urlencode` parts, joined with `&`.
    data: Vec<String>,
    get: bool,
    globoff: bool,
    /// `-X`: the method sent, whatever the other options imply.
    method: Option<String>,
}

/// curl's complaint about option `name` (`-m`, `--connect-timeout`), and its hint.
fn bad_option(name: &str, complaint: &str) -> Output {
    Output::error(format!("curl: option {name}: {complaint}\n{TRY}"), 2)
}

/// A flag as curl names it in a complaint: its letter, else its long name.
fn spelled(flag: &Flag) -> String {
    flag.short.map_or_else(|| format!("--{}", flag.long.unwrap_or_default()), |c| format!("-{c}"))
}

fn seconds(flag: &Flag, value: Option<String>) -> Result<u64, Output> {
    match value.as_deref().and_then(|v| v.parse::<f64>().ok()).filter(|s| s.is_finite() && *s >= 0.0) {
        Some(seconds) => Ok((seconds.min(1e9) * 1000.0) as u64),
        None => Err(bad_option(&spelled(flag), "expected a proper numerical parameter")),
    }
}

/// `-w`'s variables and escapes, for a transfer that got `status` (0: none).
fn write_out(format: &str, status: u16, received: usize, micros: u64, url: &str, content_type: &str) -> String {
    let mut out = String::new();
    let mut rest = format;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("%{") {
            if let Some((name, tail)) = after.split_once('}') {
                match name {
                    "http_code" | "response_code" => out += &format!("{status:03}"),
                    "size_download" => out += &received.to_string(),
                    "time_total" => out += &format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000),
                    "url_effective" => out += url,
                    "content_type" => out += content_type,
                    _ => {}
                }
                rest = tail;
                continue;
            }
        }
        let escaped = match rest.get(..2) {
            Some("\\n") => Some('\n'),
            Some("\\t") => Some('\t'),
            Some("\\r") => Some('\r'),
            _ => None,
        };
        match escaped {
            Some(e) => {
                out.push(e);
                rest = &rest[2..];
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

impl Command for Curl {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut options = Options::default();
        let mut urls = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.short, flag.long) {
                    (Some('s'), _) => options.silent = true,
                    (Some('S'), _) => options.show_error = true,
                    (Some('f'), _) => options.fail = true,
                    (Some('i'), _) => options.include = true,
                    (Some('I'), _) => options.head = true,
                    (Some('o'), _) => options.output = value,
                    (Some('w'), _) => options.write_out = value,
                    (Some('v'), _) => options.verbose = true,
                    (Some('d'), _) | (None, Some("data-raw")) => options.data.push(value.unwrap_or_default()),
                    (None, Some("data-urlencode")) => options.data.push(url_encoded(&value.unwrap_or_default())),
                    (Some('G'), _) => options.get = true,
                    (Some('X'), _) => options.method = value,
                    (Some('g'), _) => options.globoff = true,
                    (Some('m'), _) | (None, Some("connect-timeout")) => match seconds(flag, value) {
                        Ok(ms) => options.timeout_ms = Some(options.timeout_ms.map_or(ms, |t| t.min(ms))),
                        Err(output) => return output,
                    },
                    _ => {}
                },
                Arg::Positional(url) => urls.push(url),
                Arg::Unknown(text) => return bad_option(text.split('=').next().unwrap_or(&text), "is unknown"),
                Arg::MissingValue(flag) => return bad_option(&spelled(flag), "requires parameter"),
            }
        }
        if urls.is_empty() {
            return Output::error(format!("curl: no URL specified!\n{TRY}"), 2);
        }
        let mut output = Output::default();
        for url in &urls {
            let expanded = if options.globoff { Ok(vec![url.clone()]) } else { expand_globs(url) };
            match expanded {
                Ok(expanded) => {
                    for url in &expanded {
                        output.status = transfer(invocation, &options, url, &mut output);
                    }
                }
                Err(complaint) => {
                    output.stderr += &complaint;
                    output.status = 3;
                }
            }
        }
        output
    }
}

/// `--data-urlencode`'s forms: `content`, `=content`, `name=content`.
fn url_encoded(value: &str) -> String {
    use crate::commands::monitoring::prometheus::escape;
    match value.split_once('=') {
        Some(("", content)) => escape(content),
        Some((name, content)) => format!("{name}={}", escape(content)),
        None => escape(value),
    }
}

/// Who answers at a host: a node, or the management host.
#[derive(Clone, Copy)]
enum Peer<'c> {
    Node(&'c Node),
    Monitor,
}

/// One URL's transfer into `output`; its exit status.
fn transfer(invocation: &Invocation, options: &Options, text: &str, output: &mut Output) -> i32 {
    let to_file = options.output.as_deref().is_some_and(|path| path != "-");
    let meter = !options.silent && (to_file || !invocation.to_terminal);
    let show_error = !options.silent || options.show_error;
    let finish = |output: &mut Output, status: u16, received: usize, micros: u64, content_type: &str| {
        if let Some(format) = &options.write_out {
            output.stdout += &write_out(format, status, received, micros, text, content_type);
        }
        output.duration_ms += micros.div_ceil(1000);
    };
    // -v's lines (`*` what curl does, `>` sent, `<` received) go to
    // standard error between the meter's lines, as curl 7.81 prints them.
    let say = |output: &mut Output, line: &str| {
        if options.verbose {
            output.stderr += line;
        }
    };
    let failed = |output: &mut Output, message: String, code: i32| {
        say(output, &format!("* {message}\n* Closing connection 0\n"));
        if show_error {
            output.stderr += &format!("curl: ({code}) {message}\n");
        }
        code
    };
    if meter {
        output.stderr += METER_HEADER;
        output.stderr += &meter_line(0, false, 1);
    }
    let with_query = match (&options.data, options.get) {
        (data, true) if !data.is_empty() => format!("{text}{}{}", if text.contains('?') { '&' } else { '?' }, data.join("&")),
        _ => text.to_string(),
    };
    let text = with_query.as_str();
    let url = match parse_url(text) {
        Ok(url) => url,
        Err(error) => {
            if meter {
                output.stderr.push('\n');
            }
            if show_error {
                output.stderr += &error.stderr;
            }
            finish(output, 0, 0, 0, "");
            return error.status;
        }
    };
    let cluster = invocation.cluster;
    let me = invocation.node;
    let local = matches!(url.host.as_str(), "localhost" | "127.0.0.1" | "::1") || url.host == me.hostname;
    let peer = if local {
        Some(Peer::Node(me))
    } else if url.host == MONITOR_HOST || url.host == MONITOR_IP {
        Some(Peer::Monitor)
    } else {
        cluster.nodes.iter().map(AsRef::as_ref).find(|node: &&Node| node.hostname == url.host || frontend_ip(&node.hostname) == url.host).map(Peer::Node)
    };
    // A transfer that ends in an error: the meter's line ends, `-w` still
    // prints, then the error.
    let give_up = |output: &mut Output, (status, content_type): (u16, &str), micros: u64, message: String, code: i32| {
        // The meter's line ends here, unless -v's lines already ended it.
        if meter && !output.stderr.ends_with('\n') {
            output.stderr.push('\n');
        }
        finish(output, status, 0, micros, content_type);
        failed(output, message, code)
    };
    let Some(peer) = peer else {
        return give_up(output, (0, ""), 2_000, format!("Could not resolve host: {}", url.host), 6);
    };
    // The address the name resolves to (Ubuntu's /etc/hosts names 127.0.0.1 localhost).
    let address = match (url.host.as_str(), peer) {
        ("localhost", _) => "127.0.0.1".to_string(),
        ("127.0.0.1" | "::1", _) => url.host.clone(),
        (_, Peer::Monitor) => MONITOR_IP.to_string(),
        (_, Peer::Node(node)) => frontend_ip(&node.hostname),
    };
    say(output, &format!("*   Trying {address}:{}...\n", url.port));
    let implied = if !options.data.is_empty() && !options.get {
        "POST"
    } else if options.head {
        "HEAD"
    } else {
        "GET"
    };
    let method = options.method.as_deref().unwrap_or(implied);
    let body = if implied == "POST" { options.data.join("&") } else { String::new() };
    let down = match peer {
        Peer::Node(node) if !node.up(cluster.now) => Some(node),
        _ => None,
    };
    if let Some(node) = down {
        // Linux gives up a SYN nobody answers after about 130 s, whatever
        // longer time curl would wait.
        let syn = 129_000 + Rng::derive(cluster.seed, &[&me.hostname, &node.hostname, "syn"]).range_u64(0, 3_000);
        let waited = options.timeout_ms.map_or(syn, |ms| ms.min(syn));
        let message = match options.timeout_ms.filter(|ms| *ms < syn) {
            Some(ms) => format!("Connection timed out after {} milliseconds", ms + 1),
            None => {
                say(output, &format!("* connect to {address} port {} failed: Connection timed out\n", url.port));
                format!("Failed to connect to {} port {} after {waited} ms: Connection timed out", url.host, url.port)
            }
        };
        return give_up(output, (0, ""), waited * 1000, message, 28);
    }
    let answer = match peer {
        Peer::Node(node) => listener(invocation, node, url.port, &url.path),
        Peer::Monitor => (url.port == prometheus::PORT).then(|| prometheus::serve(cluster, &prometheus::Request { method, target: &url.path, body: &body })),
    };
    let Some(response) = answer else {
        say(output, &format!("* connect to {address} port {} failed: Connection refused\n", url.port));
        return give_up(output, (0, ""), 300, format!("Failed to connect to {} port {} after 0 ms: Connection refused", url.host, url.port), 7);
    };
    say(output, &format!("* Connected to {} ({address}) port {} (#0)\n", url.host, url.port));
    if url.scheme == "https" {
        // OpenSSL 3.0's client hello, answered by plain HTTP.
        say(output, TLS_HELLO);
        return give_up(output, (0, ""), 900, "error:0A00010B:SSL routines::wrong version number".to_string(), 35);
    }
    let host_header = if url.port == 80 { url.host.clone() } else { format!("{}:{}", url.host, url.port) };
    let posted =
        if !body.is_empty() { format!("> Content-Length: {}\r\n> Content-Type: application/x-www-form-urlencoded\r\n", body.len()) } else { String::new() };
    say(output, &format!("> {method} {} HTTP/1.1\r\n> Host: {host_header}\r\n> User-Agent: curl/7.81.0\r\n> Accept: */*\r\n{posted}> \r\n", url.path));
    if !body.is_empty() {
        say(output, &format!("}} [{} bytes data]\n", body.len()));
    }
    say(output, "* Mark bundle as not supporting multiuse\n");
    // Collecting the page is the server's work; sending it is about 1 GB/s.
    let micros = 2_000 + response.body.len() as u64 / 1000;
    let content_type = match response.media_type() {
        "" => "text/plain; charset=utf-8",
        media => media,
    };
    let head = response.head(cluster.now);
    if options.fail && response.status >= 400 {
        say(output, &format!("< {}", head.split_inclusive('\n').next().unwrap_or_default()));
        return give_up(output, (response.status, content_type), micros, format!("The requested URL returned error: {}", response.status), 22);
    }
    let received_lines: String = head.split_inclusive('\n').map(|line| format!("< {line}")).collect();
    say(output, &received_lines);
    let mut page = String::new();
    if options.include || options.head {
        page += &head;
    }
    if !options.head {
        page += &response.body;
    }
    let received = if options.head { 0 } else { response.body.len() };
    // The data is not traced where it shows: the body on a terminal.
    let body_shown = invocation.to_terminal && matches!(options.output.as_deref(), None | Some("-"));
    if received > 0 && !body_shown {
        // One line a read: what one 16 KiB buffer holds.
        let reads: String =
            (0..received.div_ceil(READ_BYTES)).map(|at| format!("{{ [{} bytes data]\n", (received - at * READ_BYTES).min(READ_BYTES))).collect();
        say(output, &reads);
    }
    if meter {
        output.stderr += &meter_line(received as u64, !response.chunked() || options.head, micros);
        output.stderr.push('\n');
    }
    match options.output.as_deref() {
        None | Some("-") => output.stdout += &page,
        Some("/dev/null") => {}
        Some(path) => {
            let view = View::for_command(invocation);
            let resolved = view.resolve(path);
            match view.check_writable(&resolved).and_then(|()| view.check_room(&resolved, page.len(), false)) {
                Ok(()) => output.changes.push(Change::WriteFile { node: me.hostname.clone(), path: resolved, text: page, append: false }),
                Err(reason) => {
                    output.stderr += &format!("Warning: Failed to create the file {path}: {reason}\n");
                    finish(output, response.status, received, micros, content_type);
                    return failed(output, "Failure writing output to destination".to_string(), 23);
                }
            }
        }
    }
    finish(output, response.status, received, micros, content_type);
    say(output, &format!("* Connection #0 to host {} left intact\n", url.host));
    0
}

/// The most URLs one glob may expand to.
const MAX_GLOB_URLS: usize = 100;

/// A URL's globs expanded, as curl reads them unless `-g`: `{a,b}` a set
/// of alternatives, `[1-3]` and `[a-c]` ranges. Its complaint names the
/// position and puts a caret under it.
fn expand_globs(url: &str) -> Result<Vec<String>, String> {
    let complaint = |what: &str, position: usize| format!("curl: (3) {what} in URL position {position}:\n{url}\n{}^\n", " ".repeat(position.saturating_sub(1)));
    let chars: Vec<char> = url.chars().collect();
    let mut urls = vec![String::new()];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let choices: Vec<String> = match c {
            '{' => {
                let Some(close) = chars[i..].iter().position(|c| *c == '}').map(|p| p + i) else {
                    return Err(complaint("unmatched brace", i + 1));
                };
                if let Some(nested) = chars[i + 1..close].iter().position(|c| matches!(c, '{' | '[')) {
                    return Err(complaint("nested brace", i + 2 + nested));
                }
                let inner: String = chars[i + 1..close].iter().collect();
                i = close + 1;
                inner.split(',').map(str::to_string).collect()
            }
            '[' => {
                let Some(close) = chars[i..].iter().position(|c| *c == ']').map(|p| p + i) else {
                    return Err(complaint("bad range", i + 1));
                };
                let inner: String = chars[i + 1..close].iter().collect();
                // An IPv6 address in brackets is the host, not a range.
                if inner.contains(':') && inner.chars().all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '%')) {
                    for url in &mut urls {
                        url.push('[');
                        url.push_str(&inner);
                        url.push(']');
                    }
                    i = close + 1;
                    continue;
                }
                let range = inner.split_once('-').and_then(|(a, b)| {
                    if let (Ok(low), Ok(high)) = (a.parse::<u64>(), b.parse::<u64>()) {
                        // A range written with leading zeros keeps its width.
                        let width = if a.starts_with('0') { a.len() } else { 0 };
                        return (low <= high && high - low < MAX_GLOB_URLS as u64).then(|| (low..=high).map(|n| format!("{n:0width$}")).collect::<Vec<_>>());
                    }
                    let (mut a, mut b) = (a.chars(), b.chars());
                    match (a.next(), a.next(), b.next(), b.next()) {
                        (Some(a), None, Some(b), None) if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() && a <= b => {
                            Some((a..=b).map(String::from).collect())
                        }
                        _ => None,
                    }
                });
                let Some(range) = range else {
                    return Err(complaint("bad range", i + 1));
                };
                i = close + 1;
                range
            }
            _ => {
                for url in &mut urls {
                    url.push(c);
                }
                i += 1;
                continue;
            }
        };
        if urls.len().saturating_mul(choices.len()) > MAX_GLOB_URLS {
            return Err(complaint("too many URLs", i));
        }
        urls = urls.iter().flat_map(|url| choices.iter().map(move |choice| format!("{url}{choice}"))).collect();
    }
    Ok(urls)
}

/// curl's receive buffer: the most one read hands to the output.
const READ_BYTES: usize = 16_384;

/// `-v` on an https URL until the server's plain-HTTP answer ends the handshake.
const TLS_HELLO: &str = "* ALPN, offering h2\n* ALPN, offering http/1.1\n*  CAfile: /etc/ssl/certs/ca-certificates.crt\n*  CApath: /etc/ssl/certs\n* TLSv1.0 (OUT), TLS header, Certificate Status (22):\n* TLSv1.3 (OUT), TLS handshake, Client hello (1):\n";

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn reads_the_exporter_and_fails_as_curl_does() {
        let out = run_on_first_node("curl -s localhost:9400/metrics");
        assert_eq!(out.status, 0, "{}", out.stderr);
        assert!(
            out.stdout.starts_with(
                "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n# TYPE DCGM_FI_DEV_SM_CLOCK gauge\nDCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-"
            ),
            "{}",
            out.stdout
        );
        assert_eq!(run_on_first_node("curl -s gpu-002:9400/health").stdout, "OK");
        assert_eq!(run_on_first_node("curl -s localhost:9400/nothing").stdout, "404 page not found\n");
        let out = run_on_first_node("curl -sf localhost:9400/nothing");
        assert_eq!((out.stdout.as_str(), out.stderr.as_str(), out.status), ("", "", 22));
        let out = run_on_first_node("curl -sSf localhost:9400/nothing");
        assert_eq!(out.stderr, "curl: (22) The requested URL returned error: 404\n");
        let out = run_on_first_node("curl localhost:8080/metrics");
        assert_eq!((out.stderr.as_str(), out.status), ("curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused\n", 7));
        let out = run_on_first_node("curl nosuch:9400");
        assert_eq!((out.stderr.as_str(), out.status), ("curl: (6) Could not resolve host: nosuch\n", 6));
        let out = run_on_first_node("curl");
        assert_eq!((out.stderr.as_str(), out.status), ("curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2));
        let out = run_on_first_node("curl -Z x");
        assert_eq!(out.stderr, "curl: option -Z: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n");
        let out = run_on_first_node("curl ftp://gpu-002/");
        assert_eq!((out.stderr.as_str(), out.status), ("curl: (1) Protocol \"ftp\" not supported or disabled in libcurl\n", 1));
        assert_eq!(run_on_first_node("curl https://localhost:9400/metrics").status, 35);
        assert_eq!(run_on_first_node("curl localhost:99999").status, 3);
        assert_eq!(run_on_first_node("curl -s http://[::1]:9400/health").stdout, "OK");
        assert_eq!(run_on_first_node("curl -s 'http://[::1/health'").status, 3);
        assert_eq!(run_on_first_node("curl -s -o /dev/null -w '%{http_code}\\n' localhost:9400/health").stdout, "200\n");
        assert_eq!(run_on_first_node("curl -s -o /dev/null -w '%{http_code}\\n' localhost:1").stdout, "000\n");
    }

    #[test]
    fn headers_and_the_progress_meter() {
        let out = run_on_first_node("curl -si localhost:9400/health");
        let head = out.stdout.split("\r\n").collect::<Vec<_>>();
        assert_eq!(head[0], "HTTP/1.1 200 OK");
        assert_eq!(head[1], "X-Content-Type-Options: nosniff");
        assert!(head[2].starts_with("Date: ") && head[2].ends_with(" GMT"), "{head:?}");
        assert_eq!(&head[3..], ["Content-Length: 2", "Content-Type: text/plain; charset=utf-8", "", "OK"]);
        let out = run_on_first_node("curl localhost:9400/metrics | head -1");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines[0], "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current");
        assert!(lines[2].starts_with("\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\r100 "), "{lines:?}");
        let out = run_on_first_node("curl -s localhost:9400/metrics");
        let mut shell = session();
        shell.run("curl -s localhost:9400/metrics -o metrics.txt");
        assert_eq!(shell.run("cat metrics.txt").stdout(), out.stdout);
    }

    #[test]
    fn verbose_traces_the_exchange_as_curl_7_81_does() {
        // On a terminal the body shows, so its data is not traced.
        let out = run_on_first_node("curl -v localhost:9400/health");
        assert_eq!(out.stdout, "OK");
        let trace = out.stderr.replace(|c: char| c.is_ascii_digit(), "9");
        assert_eq!(
            trace,
            "*   Trying 999.9.9.9:9999...\n* Connected to localhost (999.9.9.9) port 9999 (#9)\n\
             > GET /health HTTP/9.9\r\n> Host: localhost:9999\r\n> User-Agent: curl/9.99.9\r\n> Accept: */*\r\n> \r\n\
             * Mark bundle as not supporting multiuse\n\
             < HTTP/9.9 999 OK\r\n< X-Content-Type-Options: nosniff\r\n< Date: Mon, 99 Mar 9999 99:99:99 GMT\r\n< Content-Length: 9\r\n< Content-Type: text/plain; charset=utf-9\r\n< \r\n\
             * Connection #9 to host localhost left intact\n"
        );
        // Into a file, each read of the body is a line.
        let out = run_on_first_node("curl -sv gpu-002:9400/metrics -o /tmp/metrics");
        assert!(out.stderr.starts_with("*   Trying 10.1."), "{}", out.stderr);
        assert!(
            out.stderr.contains("{ [16384 bytes data]\n") && out.stderr.ends_with(" bytes data]\n* Connection #0 to host gpu-002 left intact\n"),
            "{}",
            out.stderr
        );
        // Failures name what curl tried, then close the connection.
        let out = run_on_first_node("curl -v localhost:8080/metrics");
        assert_eq!(
            out.stderr,
            "*   Trying 127.0.0.1:8080...\n* connect to 127.0.0.1 port 8080 failed: Connection refused\n\
             * Failed to connect to localhost port 8080 after 0 ms: Connection refused\n* Closing connection 0\n\
             curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused\n"
        );
        let out = run_on_first_node("curl -sv nosuch:9400/");
        assert_eq!(out.stderr, "* Could not resolve host: nosuch\n* Closing connection 0\n");
        let out = run_on_first_node("curl -svf localhost:9400/x");
        assert!(out.stderr.ends_with("< HTTP/1.1 404 Not Found\r\n* The requested URL returned error: 404\n* Closing connection 0\n"), "{}", out.stderr);
    }

    #[test]
    fn a_stopped_exporter_or_a_down_node_does_not_answer() {
        let mut shell = session();
        shell.run("sudo systemctl stop dcgm-exporter");
        assert_eq!(shell.run("curl -s localhost:9400/metrics").status, 7);
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        let out = shell.run("curl -m 5 gpu-002:9400/metrics");
        assert_eq!((out.stderr(), out.status), ("curl: (28) Connection timed out after 5001 milliseconds\n".to_string(), 28));
        // A longer wait than the kernel's ends with the kernel's.
        let out = shell.run("curl -m 999999999 gpu-002:9400/metrics");
        assert!(out.stderr().starts_with("curl: (28) Failed to connect to gpu-002 port 9400 after 1"), "{}", out.stderr());
        assert!(out.duration_ms < 140_000, "{}", out.duration_ms);
    }

    #[test]
    fn an_exporter_left_stopped_is_a_gap_until_it_starts() {
        use crate::model::fault::Fault;
        let mut shell = session();
        let fault = Fault::ServiceStopped { node: "gpu-001".into(), unit: "dcgm-exporter.service".into() };
        shell.cluster.inject(fault, Vec::new()).expect("the fault applies");
        assert_eq!(shell.run("curl -s localhost:9400/metrics").status, 7);
        assert!(shell.run("systemctl is-active dcgm-exporter").stdout().starts_with("inactive"));
        assert!(!shell.cluster.injected[0].repaired);
        shell.run("sudo systemctl start dcgm-exporter");
        assert!(shell.cluster.injected[0].repaired);
        assert_eq!(shell.run("curl -s localhost:9400/health").stdout(), "OK");
    }
}
