//! Golden tests: the perftest tools (ib_write_bw, ib_read_bw, ib_send_bw,
//! ib_write_lat, ib_send_lat) against the captures in
//! ../shared/reference/fabric, and the performance model's calibration
//! (FACTS.md §1 "Realistic numbers", §5).
//!
//! Each test builds the captured pair of hosts from a preset, sets the
//! cluster's perftest version to the captured one, starts the server with
//! its captured command line and runs the client. Lines, labels, tabs and
//! field widths must match; numbers are masked where the machine differs
//! (LIDs, QPNs, PSNs, keys, addresses, measured values). The captures'
//! `Conflicting CPU frequency values detected` warnings are left out: they
//! come from the capturing machine's CPU governor, which the model lacks.

mod common;

use clusterlab_engine::commands::Output;
use clusterlab_engine::load;
use clusterlab_engine::model::change::Change;
use clusterlab_engine::model::fault::{Fault, PortDown};
use clusterlab_engine::model::Cluster;
use clusterlab_engine::{shell, Session};

fn reference(name: &str) -> String {
    common::reference("fabric", name)
}

fn pair(preset: &str, hosts: [&str; 2], perftest: &str) -> Cluster {
    let lab = load(&format!(
        "[lab]\nid = \"golden\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"{preset}\"\nnodes = [\"{}\", \"{}\"]\n",
        hosts[0], hosts[1]
    ))
    .expect("valid lab");
    let mut cluster = lab.instantiate(1);
    cluster.versions.perftest = perftest.to_string();
    cluster
}

/// Runs `line` (one program and its words) on `host` as the shell would,
/// applying its changes.
fn run(cluster: &mut Cluster, host: &str, line: &str) -> Output {
    let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
    let output = shell::run_program(cluster, host, &argv).expect("a perftest command");
    for change in &output.changes {
        let now = cluster.now;
        cluster.apply_change(change, now);
    }
    output
}

/// Server then client: (server's first output, client output).
fn run_pair(cluster: &mut Cluster, server: (&str, &str), client: (&str, &str)) -> (Output, Output) {
    let served = run(cluster, server.0, server.1);
    assert!(matches!(served.changes.first(), Some(Change::Listen { .. })), "{served:?}");
    let result = run(cluster, client.0, client.1);
    assert_eq!(result.status, 0, "{}", result.stderr);
    assert!(cluster.node(server.0).unwrap().listeners.is_empty(), "the client ends the server");
    (served, result)
}

fn is_number_start(c: char) -> bool {
    c.is_ascii_digit()
}

/// Masks the values that differ between machines and runs. In address lines
/// every number becomes `N`. In table rows a number and the spaces after it
/// become `N<width>`, so printf widths and tabs are still compared.
fn mask(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("Conflicting CPU frequency") {
            continue;
        }
        let address = line.starts_with(" local address") || line.starts_with(" remote address") || line.starts_with(" GID: ");
        let row = line.starts_with(' ') && line[1..].starts_with(|c: char| c.is_ascii_digit());
        if !(address || row) {
            out += line;
            out.push('\n');
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut at = 0;
        while at < chars.len() {
            let starts = is_number_start(chars[at]) && (at == 0 || !chars[at - 1].is_ascii_alphanumeric());
            if !starts {
                out.push(chars[at]);
                at += 1;
                continue;
            }
            let begin = at;
            while at < chars.len() && (chars[at].is_ascii_hexdigit() || chars[at] == '.' || chars[at] == 'x') {
                at += 1;
            }
            if address {
                out.push('N');
                continue;
            }
            while at < chars.len() && chars[at] == ' ' {
                at += 1;
            }
            out += &format!("N{}", at - begin);
        }
        out.push('\n');
    }
    out
}

fn assert_layout(emulated: &str, captured: &str) {
    common::assert_same_lines(&mask(emulated), &mask(captured));
}

/// The capture without its prompt line.
fn body(capture: &str) -> String {
    capture.split_once('\n').map(|(_, rest)| rest.to_string()).unwrap_or_default()
}

