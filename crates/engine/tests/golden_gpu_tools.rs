//! Golden tests: the emulated GPU-side tools (`nvidia-smi --query-gpu`, `-q`,
//! `nvlink`, fault rendering; `dmesg`; `systemctl`/`journalctl`; `lspci`)
//! against real captures in ../shared/reference/gpu. The lab is configured
//! like the captured machine and the model is put in the captured state; the
//! output must then match byte for byte. Where the captured machine cannot be
//! expressed (another GPU model, PIDs, an elided capture), the test compares
//! the layout and says why.

mod common;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::model::node::KernelLine;
use clusterlab_engine::model::time::{epoch_from_date, EpochSeconds};
use clusterlab_engine::model::Cluster;
use clusterlab_engine::Session;
use common::{assert_same_lines, expand_tabs};

fn reference(name: &str) -> String {
    common::reference("gpu", name)
}

fn cluster(preset: &str, driver: &str, cuda: &str) -> Cluster {
    common::lab_cluster(preset, &format!("driver = \"{driver}\"\ncuda = \"{cuda}\""))
}

fn run(cluster: Cluster, line: &str) -> String {
    let host = cluster.nodes[0].hostname.clone();
    let transcript = Session::new(cluster, &host).run(line);
    assert_eq!(transcript.status, 0, "{line}: {}", transcript.stderr());
    transcript.stdout()
}

