//! Golden tests: the default nvidia-smi table in the 525, 545, 565 and 580
//! layouts, `nvidia-smi topo -m`/`-mp`, `dmon`, `-r`, and `dcgmi discovery`
//! and `diag`, against real captures in ../shared/reference/gpu. The lab is
//! configured like the captured machine and its GPUs put in the captured
//! state; where the model cannot express the machine (an A40, processes,
//! cgroup-limited CPU affinity, 12 NICs), the test says what it compares.

mod common;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::model::time::epoch_from_date;
use clusterlab_engine::model::Cluster;
use clusterlab_engine::Session;
use common::assert_same_lines;

fn reference(name: &str) -> String {
    common::reference("gpu", name)
}

fn cluster(preset: &str, lines: &str) -> Cluster {
    common::lab_cluster(preset, lines)
}

fn run(cluster: Cluster, line: &str) -> String {
    let transcript = Session::new(cluster, "node").run(line);
    assert_eq!(transcript.status, 0, "{line}: {}", transcript.stderr());
    transcript.stdout()
}

/// The lab clock at a captured timestamp.
fn at(year: i64, month: u32, day: u32, h: i64, m: i64, s: i64) -> i64 {
    epoch_from_date(year, month, day) + h * 3600 + m * 60 + s
}

/// Per GPU: (bus, temperature C, power W, memory used MiB, utilization %).
fn set_gpus(cluster: &mut Cluster, state: &[(&str, u32, u32, u64, u32)]) {
    let gpus = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus;
    gpus.truncate(state.len());
    for (gpu, &(bus, temperature, power, memory, utilization)) in gpus.iter_mut().zip(state) {
        gpu.bus_id = format!("00000000:{bus}:00.0");
        gpu.temperature_c = temperature;
        gpu.power_draw_w = power;
        gpu.memory_used_mib = memory;
        gpu.utilization_pct = utilization;
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

// ---------------------------------------------------------------- default table

#[test]
fn default_table_matches_h100x1_driver_545_byte_for_byte() {
    let mut cluster = cluster("hgx-h100", "driver = \"545.23.08\"\ncuda = \"12.3\"");
    cluster.now = at(2024, 2, 23, 11, 51, 11);
    set_gpus(&mut cluster, &[("19", 33, 72, 2, 0)]);
    let output = run(cluster, "nvidia-smi");
    let captured = reference("nvidia-smi_default_h100x1_drv545.txt");
    assert_same_lines(&output, &captured);
    assert_eq!(output, captured);
}

const H200_580: &[(&str, u32, u32, u64, u32)] = &[
    ("59", 62, 434, 87321, 68),
    ("5A", 49, 412, 97399, 65),
    ("72", 59, 414, 90717, 51),
    ("73", 53, 420, 90237, 52),
    ("8B", 32, 116, 135846, 0),
    ("8C", 29, 111, 135852, 0),
    ("A4", 35, 116, 136106, 0),
    ("A5", 30, 116, 135872, 0),
];

#[test]
fn default_table_matches_h200x8_driver_580_gpu_box_and_processes_header() {
    // The model has no processes: compare everything up to the Processes
    // column headings (the `+` rule under the header, the empty spacer line,
    // the 570+ PID column), byte for byte.
    let mut cluster = cluster("hgx-h200", "driver = \"580.95.05\"\ncuda = \"13.0\"");
    cluster.now = at(2026, 3, 9, 4, 35, 35);
    set_gpus(&mut cluster, H200_580);
    let output = run(cluster, "nvidia-smi");
    let captured = reference("nvidia-smi_default_h200x8_drv580_procs.txt");
    let head = 1 + 3 + 4 + 8 * 4 + 1 + 5;
    assert_eq!(lines(&output)[..head], lines(&captured)[..head]);
    assert_eq!(lines(&output).last(), lines(&captured).last());
}

#[test]
fn default_table_matches_h200x8_driver_565_with_the_pre_570_processes_header() {
    // The captured box is empty (processes in another PID namespace, SOURCES.md);
    // ours says none run. Everything else matches byte for byte.
    let mut cluster = cluster("hgx-h200", "driver = \"565.57.01\"\ncuda = \"12.7\"");
    cluster.now = at(2025, 3, 14, 10, 23, 56);
    let memory = [134402, 132320, 132320, 132320, 132320, 132320, 132320, 131840];
    let state: Vec<(&str, u32, u32, u64, u32)> = ["19", "3B", "4C", "5D", "9B", "BB", "CB", "DB"]
        .iter()
        .zip([(26, 111), (25, 116), (25, 112), (27, 115), (27, 115), (26, 114), (26, 113), (24, 114)])
        .zip(memory)
        .map(|((bus, (t, p)), m)| (*bus, t, p, m, 0))
        .collect();
    set_gpus(&mut cluster, &state);
    let output = run(cluster, "nvidia-smi");
    let output = output.replace(&format!("|  No running processes found{}|\n", " ".repeat(61)), "");
    assert_eq!(output, reference("nvidia-smi_default_h200x8_drv565_procs-hidden.txt"));
}

#[test]
fn default_table_matches_the_a40x8_driver_525_layout_and_err_cells() {
    // An A40 is no preset: an A100 lab on driver 525 is given the A40's name,
    // fan, P8, power, memory and the captured readings. It then matches the
    // capture except the MIG cell of healthy GPUs (the A40 has no MIG: `N/A`)
    // and the Processes rows (the model has none).
    let captured = reference("nvidia-smi_default_a40x8_drv525_err-gpu4.txt");
    let mut cluster = cluster("hgx-a100", "driver = \"525.60.13\"\ncuda = \"12.0\"");
    cluster.now = at(2023, 2, 27, 16, 8, 33);
    let state = [
        ("03", 24, 14, 0),
        ("04", 25, 13, 0),
        ("43", 40, 81, 821),
        ("44", 30, 14, 0),
        ("83", 0, 0, 0),
        ("84", 23, 14, 3),
        ("C3", 22, 15, 3),
        ("C4", 21, 14, 3),
    ];
    set_gpus(&mut cluster, &state.map(|(bus, t, p, m)| (bus, t, p, m, 0)));
    for gpu in &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus {
        gpu.name = "NVIDIA A40".into();
        gpu.fan_pct = Some(0);
        gpu.pstate = if gpu.index == 2 { 0 } else { 8 };
        gpu.power_limit_w = 300;
        gpu.memory_total_mib = 46068;
    }
    Fault::GpuXid { node: "node".into(), gpu: 4, xid: 119 }.apply(&mut cluster).unwrap();
    let output = run(cluster, "nvidia-smi");
    let (emulated, real) = (lines(&output), lines(&captured));
    assert_eq!(emulated.len(), real.len());
    for (at, (e, r)) in emulated.iter().zip(&real).enumerate() {
        if r.ends_with("N/A |") && e.ends_with("Disabled |") {
            assert_eq!(e.len(), r.len(), "line {}", at + 1);
        } else if r.starts_with("|    2   N/A") {
            assert_eq!(e.trim_end_matches('|').trim(), "|  No running processes found");
        } else {
            assert_eq!(e, r, "line {}", at + 1);
        }
    }
    assert!(emulated.iter().filter(|l| l.starts_with(['+', '|'])).all(|l| l.len() == 79));
}

// ---------------------------------------------------------------- topo

/// The matrix cells of each row: the fields before CPU Affinity.
fn matrix(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .take_while(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let cells = fields.iter().position(|f| *f == "CPU Affinity").unwrap_or(fields.len().saturating_sub(4));
            fields[..cells].iter().map(|f| f.to_string()).collect()
        })
        .collect()
}

#[test]
fn topo_matches_the_h100x8_vm_without_nics() {
    // The VM's 64 vCPUs on one NUMA node: put every GPU on node 0; the CPU list
    // comes from the preset's host, so swap it for the VM's.
    let mut cluster = cluster("hgx-h100", "");
    std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas.clear();
    for gpu in &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus {
        gpu.numa_node = 0;
    }
    let output = run(cluster, "nvidia-smi topo -m").replace("\t0-55,112-167\t", "\t0-63\t");
    assert_eq!(output, reference("nvidia-smi_topo-m_h100x8_no-nic_vm.txt"));
}

#[test]
fn topo_matches_the_h100x8_matrix_with_six_nics() {
    // della's node reports NODE between its sockets and a cgroup-limited CPU
    // affinity, neither of which the model draws: put the HCAs on the captured
    // switches, every device on one NUMA node, and compare the matrix, the
    // legends and the line shapes.
    let captured = reference("nvidia-smi_topo-m_h100x8_mlx5x6_drv545.txt");
    let mut cluster = cluster("hgx-h100", "hcas = 6");
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    for gpu in &mut node.gpus {
        gpu.numa_node = 0;
    }
    for (hca, switch) in node.hcas.iter_mut().zip([0, 0, 3, 4, 4, 6]) {
        (hca.pcie_switch, hca.numa_node) = (switch, 0);
    }
    let output = run(cluster, "nvidia-smi topo -m");
    assert_eq!(matrix(&output), matrix(&captured));
    let legend = |text: &str| text.split_once("\nLegend:").map(|(_, rest)| rest.trim_end().to_string());
    assert_eq!(legend(&output), legend(&captured));
    for (e, r) in output.lines().zip(captured.lines()).take(15) {
        assert_eq!(e.matches('\t').count(), r.matches('\t').count(), "{e:?}");
        assert!(e.ends_with("\tN/A") == r.ends_with("\tN/A"));
    }
}

#[test]
fn topo_mp_matches_the_h100x8_matrix_with_twelve_nics() {
    // Twelve NICs exceed the presets: clone the HCAs onto the captured switches.
    // CPU Affinity there lists every other CPU; swap the preset's ranges for it.
    let mut cluster = cluster("hgx-h100", "");
    let node = std::rc::Rc::make_mut(&mut cluster.nodes[0]);
    let template = node.hcas[0].clone();
    node.hcas = [0, 0, 0, 1, 2, 3, 4, 4, 4, 5, 6, 7]
        .iter()
        .enumerate()
        .map(|(at, &switch)| {
            let mut hca = template.clone();
            hca.name = format!("mlx5_{at}");
            (hca.pcie_switch, hca.numa_node) = (switch, switch / 4);
            hca
        })
        .collect();
    let output = run(cluster, "nvidia-smi topo -mp").replace("\t0-55,112-167\t", "\t0,2,4,6,8,10\t").replace("\t56-111,168-223\t", "\t1,3,5,7,9,11\t");
    // The capture ends right after the NIC legend (SOURCES.md: trimmed).
    assert_eq!(output.trim_end_matches('\n').to_string() + "\n", reference("nvidia-smi_topo-mp_h100x8_mlx5x12.txt"));
}

#[test]
fn topo_shows_nvlinks_down_as_fewer_links_or_a_pcie_path() {
    let mut cluster = cluster("hgx-h100", "");
    Fault::NvlinkDown { node: "node".into(), gpu: 1, links: vec![2] }.apply(&mut cluster).unwrap();
    Fault::NvlinkDown { node: "node".into(), gpu: 5, links: (0..18).collect() }.apply(&mut cluster).unwrap();
    let output = run(cluster, "nvidia-smi topo -m");
    let rows = matrix(&output);
    // rows[0] is the header; GPU n is rows[n + 1].
    assert_eq!(rows[2][1..5], ["NV17", " X ", "NV17", "NV17"]);
    assert_eq!(rows[6][1..9], ["SYS", "SYS", "SYS", "SYS", "NODE", " X ", "NODE", "NODE"]);
    assert_eq!(rows[6][9..11], ["SYS", "SYS"]);
    // GPU 5's rail is mlx5_4 (NIC4): the preset's NICs are not numbered with their GPUs.
    assert_eq!(rows[6][13], "PIX");
    assert_eq!(rows[6][14], "NODE");
}

// ---------------------------------------------------------------- dmon

#[test]
fn dmon_matches_the_h100_capture_layout() {
    // The capture samples a loaded GPU whose readings move; set GPU 0 near them
    // and compare the headers byte for byte and where every field ends.
    let captured = reference("nvidia-smi_dmon-s-pucm_h100_mig-host.txt");
    let mut cluster = cluster("hgx-h100", "");
    let gpu = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus[0];
    (gpu.power_draw_w, gpu.temperature_c, gpu.memory_temperature_c, gpu.utilization_pct) = (145, 47, 54, 40);
    (gpu.sm_clock_mhz, gpu.memory_used_mib) = (1980, 3953);
    let mut session = Session::new(cluster, "node");
    let transcript = session.run("nvidia-smi dmon -s pucm -c 18 -i 0");
    // The first sample at once, one a second after (commands::sampling).
    assert_eq!(transcript.duration_ms, 17_100);
    let output = transcript.stdout();
    let (emulated, real) = (lines(&output), lines(&captured));
    assert_eq!(emulated.len(), real.len());
    assert_eq!(emulated[..2], real[..2]);
    let ends = |line: &str| -> Vec<usize> { line.char_indices().filter(|&(i, c)| c != ' ' && line[i + 1..].starts_with(' ')).map(|(i, _)| i).collect() };
    for (e, r) in emulated.iter().zip(&real).skip(2) {
        assert_eq!(ends(e), ends(r), "{e:?}");
        assert!(e.ends_with(" ") && e.len() == r.len());
    }
    assert!(output.lines().nth(2).unwrap().starts_with("    0    14"));
}

#[test]
fn dmon_reads_throttled_clocks_and_rejects_bad_flags() {
    let mut cluster = cluster("hgx-h100", "");
    Fault::GpuPowerBrake { node: "node".into(), gpu: 2 }.apply(&mut cluster).unwrap();
    let mut session = Session::new(cluster, "node");
    let output = session.run("nvidia-smi dmon -c 1 -s c").stdout();
    assert_eq!(lines(&output)[0], "# gpu   mclk   pclk ");
    assert_eq!(lines(&output)[4], "    2   2619    382 ");
    for line in ["nvidia-smi dmon -c x", "nvidia-smi dmon -s z", "nvidia-smi dmon --bogus", "nvidia-smi dmon -i 9 -c 1"] {
        assert_ne!(session.run(line).status, 0, "{line}");
    }
}

// ---------------------------------------------------------------- nvidia-smi -r

#[test]
fn reset_returns_a_change_and_refuses_what_the_tool_refuses() {
    let mut cluster = cluster("hgx-h100", "");
    Fault::GpuXid { node: "node".into(), gpu: 2, xid: 119 }.apply(&mut cluster).unwrap();
    Fault::GpuXid { node: "node".into(), gpu: 6, xid: 79 }.apply(&mut cluster).unwrap();
    let mut session = Session::new(cluster, "node");
    assert!(session.run("nvidia-smi").stdout().contains("ERR!"));
    // A plain user may not reset a GPU (nvidia-smi's status 4).
    let denied = session.run("nvidia-smi -r -i 2");
    assert_eq!((denied.stdout().as_str(), denied.status), ("Unable to reset GPU 00000000:43:00.0: Insufficient Permissions\n", 4));
    assert!(session.run("nvidia-smi").stdout().contains("ERR!"));
    // DCGM holds every GPU until it is stopped.
    assert_eq!(session.run("sudo nvidia-smi -r -i 2").status, 255);
    session.run("sudo systemctl stop dcgm-exporter nvidia-dcgm");
    let reset = session.run("sudo nvidia-smi -r -i 2");
    assert_eq!((reset.stdout().as_str(), reset.status), ("GPU 00000000:43:00.0 was successfully reset.\nAll done.\n", 0));
    assert!(!session.run("nvidia-smi").stdout().contains("ERR!"));
    assert_eq!(session.run("nvidia-smi -r").status, 2);
    let lost = session.run("sudo nvidia-smi -r -i 6");
    assert_eq!((lost.stderr().as_str(), lost.status), ("Unable to determine the device handle for GPU0000:C3:00.0: Unknown Error\n", 15));
    assert_eq!(session.run("sudo nvidia-smi --gpu-reset -i 9").status, 6);
}

// ---------------------------------------------------------------- dcgmi

#[test]
fn dcgmi_discovery_matches_the_h800x8_capture() {
    let captured = reference("dcgmi_discovery-l_h800x8.txt");
    let mut cluster = cluster("hgx-h100", "");
    let buses: Vec<&str> = captured.lines().filter_map(|l| l.split("PCI Bus ID: ").nth(1)).map(str::trim_end).collect();
    let uuids: Vec<&str> = captured.lines().filter_map(|l| l.split("Device UUID: ").nth(1)).map(|u| u.trim_end_matches([' ', '|'])).collect();
    for (gpu, (bus, uuid)) in std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus.iter_mut().zip(buses.iter().zip(&uuids)) {
        gpu.name = "NVIDIA H800".into();
        gpu.bus_id = bus.trim_end_matches([' ', '|']).to_string();
        gpu.uuid = uuid.to_string();
    }
    assert_eq!(run(cluster, "dcgmi discovery -l"), captured);
}

#[test]
fn dcgmi_diag_r2_matches_the_a100x8_dcgm_3_capture() {
    let cluster = cluster("hgx-a100", "driver = \"535.104.12\"\ndcgm = \"3.3.3\"");
    let output = run(cluster, "dcgmi diag -r 2 -p pcie.gpu_nvlinks_expected_up=12");
    assert_eq!(output, reference("dcgmi_diag-r2_a100x8_dcgm333_drv535.txt"));
}

#[test]
fn dcgmi_diag_r2_matches_the_dcgm_4_layout() {
    // The capture is a single A10G (device 2237): run on one H100 (2330).
    let cluster = cluster("hgx-h100", "driver = \"580.105.08\"\ndcgm = \"4.4.2\"");
    let output = run(cluster, "dcgmi diag -r 2 -i 0").replace("| 2330 ", "| 2237 ");
    assert_eq!(output, reference("dcgmi_diag-r2_a10g_dcgm442_drv580_v4-format.txt"));
}

#[test]
fn dcgmi_diag_stops_at_deployment_on_a_pending_row_remap() {
    // The fragment predates DCGM 3.2.5: its wording, and a run that stops
    // at deployment printing only the error.
    let captured = reference("dcgmi_diag_fragment_row-remap-pending_ml-engineering.txt");
    let mut cluster = cluster("hgx-h100", "dcgm = \"3.1.8\"");
    Fault::GpuRowRemapPending { node: "node".into(), gpu: 3 }.apply(&mut cluster).unwrap();
    let transcript = Session::new(cluster, "node").run("dcgmi diag -r 1");
    assert_ne!(transcript.status, 0);
    let output = transcript.stdout();
    assert_eq!(lines(&output)[..6], lines(&captured)[..]);
}

#[test]
fn dcgmi_diag_reports_thermal_violations_as_the_fragment_does() {
    // The violation times are drawn from the seed: compare with digits masked.
    // The fragment's last line is cut by its author.
    let captured = reference("dcgmi_diag-r2_fragment_gpu-memory-fail-thermal_ml-engineering.txt");
    let mut cluster = cluster("hgx-h100", "");
    Fault::GpuThermalSlowdown { node: "node".into(), gpu: 0 }.apply(&mut cluster).unwrap();
    let output = Session::new(cluster, "node").run("dcgmi diag -r 2").stdout();
    let mask = |line: &str| line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>();
    let emulated: Vec<String> = output.lines().skip_while(|l| !l.starts_with("| GPU Memory")).map(mask).collect();
    let real: Vec<String> = captured.lines().map(mask).collect();
    assert_eq!(emulated[..real.len() - 1], real[..real.len() - 1]);
    assert!(emulated[real.len() - 1].starts_with(&real[real.len() - 1]));
}

#[test]
fn dcgmi_diag_finds_the_models_faults() {
    let mut cluster = cluster("hgx-h100", "");
    let node = || "node".to_string();
    Fault::GpuPcieDegraded { node: node(), gpu: 1, gen: None, width: Some(8) }.apply(&mut cluster).unwrap();
    Fault::NvlinkDown { node: node(), gpu: 2, links: vec![4] }.apply(&mut cluster).unwrap();
    let mut session = Session::new(cluster.clone(), "node");
    let output = session.run("dcgmi diag -r 2").stdout();
    assert!(
        output.contains("| PCIe                      | Pass - GPUs: 0, 3, 4, 5, 6, 7                  |\n|                           | Fail - GPUs: 1, 2 "),
        "{output}"
    );
    assert!(output.contains("GPU 2's NvLink link 4 is currently down"));
    assert!(output.contains("| Error                     | GPU 1 is running at PCI link width 8X, which   |"));
    assert!(output.contains("| GPU Device IDs Detected   | 2330,2330,2330,2330,2330,2330,2330,2330        |"));
    // A GPU that falls off the bus leaves discovery, but the host engine
    // still holds it: NVML says it is lost and the run stops at deployment.
    Fault::GpuXid { node: node(), gpu: 7, xid: 79 }.apply(&mut cluster).unwrap();
    let mut session = Session::new(cluster, "node");
    assert!(session.run("dcgmi discovery -l").stdout().starts_with("7 GPUs found.\n"));
    let output = session.run("dcgmi diag -r 2").stdout();
    assert!(
        output.contains(
            "| Error                     | Error calling NVML API nvmlDeviceGetHandleByI  |\n|                           | ndex for GPU 7: GPU is lost"
        ),
        "{output}"
    );
    // Uncorrectable errors remap a row, pending until a reset: DCGM 3.3
    // prints every deployment check, the error under the one that failed,
    // and skips the later tests (DcgmDiag 3.3.9's layout, from its source).
    let mut cluster = self::cluster("hgx-h100", "");
    Fault::GpuEccUncorrectable { node: node(), gpu: 5, count: 2 }.apply(&mut cluster).unwrap();
    let run = Session::new(cluster, "node").run("dcgmi diag -r 2");
    assert_eq!(run.status, 226, "DCGM_ST_NVVS_ERROR");
    let output = run.stdout();
    assert!(
        output.contains(
            "| Persistence Mode          | Pass                                           |\n\
             | Environment Variables     | Pass                                           |\n\
             | Page Retirement/Row Remap | Fail                                           |\n\
             | Error                     | GPU 5 had memory errors and row remappings ar  |\n\
             |                           | e pending                                      |\n\
             | Graphics Processes        | Pass                                           |\n"
        ),
        "{output}"
    );
    assert!(output.contains("| PCIe                      | Skip - All ") && output.contains("| GPU Memory                | Skip - All "), "{output}");
    // Persistence off: before 3.2.5 an error that stops the run; since, an
    // info row under a passing check.
    let mut cluster = self::cluster("hgx-h100", "persistence = false\ndcgm = \"3.1.8\"");
    Fault::GpuXid { node: node(), gpu: 0, xid: 79 }.apply(&mut cluster).unwrap();
    let output = Session::new(cluster, "node").run("dcgmi diag -r 1").stdout();
    assert!(
        output.contains("| Error                     | Persistence mode for GPU 1 is currently disab  |\n|                           | led. The DCGM"),
        "{output}"
    );
    let cluster = self::cluster("hgx-h100", "persistence = false");
    let run = Session::new(cluster, "node").run("dcgmi diag -r 1");
    assert_eq!(run.status, 0);
    assert!(
        run.stdout().contains("| Persistence Mode          | Pass                                           |\n| Info                      | Persistence mode for GPU 0 is disabled. Enabl  |\n"),
        "{}",
        run.stdout()
    );
    assert!(!run.stdout().contains("Integration"), "level 1 runs no per-GPU test: {}", run.stdout());
}

#[test]
fn dcgmi_diag_json_is_jsoncpps_styled_output() {
    // DCGM 3.3.9's JSON (dcgmi/Diag.cpp, jsoncpp 1.9.5's styled writer): tabs,
    // sorted keys, one result per deployment check, one per GPU later.
    let mut cluster = cluster("hgx-h100", "");
    Fault::NvlinkDown { node: "node".into(), gpu: 2, links: vec![4] }.apply(&mut cluster).unwrap();
    let run = Session::new(cluster, "node").run("dcgmi diag -r 2 -j");
    assert_eq!(run.status, 226);
    let json = run.stdout();
    assert!(
        json.starts_with("{\n\t\"DCGM GPU Diagnostic\" : \n\t{\n\t\t\"test_categories\" : \n\t\t[\n\t\t\t{\n\t\t\t\t\"category\" : \"Deployment\",\n"),
        "{json}"
    );
    assert!(
        json.contains(
            "\t\t\t\t\t\t\"name\" : \"Denylist\",\n\t\t\t\t\t\t\"results\" : \n\t\t\t\t\t\t[\n\t\t\t\t\t\t\t{\n\t\t\t\t\t\t\t\t\"status\" : \"Pass\"\n"
        ),
        "{json}"
    );
    assert!(json.contains("\"error_id\" : 14,") && json.contains("\"warning\" : \"GPU 2's NvLink link 4 is currently down\""), "{json}");
    assert!(json.contains("\t\"GPU Device IDs\" : \n\t[\n\t\t\"2330\",\n"), "{json}");
    assert!(json.ends_with("\t\"version\" : \"3.3.9\"\n}\n"), "{json}");
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(value["DCGM GPU Diagnostic"]["test_categories"].as_array().map(Vec::len), Some(3));
}