/// The first table row's values.
fn row_values(text: &str) -> Vec<f64> {
    let line = text.lines().find(|l| l.starts_with(' ') && l[1..].starts_with(|c: char| c.is_ascii_digit())).expect("a row");
    line.split_whitespace().map(|v| v.parse().unwrap()).collect()
}

fn within(value: f64, target: f64, tolerance: f64) -> bool {
    (value - target).abs() <= target * tolerance
}

fn ndr() -> Cluster {
    pair("hgx-h100", ["csegpu1", "csegpu2"], "26.01.5")
}

#[test]
fn ndr_write_bw_report_gbits_client() {
    let capture = reference("ib_write_bw_ndr_cx7_b2b_client_report_gbits.txt");
    let mut cluster = ndr();
    let (_, client) = run_pair(&mut cluster, ("csegpu2", "ib_write_bw -d mlx5_0 --report_gbits"), ("csegpu1", "ib_write_bw -d mlx5_0 --report_gbits csegpu2"));
    assert_layout(&client.stdout, &body(&capture));
    let row = row_values(&client.stdout);
    assert_eq!((row[0], row[1]), (65536.0, 5000.0));
    assert!(within(row[3], 392.34, 0.10), "NDR write average {} Gb/s", row[3]);
    assert!(within(row[3], 392.34, 0.02), "calibrated to the capture: {}", row[3]);
    assert!(within(row[4], 0.748336, 0.03), "message rate {}", row[4]);
}

#[test]
fn ndr_read_bw_report_gbits_client() {
    let capture = reference("ib_read_bw_ndr_cx7_b2b_client_report_gbits.txt");
    let mut cluster = ndr();
    let (served, client) =
        run_pair(&mut cluster, ("csegpu2", "ib_read_bw -d mlx5_0 --report_gbits"), ("csegpu1", "ib_read_bw -d mlx5_0 --report_gbits csegpu2"));
    assert_layout(&client.stdout, &body(&capture));
    let read = row_values(&client.stdout)[3];
    assert!(within(read, 328.61, 0.03), "NDR read average {read} Gb/s");
    // The read server prints nothing after the addresses.
    assert!(served.stdout.ends_with("Data ex. method : Ethernet\n---------------------------------------------------------------------------------------\n"));
    assert!(client.background.lines().last().unwrap().starts_with("---"));
    assert!(!client.background.contains("#bytes"));
}

#[test]
fn ndr_send_bw_mib_client() {
    let capture = reference("ib_send_bw_ndr_cx7_b2b_client_mib.txt");
    let mut cluster = ndr();
    let (served, client) = run_pair(&mut cluster, ("csegpu2", "ib_send_bw -d mlx5_0"), ("csegpu1", "ib_send_bw -d mlx5_0  csegpu2"));
    assert_layout(&client.stdout, &body(&capture));
    let row = row_values(&client.stdout);
    assert!(within(row[3], 46557.03, 0.03), "NDR send average {} MiB/s", row[3]);
    // The receiving side shows its RX depth instead of a TX depth.
    assert!(served.stdout.contains(" RX depth        : 512\n") && !served.stdout.contains("TX depth"));
}

#[test]
fn ndr_send_lat_client() {
    let capture = reference("ib_send_lat_ndr_cx7_b2b_client.txt");
    let mut cluster = ndr();
    let (_, client) = run_pair(&mut cluster, ("csegpu2", "ib_send_lat -d mlx5_0"), ("csegpu1", "ib_send_lat -d mlx5_0 csegpu2"));
    assert_layout(&client.stdout, &body(&capture));
    let row = row_values(&client.stdout);
    assert!(within(row[4], 1.27, 0.15), "NDR send_lat t_typical {} us", row[4]);
    // The server prints the table too.
    assert!(client.background.contains("t_typical[usec]"));
}

fn hdr() -> Cluster {
    let cluster = pair("hgx-a100", ["node-0", "node-1"], "4.5-0.20");
    assert_eq!(cluster.versions.perftest, "4.5-0.20", "the A100 preset's perftest is the captured generation");
    cluster
}