/// Every run of digits replaced by `#`: for PIDs, CPU time and other values
/// the model draws from its seed rather than from the captured machine.
fn mask_digits(line: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

// ---------------------------------------------------------------- --query-gpu

#[test]
fn query_gpu_index_name_matches_h100x8_driver_550() {
    let output = run(cluster("hgx-h100", "550.90.07", "12.4"), "nvidia-smi --query-gpu=index,name --format=csv,noheader");
    assert_eq!(output, reference("nvidia-smi_query-gpu_index-name_csv-noheader_h100x8_drv550.txt"));
}

#[test]
fn query_gpu_memory_matches_h100x8_driver_550() {
    let mut cluster = cluster("hgx-h100", "550.90.07", "12.4");
    for gpu in &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus {
        gpu.memory_used_mib = 81559 - 80995;
    }
    let output = run(cluster, "nvidia-smi --query-gpu=index,memory.total,memory.free --format=csv,noheader");
    assert_eq!(output, reference("nvidia-smi_query-gpu_index-memtotal-memfree_csv-noheader_h100x8_drv550.txt"));
}

#[test]
fn query_gpu_header_matches_the_a800_capture() {
    // The capture is an A800 (an export A100): the header and every value but
    // the product name are expressible on the hgx-a100 preset.
    let captured = reference("nvidia-smi_query-gpu_csv-header_a800x8_drv580.txt");
    let free = [8404u64, 12549, 12459, 12549, 67547, 81148, 81032, 65326];
    let mut cluster = cluster("hgx-a100", "580.95.05", "13.0");
    for (gpu, free) in std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus.iter_mut().zip(free) {
        gpu.memory_used_mib = gpu.memory_total_mib - free;
    }
    let output = run(cluster, "nvidia-smi --query-gpu=index,name,memory.total,memory.free,driver_version,compute_cap --format=csv");
    let output = output.replace("NVIDIA A100-SXM4-80GB", "NVIDIA A800-SXM4-80GB");
    assert_eq!(output, captured);
}

#[test]
fn query_gpu_bus_id_and_vbios_match_the_h100_capture() {
    // The capture is elided with `[...]` and its last GPU sits at a bus the
    // preset lacks: compare the header and the first GPU.
    let captured = reference("nvidia-smi_query-gpu_name-busid-vbios_csv_h100_abridged.txt");
    let mut cluster = cluster("hgx-h100", "550.90.07", "12.4");
    for gpu in &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus {
        gpu.vbios = "96.00.89.00.01".to_string();
    }
    let output = run(cluster, "nvidia-smi --query-gpu=name,pci.bus_id,vbios_version --format=csv");
    let emulated: Vec<&str> = output.lines().take(2).collect();
    let real: Vec<&str> = captured.lines().take(2).collect();
    assert_eq!(emulated, real);
}

// ---------------------------------------------------------------- nvlink

fn uuids_from(captured: &str) -> Vec<String> {
    captured.lines().filter_map(|line| line.split_once("(UUID: ").map(|(_, uuid)| uuid.trim_end_matches(')').to_string())).collect()
}

#[test]
fn nvlink_status_matches_a100_gpu0_with_tabs() {
    let captured = reference("nvidia-smi_nvlink-s_a100_gpu0_drv535.txt");
    let mut cluster = cluster("hgx-a100", "535.183.01", "12.2");
    std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus[0].uuid = uuids_from(&captured)[0].clone();
    assert_eq!(run(cluster, "nvidia-smi nvlink -s -i 0"), captured);
}

#[test]
fn nvlink_status_matches_h100x8_with_expanded_tabs() {
    // The source expanded each TAB to spaces (SOURCES.md); expand ours the same way.
    let captured = reference("nvidia-smi_nvlink-s_h100x8_drv550_tabs-expanded.txt");
    let mut cluster = cluster("hgx-h100", "550.90.07", "12.4");
    for (gpu, uuid) in std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus.iter_mut().zip(uuids_from(&captured)) {
        gpu.uuid = uuid;
    }
    let output = run(cluster, "nvidia-smi nvlink --status");
    assert_same_lines(&expand_tabs(&output), &captured);
    assert_eq!(expand_tabs(&output), captured);
}

#[test]
fn nvlink_error_counters_match_the_h100_capture() {
    // Abridged with `[...]` after link 1: compare the head and the tail.
    let captured = reference("nvidia-smi_nvlink-e_h100_abridged.txt");
    let mut cluster = cluster("hgx-h100", "550.90.07", "12.4");
    std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus[0].uuid = uuids_from(&captured)[0].clone();
    let output = expand_tabs(&run(cluster, "nvidia-smi nvlink -e -i 0"));
    let emulated: Vec<&str> = output.lines().collect();
    let real: Vec<&str> = captured.lines().collect();
    assert_eq!(emulated[..8], real[..8]);
    assert_eq!(emulated[emulated.len() - 3..], real[real.len() - 3..]);
    assert_eq!(emulated.len(), 1 + 18 * 4 - 1);
}

// ---------------------------------------------------------------- nvidia-smi under faults

/// The cells of a table row, split at `|`.
fn cells(row: &str) -> Vec<&str> {
    row.trim_matches('|').split('|').collect()
}

#[test]
fn unresponsive_gpu_shows_err_in_the_cells_the_a40_capture_does() {
    // The capture is the 525 layout (79 columns) of an A40; the emulator draws
    // the 550+ layout, so compare which cells read `ERR!` and what stays.
    let captured = reference("nvidia-smi_default_a40x8_drv525_err-gpu4.txt");
    let real: Vec<&str> = captured.lines().skip_while(|l| !l.starts_with("|   4  ERR!")).take(3).collect();
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    Fault::GpuXid { node: "node".into(), gpu: 4, xid: 119 }.apply(&mut cluster).unwrap();
    let output = run(cluster, "nvidia-smi");
    let emulated: Vec<&str> = output.lines().skip_while(|l| !l.starts_with("|   4  ERR!")).take(3).collect();
    assert_eq!(emulated.len(), 3, "{output}");
    for (e, r) in emulated.iter().zip(&real) {
        let e_cells = cells(e);
        let r_cells = cells(r);
        for (e_cell, r_cell) in e_cells.iter().zip(&r_cells) {
            assert_eq!(e_cell.matches("ERR!").count(), r_cell.matches("ERR!").count(), "{e_cell:?} vs {r_cell:?}");
        }
    }
    assert!(emulated[0].contains("| 00000000:84:00.0 Off |") || emulated[0].contains("   00000000:84:00.0 Off |"));
    assert!(emulated[1].contains("      0MiB /  81559MiB |"));
    assert!(emulated[1].contains("Default |"));
    assert!(emulated.iter().all(|row| row.chars().count() == 91));
}

#[test]
fn fallen_gpu_is_missing_and_named_on_stderr() {
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    Fault::GpuXid { node: "node".into(), gpu: 2, xid: 79 }.apply(&mut cluster).unwrap();
    let mut session = Session::new(cluster, "node");
    let table = session.run("nvidia-smi");
    assert_eq!(table.stderr(), "Unable to determine the device handle for GPU0000:43:00.0: Unknown Error\n");
    assert!(!table.stdout().contains("00000000:43:00.0"));
    assert_eq!(session.run("nvidia-smi -L").stdout().lines().count(), 7);
}

// ---------------------------------------------------------------- nvidia-smi -q

/// The block under `heading` (4-space indent) up to the next top-level label.
fn block(text: &str, heading: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|line| line.trim_end() != heading && !line.starts_with(&format!("{heading} ")));
    let mut out = Vec::new();
    if let Some(first) = lines.next() {
        out.push(first.to_string());
    }
    out.extend(lines.take_while(|line| line.starts_with("        ")).map(String::from));
    out
}

