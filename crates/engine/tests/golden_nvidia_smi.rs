//! Golden tests: the emulated `nvidia-smi` against real captures in
//! ../shared/reference/gpu. A lab is configured like the captured machine
//! (GPU model, count, driver, CUDA) and its GPUs are put in the captured state
//! (temperatures, power, memory in use); the output must then match the
//! capture line for line, byte for byte.

mod common;

use clusterlab_engine::model::Cluster;
use clusterlab_engine::Session;
use common::assert_same_lines;

fn reference(name: &str) -> String {
    common::reference("gpu", name)
}

fn cluster(preset: &str, driver: &str, cuda: &str) -> Cluster {
    common::lab_cluster(preset, &format!("driver = \"{driver}\"\ncuda = \"{cuda}\""))
}

/// The captured state of each GPU: (temperature C, power W, memory used MiB, utilization %).
fn set_state(cluster: &mut Cluster, state: &[(u32, u32, u64, u32)]) {
    let gpus = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).gpus;
    assert_eq!(gpus.len(), state.len());
    for (gpu, &(temperature, power, memory, utilization)) in gpus.iter_mut().zip(state) {
        gpu.temperature_c = temperature;
        gpu.power_draw_w = power;
        gpu.memory_used_mib = memory;
        gpu.utilization_pct = utilization;
    }
}

fn run(cluster: Cluster, line: &str) -> String {
    let transcript = Session::new(cluster, "node").run(line);
    assert_eq!(transcript.status, 0, "{}", transcript.stderr());
    transcript.stdout()
}

/// Drops the timestamp line, which these captures' publishers cut (SOURCES.md).
fn without_timestamp(output: &str) -> &str {
    let (first, rest) = output.split_once('\n').expect("several lines");
    assert!(first.ends_with("       ") && first.len() == 31, "timestamp line: {first:?}");
    rest
}

#[test]
fn default_table_matches_h200x8_driver_570_idle() {
    let mut cluster = cluster("hgx-h200", "570.124.06", "12.8");
    set_state(&mut cluster, &[(23, 76, 1, 0), (21, 75, 1, 0), (23, 76, 1, 0), (24, 77, 1, 0), (24, 75, 1, 0), (23, 77, 1, 0), (24, 76, 1, 0), (24, 76, 1, 0)]);
    let output = run(cluster, "nvidia-smi");
    let captured = reference("nvidia-smi_default_h200x8_drv570_idle.txt");
    assert_same_lines(without_timestamp(&output), &captured);
    assert_eq!(without_timestamp(&output), captured, "bytes differ (trailing spaces or final newline)");
}

#[test]
fn default_table_matches_h100x8_driver_570_under_load() {
    let mut cluster = cluster("hgx-h100", "570.158.01", "12.8");
    set_state(
        &mut cluster,
        &[(51, 495, 74953, 93), (29, 69, 4, 0), (31, 72, 4, 0), (29, 69, 4, 0), (31, 70, 4, 0), (28, 74, 4, 0), (30, 69, 4, 0), (27, 68, 4, 0)],
    );
    let output = run(cluster, "nvidia-smi");
    let captured = reference("nvidia-smi_default_h100x8_drv570_gpu-section-only.txt");
    // The publisher pasted the GPU box only: compare that part.
    let gpu_box: String = without_timestamp(&output).lines().take(captured.lines().count()).map(|l| format!("{l}\n")).collect();
    assert_eq!(gpu_box, captured);
}

#[test]
fn list_matches_the_h100x8_capture_shape() {
    let captured = reference("nvidia-smi_L_h100x8.txt");
    let output = run(cluster("hgx-h100", "570.158.01", "12.8"), "nvidia-smi -L");
    assert_eq!(output.lines().count(), captured.lines().count());
    for (emulated, real) in output.lines().zip(captured.lines()) {
        // Same text up to the UUID, and a UUID of the same shape.
        let (e_head, e_uuid) = emulated.split_once("(UUID: GPU-").expect("uuid");
        let (r_head, r_uuid) = real.split_once("(UUID: GPU-").expect("uuid");
        assert_eq!(e_head, r_head);
        let shape = |uuid: &str| uuid.chars().map(|c| if c.is_ascii_hexdigit() { 'h' } else { c }).collect::<String>();
        assert_eq!(shape(e_uuid), shape(r_uuid));
    }
}

#[test]
fn timestamp_line_has_the_capture_layout() {
    // The 580 capture kept its timestamp line: `Ddd Mmm dd HH:MM:SS YYYY` and 7 spaces.
    let captured = reference("nvidia-smi_default_h200x8_drv580_procs.txt");
    let real = captured.lines().next().expect("a first line");
    let output = run(cluster("hgx-h100", "570.158.01", "12.8"), "nvidia-smi");
    let emulated = output.lines().next().expect("a first line");
    let shape = |line: &str| line.chars().map(|c| if c.is_ascii_alphanumeric() { 'x' } else { c }).collect::<String>();
    assert_eq!(shape(emulated), shape(real));
}