#[test]
fn hdr_write_bw_all_sizes_client_and_server() {
    let client_capture = reference("ib_write_bw_hdr_cx6_a100_client_all_sizes_mb.txt");
    let server_capture = reference("ib_write_bw_hdr_cx6_a100_server_all_sizes.txt");
    let mut cluster = hdr();
    let (served, client) = run_pair(&mut cluster, ("node-1", "ib_write_bw -d mlx5_0 -a"), ("node-0", "ib_write_bw -d mlx5_0 -a node-1"));
    assert_layout(&client.stdout, &body(&client_capture));
    assert_layout(&(served.stdout + &client.background), &body(&server_capture));
    // The curve: message-rate bound, then 90 % of line rate by 8-16 KB,
    // the average lagging the peak until ~256 KB.
    let rows: Vec<Vec<f64>> = client
        .stdout
        .lines()
        .filter(|l| l.starts_with(' ') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 23);
    let at = |size: f64| rows.iter().find(|r| r[0] == size).unwrap().clone();
    assert!(within(at(2.0)[3], 4.94, 0.05) && within(at(1024.0)[3], 2506.75, 0.05), "message-rate bound");
    assert!(within(at(4096.0)[2], 12938.64, 0.10) && within(at(4096.0)[3], 10281.32, 0.10));
    assert!(within(at(8192.0)[3], 17540.85, 0.10) && at(16384.0)[2] > 0.9 * 23325.0);
    assert!(within(at(65536.0)[3], 22714.61, 0.03));
    assert!(within(at(8388608.0)[3], 23317.65, 0.02), "HDR plateau {}", at(8388608.0)[3]);
    let gbits = at(8388608.0)[3] * 1048576.0 * 8.0 / 1e9;
    assert!(within(gbits, 195.0, 0.03), "HDR ≈ 195 Gb/s: {gbits}");
}

/// The captured A100 latency client is a vendor build with one tab before
/// the last column; upstream (and its own server) has two. Accept both.
fn one_tab_before_last(text: &str) -> String {
    text.lines()
        .map(|l| {
            format!(
                "{}\n",
                if l.starts_with(' ') && l.contains("\t\t") {
                    match l.rsplit_once("\t\t") {
                        Some((a, b)) if a.contains("\t\t") => format!("{a}\t{b}"),
                        _ => l.to_string(),
                    }
                } else {
                    l.to_string()
                }
            )
        })
        .collect()
}

#[test]
fn hdr_write_lat_all_sizes_client_and_server() {
    let client_capture = reference("ib_write_lat_hdr_cx6_a100_client_all_sizes.txt");
    let server_capture = reference("ib_write_lat_hdr_cx6_a100_server_all_sizes.txt");
    let mut cluster = hdr();
    let (served, client) = run_pair(&mut cluster, ("node-1", "ib_write_lat -d mlx5_0 -a"), ("node-0", "ib_write_lat -d mlx5_0 -a node-1"));
    assert_layout(&one_tab_before_last(&client.stdout), &body(&client_capture));
    assert_layout(&(served.stdout + &client.background), &body(&server_capture));
    let typical: Vec<(f64, f64)> = client
        .stdout
        .lines()
        .filter(|l| l.starts_with(' ') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|v| v.parse().unwrap()).collect();
            (v[0], v[4])
        })
        .collect();
    let captured = [(2.0, 1.87), (128.0, 1.96), (256.0, 2.87), (4096.0, 3.85), (65536.0, 6.76), (1048576.0, 46.92), (8388608.0, 345.55)];
    for (size, want) in captured {
        let got = typical.iter().find(|(s, _)| *s == size).unwrap().1;
        assert!(within(got, want, 0.15), "write_lat {size} B: {got} us against {want}");
    }
}

#[test]
fn dgxspark_duration_rows_by_layout() {
    let capture = reference("ib_write_bw_dgxspark_degraded_13gbps_two_rails_excerpt.txt");
    let mut cluster = hdr();
    let (_, client) = run_pair(
        &mut cluster,
        ("node-1", "ib_write_bw -d mlx5_0 -s 1048576 -D 5 --report_gbits"),
        ("node-0", "ib_write_bw -d mlx5_0 -s 1048576 -D 5 --report_gbits node-1"),
    );
    let table: String = client.stdout.lines().skip_while(|l| !l.starts_with(" #bytes")).take(2).map(|l| format!("{l}\n")).collect();
    let captured: String = capture.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert_layout(&table, &captured);
    assert!(table.contains(" 0.00 "), "no peak in duration mode");
}