fn h100_like_della() -> Cluster {
    // nvidia-smi_q_h100_drv545.txt: one H100 at 19:00.0, 33 C, memory 41 C, idle.
    let mut cluster = cluster("hgx-h100", "545.23.08", "12.3");
    let gpu = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus[0];
    gpu.bus_id = "00000000:19:00.0".to_string();
    gpu.temperature_c = 33;
    gpu.memory_temperature_c = 41;
    cluster
}

#[test]
fn q_sections_match_h100_driver_545() {
    let captured = reference("nvidia-smi_q_h100_drv545.txt");
    let output = run(h100_like_della(), "nvidia-smi -q -i 0 -d ECC,ROW_REMAPPER,TEMPERATURE,PERFORMANCE,CLOCK,PCI,POWER,UTILIZATION,PAGE_RETIREMENT");
    for heading in [
        "    Utilization",
        "    Retired Pages",
        "    ECC Mode",
        "    ECC Errors",
        "    Remapped Rows",
        "    Temperature",
        "    Performance State",
        "    Clocks Event Reasons",
        "    Clocks",
        "    Applications Clocks",
        "    Max Clocks",
        "    Clock Policy",
    ] {
        assert_eq!(block(&output, heading), block(&captured, heading), "{heading}");
    }
    // Throughput and power readings are fractional or live in the capture: layout only.
    for heading in ["    PCI", "    GPU Power Readings", "    GPU Memory Power Readings"] {
        let mask = |lines: Vec<String>| lines.iter().map(|l| mask_digits(l)).collect::<Vec<_>>();
        assert_eq!(mask(block(&output, heading)), mask(block(&captured, heading)), "{heading}");
    }
    // The header block; the capture lost the blank lines around `NVSMI LOG` (SOURCES.md).
    let head: Vec<&str> = output.lines().filter(|l| !l.is_empty()).take(6).collect();
    let real: Vec<&str> = captured.lines().filter(|l| !l.is_empty()).take(6).collect();
    let labels = |lines: &[&str]| lines.iter().map(|l| mask_digits(l.split(": ").next().unwrap_or(l))).collect::<Vec<_>>();
    assert_eq!(labels(&head), labels(&real));
}

#[test]
fn a_is_q() {
    let cluster = || h100_like_della();
    assert_eq!(run(cluster(), "nvidia-smi -a -i 0"), run(cluster(), "nvidia-smi -q -i 0"));
}

#[test]
fn q_ecc_matches_h200_driver_550_split_counters() {
    let captured = reference("nvidia-smi_q_h200_drv550_passthrough.txt");
    let output = run(cluster("hgx-h200", "550.90.12", "12.4"), "nvidia-smi -q -i 0 -d ECC,ROW_REMAPPER");
    for heading in ["    ECC Mode", "    ECC Errors", "    Remapped Rows"] {
        assert_eq!(block(&output, heading), block(&captured, heading), "{heading}");
    }
    assert!(output.starts_with("\n==============NVSMI LOG==============\n\nTimestamp                                 : "));
}

// ---------------------------------------------------------------- dmesg

fn month(name: &str) -> u32 {
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].iter().position(|m| *m == name).map_or(1, |at| at as u32 + 1)
}

/// `Fri Mar  3 04:23:22 2023` back to epoch seconds.
fn parse_ctime(text: &str) -> EpochSeconds {
    let words: Vec<&str> = text.split_whitespace().collect();
    let clock: Vec<i64> = words[3].split(':').map(|n| n.parse().unwrap()).collect();
    epoch_from_date(words[4].parse().unwrap(), month(words[1]), words[2].parse().unwrap()) + clock[0] * 3600 + clock[1] * 60 + clock[2]
}

/// A node whose kernel log holds exactly the captured lines. `[...]` elisions
/// are skipped; continuation lines join the message before them.
fn cluster_with_kernel_log(captured: &str, wall: bool) -> Cluster {
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    node.kernel_log.clear();
    if wall {
        let first = captured.lines().next().and_then(|l| l.get(1..25)).expect("a ctime line");
        node.booted_at = parse_ctime(first) - 1000;
    }
    for line in captured.lines().filter(|l| *l != "[...]") {
        if let Some(continuation) = line.strip_prefix("               ") {
            let last = node.kernel_log.last_mut().expect("a message to continue");
            last.text = format!("{}\n{continuation}", last.text);
            continue;
        }
        let (stamp, text) = line.split_once("] ").expect("a prefixed line");
        let stamp = stamp.trim_start_matches('[');
        let uptime_us = if wall {
            (parse_ctime(stamp) - node.booted_at) as u64 * 1_000_000
        } else {
            let (seconds, micros) = stamp.trim().split_once('.').expect("seconds.micros");
            seconds.parse::<u64>().unwrap() * 1_000_000 + micros.parse::<u64>().unwrap()
        };
        node.kernel_log.push(KernelLine { uptime_us, level: 3, text: text.to_string() });
    }
    cluster
}

#[test]
fn dmesg_matches_uptime_captures() {
    for name in ["dmesg_aer-surprise-down_xid79.txt", "dmesg_fallen-off-bus_no-xid_drv570.txt", "dmesg_pcie-limited-by_h100_abridged.txt"] {
        let captured = reference(name);
        let expected: String = captured.lines().filter(|l| *l != "[...]").map(|l| format!("{l}\n")).collect();
        assert_eq!(run(cluster_with_kernel_log(&captured, false), "sudo dmesg"), expected, "{name}");
    }
}

#[test]
fn dmesg_ctime_matches_wall_clock_captures() {
    for (name, flag) in [
        ("dmesg-T_xid119_gsp-timeout_a30_drv525.txt", "-T"),
        ("dmesg-ctime_xid13-109_h100-class_gpud.txt", "--ctime"),
        ("dmesg-ctime_xid31-109_h100-class_gpud.txt", "--ctime"),
    ] {
        let captured = reference(name);
        assert_eq!(run(cluster_with_kernel_log(&captured, true), &format!("sudo dmesg {flag}")), captured, "{name}");
    }
}

#[test]
fn dmesg_shows_the_models_fallen_off_bus_block() {
    // At the probe after a reboot, a GPU still off the bus prints the block
    // of dmesg_fallen-off-bus_no-xid_drv570.txt.
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    // A dead GPU: only a new one repairs it, the power cycle does not.
    cluster.inject(Fault::GpuFallenOffBus { node: "node".into(), gpu: 7, dead: true }, vec!["replace-gpu".into()]).unwrap();
    let mut session = Session::new(cluster, "node");
    session.run("sudo scontrol update NodeName=node State=DRAIN Reason=x; dctech power-cycle node");
    let output = session.run("sudo dmesg -l err").stdout();
    let texts: Vec<&str> = output.lines().map(|l| l.split_once("] ").map_or("", |(_, text)| text)).collect();
    assert_eq!(
        texts,
        [
            "NVRM: The NVIDIA GPU 0000:e4:00.0",
            "NVRM: (PCI ID: 10de:2330) installed in this system has",
            "NVRM: fallen off the bus and is not responding to commands."
        ]
    );
}

// ---------------------------------------------------------------- systemctl / journalctl

#[test]
fn systemctl_status_matches_the_active_fabric_manager_capture() {
    // PIDs, CPU time and memory come from the seed, not the captured host:
    // those lines are compared with digits masked. systemd's pager cut the
    // long journal line at `succ>`; the emulator prints it whole. The capture
    // is a RHEL 9 host's; the nodes run Ubuntu 22.04, whose Loaded line is the
    // failed capture's and whose packages have no path unit (no TriggeredBy).
    let ubuntu = reference("systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt");
    let loaded = ubuntu.lines().nth(1).unwrap();
    let captured = reference("systemctl-status_nvidia-fabricmanager_h100_active.txt");
    let captured: String = captured
        .lines()
        .filter(|line| !line.starts_with("TriggeredBy:"))
        .map(|line| if line.starts_with("     Loaded:") { format!("{loaded}\n") } else { format!("{line}\n") })
        .collect();
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    let since = parse_ctime("Tue Mar 25 02:10:15 2025");
    cluster.now = since + 2 * 3600 + 37 * 60 + 20;
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    node.hostname = "rhelai-02.redhat.lab".to_string();
    node.fabric_manager_since = since;
    node.booted_at = since - 41;
    let output = run(cluster, "systemctl status nvidia-fabricmanager");
    let emulated: Vec<&str> = output.lines().collect();
    let real: Vec<&str> = captured.lines().collect();
    assert_eq!(emulated.len(), real.len());
    for (e, r) in emulated.iter().zip(&real) {
        let live = ["Process:", "Main PID:", "Tasks:", "Memory:", "CPU:", "└─", "nv-fabricmanager["].iter().any(|k| r.contains(k));
        let (e, r) = if live { (mask_digits(e), mask_digits(r)) } else { (e.to_string(), r.to_string()) };
        match r.strip_suffix('>') {
            Some(cut) => assert!(e.starts_with(cut), "{e:?} vs {r:?}"),
            None => assert_eq!(e, r),
        }
    }
}