fn write_avg(cluster: &mut Cluster, dev: &str, extra: &str) -> f64 {
    let served = run(cluster, "gpu-002", &format!("ib_write_bw -d {dev} --report_gbits {extra}"));
    assert_eq!(served.status, 0, "{}", served.stderr);
    let client = run(cluster, "gpu-001", &format!("ib_write_bw -d {dev} --report_gbits {extra} gpu-002"));
    assert_eq!(client.status, 0, "{}", client.stderr);
    row_values(&client.stdout)[3]
}

fn h100() -> Cluster {
    pair("hgx-h100", ["gpu-001", "gpu-002"], "26.01.5")
}

#[test]
fn a_degraded_rail_seen_by_ibstat_halves_ib_write_bw_on_that_hca_only() {
    let mut cluster = h100();
    Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_3".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
    let ibstat = Session::new(cluster.clone(), "gpu-001").run("ibstat mlx5_3").stdout();
    assert!(ibstat.contains("\t\tRate: 200\n"), "{ibstat}");
    let degraded = write_avg(&mut cluster, "mlx5_3", "");
    for dev in ["mlx5_0", "mlx5_2", "mlx5_7"] {
        let full = write_avg(&mut cluster, dev, "");
        assert!(within(full, 392.0, 0.03), "{dev}: {full}");
        assert!(within(degraded / full, 0.5, 0.05), "mlx5_3 at {degraded} against {full}");
    }
}

#[test]
fn mtu_pcie_and_placement_cut_the_numbers() {
    let mut cluster = h100();
    let healthy = write_avg(&mut cluster, "mlx5_0", "");
    Fault::HcaMtu { node: "gpu-001".into(), hca: "mlx5_1".into(), mtu: 1024 }.apply(&mut cluster).unwrap();
    let small_mtu = write_avg(&mut cluster, "mlx5_1", "");
    assert!(small_mtu < healthy * 0.99 && small_mtu > healthy * 0.93, "MTU 1024: {small_mtu} against {healthy}");
    let served = run(&mut cluster, "gpu-002", "ib_write_bw -d mlx5_1");
    assert!(served.stdout.contains(" Mtu             : 4096[B]\n"));
    let client = run(&mut cluster, "gpu-001", "ib_write_bw -d mlx5_1 gpu-002");
    assert!(client.stdout.contains(" Mtu             : 1024[B]\n"));

    Fault::HcaPcieDegraded { node: "gpu-002".into(), hca: "mlx5_2".into(), gen: Some(4), width: None }.apply(&mut cluster).unwrap();
    let gen4 = write_avg(&mut cluster, "mlx5_2", "");
    assert!((200.0..=232.0).contains(&gen4), "NDR behind Gen4 x16: {gen4}");

    let same_switch = write_avg(&mut cluster, "mlx5_0", "--use_cuda=1");
    let cross_socket = write_avg(&mut cluster, "mlx5_0", "--use_cuda=7");
    assert!(within(same_switch, healthy, 0.03), "GPU 1 shares mlx5_0's switch: {same_switch}");
    assert!(cross_socket < same_switch * 0.7, "GPU 7 is on the other socket: {cross_socket}");
}