#[test]
fn systemctl_status_matches_the_failed_fabric_manager_capture_layout() {
    // Abridged by its author after the first journal line: compare the
    // state lines. It is an Ubuntu host's, as the nodes are.
    let captured = reference("systemctl-status_nvidia-fabricmanager_failed-sigkill_abridged.txt");
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    Fault::FabricManagerDown { node: "node".into() }.apply(&mut cluster).unwrap();
    let since = parse_ctime("Mon Aug 10 15:45:34 2026");
    cluster.now = since + 5 * 86_400 + 3600;
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    node.fabric_manager_since = since;
    node.booted_at = since - 10 * 3600;
    let host = node.hostname.clone();
    let transcript = Session::new(cluster, &host).run("systemctl status nvidia-fabricmanager");
    assert_eq!(transcript.status, 3);
    let output = transcript.stdout();
    let emulated: Vec<&str> = output.lines().collect();
    let real: Vec<&str> = captured.lines().collect();
    assert_eq!(emulated[0], real[0]);
    assert_eq!(emulated[1], real[1]);
    assert_eq!(emulated[2], real[2]);
    assert_eq!(mask_digits(emulated[3]), mask_digits(real[3]));
    assert_eq!(mask_digits(emulated[4]), mask_digits(real[4]));
    assert_eq!(emulated[5], real[5]);
}

#[test]
fn journalctl_lines_have_the_capture_shape() {
    // The version-mismatch capture's first line, on a node named like it.
    // The mismatch itself needs a Fabric Manager version the model lacks.
    let captured = reference("journal_nvidia-fabricmanager_version-mismatch.txt");
    let mut cluster = cluster("hgx-h100", "550.120", "12.4");
    let starting = epoch_from_date(2025, 11, 5) + 13 * 3600 + 55 * 60 + 26;
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    node.hostname = "node1".to_string();
    node.fabric_manager_since = starting + 1;
    node.booted_at = starting - 40;
    cluster.now = starting + 600;
    let output = run(cluster, "journalctl -u nvidia-fabricmanager");
    assert_eq!(output.lines().next(), captured.lines().next());
}

// ---------------------------------------------------------------- lspci

#[test]
fn lspci_dnn_matches_the_h100_gpu_lines() {
    // The capture also lists four NVSwitch bridges, which the model lacks;
    // its GPUs sit at 0d-14 in that VM.
    let captured = reference("lspci-Dnn_hgx-h100_vm-passthrough.txt");
    let gpu_lines: String = captured.lines().filter(|l| l.contains("3D controller")).map(|l| format!("{l}\n")).collect();
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    for (gpu, bus) in std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus.iter_mut().zip(0x0du8..) {
        gpu.bus_id = format!("00000000:{bus:02X}:00.0");
    }
    assert_eq!(run(cluster, "lspci -Dnn -d 10de:"), gpu_lines);
}

#[test]
fn lspci_link_lines_match_the_downgraded_capture() {
    // An RTX 3080 trained at 2.5GT/s x4 of 16GT/s x16. Its source lost the
    // TABs (SOURCES.md): compare the words after the indentation.
    let captured = reference("lspci-vvv_lnk-grep_rtx3080_x4-downgraded.txt");
    let mut cluster = cluster("hgx-a100", "535.183.01", "12.2");
    let pcie = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus[0].pcie;
    pcie.gen = 1;
    pcie.width = 4;
    let output = run(cluster, "sudo lspci -vvv -s 07:00.0");
    let find = |text: &str, label: &str| -> String {
        text.lines().find(|l| l.trim_start().starts_with(label)).map(|l| l.trim().replace('\t', " ")).unwrap_or_default()
    };
    assert_eq!(find(&output, "LnkSta:"), find(&captured, "LnkSta:"));
    let cap = find(&captured, "LnkCap:");
    let through_width = &cap[..cap.find("Width x16").unwrap() + "Width x16".len()];
    assert!(find(&output, "LnkCap:").starts_with(through_width));
    assert!(output.contains("\n\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x4 (downgraded)\n"));
    assert!(output.contains("\n\tKernel driver in use: nvidia\n"));
}