#[test]
fn failures_read_as_perftest_prints_them() {
    let mut cluster = h100();
    let none = run(&mut cluster, "gpu-001", "ib_write_bw -d mlx5_0 gpu-002");
    assert_eq!((none.stderr.as_str(), none.status), ("Couldn't connect to gpu-002:18515\n Unable to init the socket connection\n", 1));
    let unknown = run(&mut cluster, "gpu-001", "ib_write_bw gpu-099");
    assert!(unknown.stderr.starts_with("Name or service not known for gpu-099:18515\n"), "{}", unknown.stderr);
    // A server of another program, or on another port, is not found either.
    run(&mut cluster, "gpu-002", "ib_read_bw -d mlx5_0");
    assert_eq!(run(&mut cluster, "gpu-001", "ib_write_bw -d mlx5_0 gpu-002").status, 1);
    assert_eq!(run(&mut cluster, "gpu-001", "ib_read_bw -d mlx5_0 -p 18516 gpu-002").status, 1);
    assert_eq!(run(&mut cluster, "gpu-001", "ib_read_bw -d mlx5_0 gpu-002").status, 0);

    Fault::HcaPortDown { node: "gpu-001".into(), hca: "mlx5_4".into(), state: PortDown::Polling }.apply(&mut cluster).unwrap();
    run(&mut cluster, "gpu-002", "ib_write_bw -d mlx5_4");
    let down = run(&mut cluster, "gpu-001", "ib_write_bw -d mlx5_4 gpu-002");
    assert_eq!(down.status, 1);
    assert!(down.stderr.starts_with(" Port number 1 state is Down\n"), "{}", down.stderr);
    let missing = run(&mut cluster, "gpu-001", "ib_write_bw -d mlx5_9 gpu-002");
    assert!(missing.stderr.starts_with("IB device mlx5_9 not found\n"));
    let bad = run(&mut cluster, "gpu-001", "ib_write_bw -z");
    assert_eq!(bad.status, 1);
    assert!(bad.stderr.starts_with("ib_write_bw: invalid option -- 'z'\n"));
    assert!(run(&mut cluster, "gpu-001", "ib_write_lat -b").stderr.contains("invalid option -- 'b'"));
    assert_eq!(run(&mut cluster, "gpu-001", "ib_send_bw --help").status, 0);
    for line in ["ib_write_bw -s 0", "ib_write_bw -n", "ib_read_lat -m 3000", "ib_send_bw -q 99999", "ib_write_bw --use_cuda=42 gpu-002", "ib_write_bw -p 0x"] {
        let out = run(&mut cluster, "gpu-001", line);
        assert_ne!(out.status, 0, "{line}");
    }
}

#[test]
fn a_background_server_is_a_job_until_its_client_finishes() {
    let mut session = Session::new(h100(), "gpu-002");
    let started = session.run("ib_write_bw -d mlx5_0 &");
    assert!(started.stdout().contains("* Waiting for client to connect... *"));
    assert_eq!(session.run("jobs").stdout(), "[1]+  Running                 ib_write_bw -d mlx5_0 &\n");
    let cluster = session.cluster.clone();
    let mut client = Session::new(cluster, "gpu-001");
    let result = client.run("ib_write_bw -d mlx5_0 --report_gbits gpu-002");
    assert_eq!(result.status, 0);
    assert!(result.stdout().contains(" local address: LID"));
    assert!(client.cluster.node("gpu-002").unwrap().listeners.is_empty());
    // Bidirectional: both sides print the table.
    let mut cluster = client.cluster.clone();
    let (served, out) = run_pair(&mut cluster, ("gpu-002", "ib_write_bw -b"), ("gpu-001", "ib_write_bw -b gpu-002"));
    assert!(served.stdout.contains("RDMA_Write Bidirectional BW Test") && served.stdout.contains("TX depth"));
    let both = row_values(&out.stdout)[3];
    assert!(both > 1.8 * 46000.0, "bidirectional sums both directions: {both}");
    assert!(out.background.contains("BW average"));
}

#[test]
fn a_background_servers_report_goes_to_the_terminal_not_into_the_clients_pipe() {
    let mut session = Session::new(h100(), "gpu-001");
    session.run("ssh gpu-002 ib_write_bw -d mlx5_0 --report_gbits &");
    let piped = session.run("ib_write_bw -d mlx5_0 --report_gbits gpu-002 | tail -n 2");
    let text = piped.stdout();
    let (tail, terminal) = text.split_at(text.find(" local address").expect("the server's report follows"));
    assert!(tail.starts_with(" 65536 ") && tail.ends_with(&format!("{}\n", "-".repeat(87))), "{text}");
    assert_eq!(tail.lines().count(), 2, "{text}");
    assert!(terminal.contains("BW average"), "{text}");
}
