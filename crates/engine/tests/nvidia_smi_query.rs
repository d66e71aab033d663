//! `nvidia-smi -q` against real outputs, driver branch by driver branch: the
//! section order, every field name, the padding that puts the colon at one
//! column, the `N/A` conventions, and that faults still show in it.
//!
//! Sources (facts only; the three full outputs are quoted at the end):
//! - 560.35.03, one H100 SXM of an HGX node (Princeton della-k18g3):
//!   https://github.com/jdh4/job_data_2023 README.md, "GPU on the H100 nodes".
//! - 565.57.01, 8 x H100 SXM HGX: https://github.com/thamada/nvidia-smi
//!   gls/H100SXMx8_smi.py (a simulator script holding the pasted output).
//! - 535.129.03, 8 x A100-SXM4-40GB: research index id 47337582899, a Chinese
//!   nvidia-smi notes page (the index does not name its repository).
//! - 545.23.08 H100 SXM and 550.90.12 H200 (in a VM): ../shared/reference/gpu,
//!   see SOURCES.md there.
//! - 570.124.06: a V100 in a VM (index id 60927155114, a notebook's output)
//!   and an RTX 5090 (index id 9311610776, another simulator script's paste).
//! - 580.119.02, an RTX 3050 laptop GPU (index id 42511004217); 580.95.05,
//!   GB10 `-d PERFORMANCE` (../shared/reference/gpu).
//! - 535.129.03 `-q -d compute`: NVIDIA's GenerativeAIExamples docs
//!   (index id 10353984612).
//!
//! Unverified: no H100 output from 535, 570, 575 or 580 was found. Those
//! layouts are pinned here from other GPUs on the same driver (the section
//! and field sequence, which is the driver's); the H100's values in them (N/A
//! for DRAM encryption, power smoothing, workload profiles, the 570 voltage,
//! the fabric health fields; both power readings carrying the one draw) are
//! taken from its neighbouring branches. Where within 580 the column moved
//! from 42 to 55 (between 580.105 and 580.119) is not known.

mod common;

use std::rc::Rc;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::model::time::epoch_from_date;
use clusterlab_engine::model::{Cluster, Gpu};
use clusterlab_engine::Session;

fn cluster(preset: &str, driver: &str, cuda: &str) -> Cluster {
    common::lab_cluster(preset, &format!("driver = \"{driver}\"\ncuda = \"{cuda}\""))
}

fn gpu(cluster: &mut Cluster, index: usize, change: impl FnOnce(&mut Gpu)) {
    change(&mut Rc::make_mut(&mut cluster.nodes[0]).gpus[index]);
}

/// Puts the lab's clock at a capture's `Timestamp`, the node booted ten hours
/// before (the InfoROM flush follows the boot).
fn at(cluster: &mut Cluster, (year, month, day): (i64, u32, u32), (hour, minute, second): (i64, i64, i64)) {
    cluster.now = epoch_from_date(year, month, day) + hour * 3600 + minute * 60 + second;
    let booted = cluster.now - 10 * 3600;
    Rc::make_mut(&mut cluster.nodes[0]).booted_at = booted;
}

fn run(cluster: Cluster, line: &str) -> String {
    let transcript = Session::new(cluster, "node").run(line);
    assert_eq!(transcript.status, 0, "{line}: {}", transcript.stderr());
    transcript.stdout()
}

/// Each run of hex digits that holds a decimal digit replaced by `#`: the
/// values the model draws (or the captured machine had) fall away, field
/// names, padding, units, `N/A` and words stay.
fn mask(line: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().any(|c| c.is_ascii_digit()) {
            out.push('#');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A line's field name with its indentation (no padding), or the whole
/// line for a heading.
fn label(line: &str) -> &str {
    line.split_once(" : ").map_or(line, |(left, _)| left).trim_end()
}

/// Compares `emulated` with `captured` line by line: exactly, except the
/// lines `drawn` picks, which must match once masked.
fn assert_layout(emulated: &str, captured: &str, drawn: &dyn Fn(&str) -> bool) {
    let emulated: Vec<&str> = emulated.lines().collect();
    let captured: Vec<&str> = captured.lines().collect();
    for (at, (e, c)) in emulated.iter().zip(&captured).enumerate() {
        if drawn(c) {
            assert_eq!(mask(e), mask(c), "line {} (masked)", at + 1);
        } else {
            assert_eq!(e, c, "line {}", at + 1);
        }
    }
    assert_eq!(emulated.len(), captured.len(), "line counts differ");
}

fn labelled(line: &str, labels: &[&str]) -> bool {
    labels.contains(&label(line).trim_start())
}

/// Top-level fields and headings, in order.
fn sections(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with("    ") && !line.starts_with("     ")).map(label).map(str::trim_start).collect()
}

// ---------------------------------------------------------------- 560

#[test]
fn q_560_is_the_della_h100_line_for_line() {
    let mut c = cluster("hgx-h100", "560.35.03", "12.6");
    at(&mut c, (2024, 9, 26), (14, 13, 55));
    // The captured GPU's identity and idle readings; it is GPU 7 (Minor Number 7).
    gpu(&mut c, 7, |gpu| {
        gpu.bus_id = "00000000:DB:00.0".into();
        gpu.uuid = "GPU-f7b02328-d6fe-5b1f-9683-15041689bb03".into();
        gpu.serial = "1650124008279".into();
        gpu.vbios = "96.00.A5.00.01".into();
        gpu.temperature_c = 34;
        gpu.memory_temperature_c = 40;
        gpu.memory_used_mib = 1;
    });
    let output = run(c, "nvidia-smi -q -i 7");
    // Compared masked, what the model draws from its seed or cannot know of
    // that machine: the Slurm allocation's one visible GPU, the GPU's slot on
    // that baseboard, the BBX flush, PCIe replays and traffic, power draws,
    // the idle voltage, and the free memory (nvidia-smi's own rounding:
    // 81559 - 450 - 1 is 81108, it printed 81110). Everything else is exact.
    let drawn = |line: &str| {
        labelled(
            line,
            &["Attached GPUs", "Module ID", "Latest Timestamp", "Latest Duration", "Replays Since Reset", "Tx Throughput", "Rx Throughput", "Power Draw"],
        ) || line.ends_with(" mV")
            || (label(line) == "        Free" && line.contains("81110"))
    };
    assert_layout(&output, DELLA_560, &drawn);
}

#[test]
fn the_quoted_captures_keep_nvidia_smis_trailing_spaces() {
    for capture in [DELLA_560, H100_565] {
        assert!(capture.contains("CAS_32 CAS_64 \n        Atomic Caps Inbound               : FETCHADD_32"));
        assert!(capture.contains("\n    GPU Memory Power Readings \n"));
    }
}

// ---------------------------------------------------------------- 565

#[test]
fn q_565_is_the_hgx_h100_gpu_0_line_for_line() {
    let mut c = cluster("hgx-h100", "565.57.01", "12.7");
    at(&mut c, (2024, 11, 14), (7, 0, 14));
    gpu(&mut c, 0, |gpu| {
        gpu.bus_id = "00000000:18:00.0".into();
        gpu.uuid = "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1".into();
        gpu.serial = "1654423001593".into();
        gpu.vbios = "96.00.74.00.01".into();
        gpu.temperature_c = 30;
        gpu.memory_temperature_c = 36;
        gpu.memory_used_mib = 1;
    });
    let output = run(c, "nvidia-smi -q -i 0");
    // This node reserves 454 MiB where della's reserves 450 (the spec's).
    let drawn = |line: &str| {
        labelled(line, &["Latest Timestamp", "Latest Duration", "Replays Since Reset", "Tx Throughput", "Rx Throughput", "Power Draw", "Reserved", "Free"])
            || line.ends_with(" mV")
    };
    assert_layout(&output, H100_565, &drawn);
    // 565 moved the module id into Platform Info and added the recovery action.
    assert!(output.contains(
        "    FRU Part Number                       : N/A\n    Platform Info\n        RACK Serial Number                : N/A\n        Chassis Physical Slot Number      : N/A\n        Compute Slot Index                : N/A\n        Node Index                        : N/A\n        Peer Type                         : N/A\n        Module Id                         : 2\n    Inforom Version\n"
    ));
    assert!(output.contains("        Drain and Reset Recommended       : No\n    GPU Recovery Action                   : None\n    GSP Firmware Version                  : 565.57.01\n"));
}

// ---------------------------------------------------------------- 535, 545, 550

#[test]
fn q_535_is_the_a100_node_line_for_line() {
    let mut c = cluster("hgx-a100", "535.129.03", "12.2");
    at(&mut c, (2024, 1, 4), (14, 41, 13));
    gpu(&mut c, 0, |gpu| {
        gpu.bus_id = "00000000:2F:00.0".into();
        gpu.uuid = "GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310".into();
        gpu.persistence_mode = false;
    });
    let output = run(c, "nvidia-smi -q -i 0");
    // The capture is the 40 GB part: its numbers (and part numbers) differ
    // from the preset's 80 GB one, so every line with digits is compared
    // masked. Its GPUs had not flushed the InfoROM black box: N/A there, a
    // time here (every H100 output shows one).
    let bbx = |line: &str| labelled(line, &["Latest Timestamp", "Latest Duration"]);
    let emulated: String = output.lines().filter(|line| !bbx(line)).map(|line| format!("{line}\n")).collect();
    let captured: String = A100_535.lines().filter(|line| !bbx(line)).map(|line| format!("{line}\n")).collect();
    assert_layout(&emulated, &captured, &|line| line.chars().any(|c| c.is_ascii_digit()));
    assert!(output.contains("    Inforom BBX Object Flush\n        Latest Timestamp                  : "));
}

#[test]
fn q_535_on_h100_is_the_535_layout_with_hoppers_thermal_limits() {
    let mut c = cluster("hgx-h100", "535.129.03", "12.2");
    gpu(&mut c, 0, |gpu| {
        gpu.bus_id = "00000000:2F:00.0".into();
        gpu.persistence_mode = false;
    });
    let output = run(c, "nvidia-smi -q -i 0");
    // The same fields in the same order as the A100's 535 report, but for the
    // thresholds a GPU with a T.Limit gives as offsets (as 545 on H100 does).
    let hopper = |name: &str| match name {
        "        GPU Shutdown Temp" => "        GPU Shutdown T.Limit Temp".to_string(),
        "        GPU Slowdown Temp" => "        GPU Slowdown T.Limit Temp".to_string(),
        "        GPU Max Operating Temp" => "        GPU Max Operating T.Limit Temp".to_string(),
        "        Memory Max Operating Temp" => "        Memory Max Operating T.Limit Temp".to_string(),
        other => other.to_string(),
    };
    let expected: Vec<String> = A100_535.lines().map(label).map(hopper).collect();
    let emulated: Vec<String> = output.lines().map(|line| label(line).to_string()).collect();
    assert_eq!(emulated, expected);
    for line in output.lines().filter(|line| line.contains(" : ")) {
        assert_eq!(line.find(" : ").map(|at| at + 1), Some(42), "{line:?}");
    }
    // 535 prints GSP firmware before the virtualization mode, has no C2C
    // mode, sparse mode, memory power or capabilities, and two fabric lines.
    assert!(output
        .contains("        Pending                           : N/A\n    GSP Firmware Version                  : 535.129.03\n    GPU Virtualization Mode\n"));
    assert!(output.contains("        Atomic Caps Inbound               : N/A\n        Atomic Caps Outbound              : N/A\n"));
    assert!(output.contains("        GPU T.Limit Temp                  : "));
    assert!(output.contains("        GPU Shutdown T.Limit Temp         : -8 C\n        GPU Slowdown T.Limit Temp         : -2 C\n"));
    assert!(output.ends_with("    Fabric\n        State                             : Completed\n        Status                            : Success\n    Processes                             : None\n"));
    for absent in ["GPU C2C Mode", "Sparse Operation Mode", "GPU Memory Power Readings", "Capabilities", "Base Classcode", "CliqueId"] {
        assert!(!output.contains(absent), "{absent}");
    }
}

#[test]
fn q_545_is_the_della_h100_reference_capture() {
    let captured = common::reference("gpu", "nvidia-smi_q_h100_drv545.txt");
    let mut c = cluster("hgx-h100", "545.23.08", "12.3");
    at(&mut c, (2024, 2, 23), (11, 51, 29));
    gpu(&mut c, 0, |gpu| {
        gpu.bus_id = "00000000:19:00.0".into();
        gpu.uuid = "GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1".into();
        gpu.vbios = "96.00.74.00.0D".into();
    });
    let output = run(c, "nvidia-smi -q -i 0");
    // The capture lost the blank lines around the header (SOURCES.md), and
    // that site runs its H100s with GSP firmware off (`N/A`).
    let keep = |text: &str| text.lines().filter(|line| !line.is_empty()).map(|line| format!("{line}\n")).collect::<String>();
    let gsp_off = keep(&output).replace("    GSP Firmware Version                  : 545.23.08\n", "    GSP Firmware Version                  : N/A\n");
    assert_layout(&gsp_off, &keep(&captured), &|line| line.chars().any(|c| c.is_ascii_digit()));
}

#[test]
fn q_550_is_the_h200_reference_capture_but_for_what_a_vm_hides() {
    let captured = common::reference("gpu", "nvidia-smi_q_h200_drv550_passthrough.txt");
    let mut c = cluster("hgx-h200", "550.90.12", "12.4");
    at(&mut c, (2024, 11, 28), (4, 3, 23));
    gpu(&mut c, 0, |gpu| {
        gpu.bus_id = "00000000:03:00.0".into();
        gpu.uuid = "GPU-cb3dfa52-e2f3-9ca4-a399-7d16041c3732".into();
        gpu.vbios = "96.00.A5.00.03".into();
    });
    let output = run(c, "nvidia-smi -q -i 0");
    // In the VM: display disabled, no BBX flush, Pass-Through, no host PCIe
    // generation, no atomics. The model is bare metal.
    let vm = |line: &str| labelled(line, &["Display Mode", "Latest Timestamp", "Latest Duration", "Virtualization Mode", "Host Max", "Atomic Caps Outbound"]);
    let emulated: String = output.lines().filter(|line| !vm(line)).map(|line| format!("{line}\n")).collect();
    let real: String = captured.lines().filter(|line| !vm(line)).map(|line| format!("{line}\n")).collect();
    assert_layout(&emulated, &real, &|line| line.chars().any(|c| c.is_ascii_digit()));
    assert!(output.contains("        Atomic Caps Inbound               : N/A\n        Atomic Caps Outbound              : FETCHADD_32"));
}

// ---------------------------------------------------------------- 570, 580

/// The top-level sequence of the 570.124.06 outputs (V100 and RTX 5090 agree).
const SECTIONS_570: &[&str] = &[
    "Product Name",
    "Product Brand",
    "Product Architecture",
    "Display Mode",
    "Display Active",
    "Persistence Mode",
    "Addressing Mode",
    "MIG Mode",
    "Accounting Mode",
    "Accounting Mode Buffer Size",
    "Driver Model",
    "Serial Number",
    "GPU UUID",
    "Minor Number",
    "VBIOS Version",
    "MultiGPU Board",
    "Board ID",
    "Board Part Number",
    "GPU Part Number",
    "FRU Part Number",
    "Platform Info",
    "Inforom Version",
    "Inforom BBX Object Flush",
    "GPU Operation Mode",
    "GPU C2C Mode",
    "GPU Virtualization Mode",
    "GPU Reset Status",
    "GPU Recovery Action",
    "GSP Firmware Version",
    "IBMNPU",
    "PCI",
    "Fan Speed",
    "Performance State",
    "Clocks Event Reasons",
    "Sparse Operation Mode",
    "FB Memory Usage",
    "BAR1 Memory Usage",
    "Conf Compute Protected Memory Usage",
    "Compute Mode",
    "Utilization",
    "Encoder Stats",
    "FBC Stats",
    "DRAM Encryption Mode",
    "ECC Mode",
    "ECC Errors",
    "Retired Pages",
    "Remapped Rows",
    "Temperature",
    "GPU Power Readings",
    "GPU Memory Power Readings",
    "Module Power Readings",
    "Power Smoothing",
    "Workload Power Profiles",
    "Clocks",
    "Applications Clocks",
    "Default Applications Clocks",
    "Deferred Clocks",
    "Max Clocks",
    "Max Customer Boost Clocks",
    "Clock Policy",
    "Voltage",
    "Fabric",
    "Processes",
    "Capabilities",
];

#[test]
fn q_570_has_the_570_sections_and_fields() {
    let output = run(cluster("hgx-h100", "570.158.01", "12.8"), "nvidia-smi -q -i 0");
    assert_eq!(sections(&output), SECTIONS_570);
    for quoted in [
        // Lines as both 570.124.06 outputs print them (values the H100's).
        "    Platform Info\n        Chassis Serial Number             : N/A\n        Slot Number                       : N/A\n        Tray Index                        : N/A\n        Host ID                           : N/A\n        Peer Type                         : N/A\n        Module Id                         : 2\n        GPU Fabric GUID                   : N/A\n    Inforom Version\n",
        "    GPU Reset Status\n        Reset Required                    : Requested functionality has been deprecated\n        Drain and Reset Recommended       : Requested functionality has been deprecated\n    GPU Recovery Action                   : None\n    GSP Firmware Version                  : 570.158.01\n",
        "    Utilization\n        GPU                               : 0 %\n",
        "    DRAM Encryption Mode\n        Current                           : N/A\n        Pending                           : N/A\n    ECC Mode\n",
        "    GPU Power Readings\n        Average Power Draw                : ",
        "    Module Power Readings\n        Average Power Draw                : N/A\n        Instantaneous Power Draw          : N/A\n        Current Power Limit               : N/A\n",
        "    Power Smoothing                       : N/A\n    Workload Power Profiles\n        Requested Profiles                : N/A\n        Enforced Profiles                 : N/A\n    Clocks\n",
        "        Health\n            Bandwidth                     : N/A\n            Route Recovery in progress    : N/A\n            Route Unhealthy               : N/A\n            Access Timeout Recovery       : N/A\n    Processes                             : None\n    Capabilities\n        EGM                               : disabled\n",
    ] {
        assert!(output.contains(quoted), "{quoted}\n---\n{output}");
    }
}

#[test]
fn q_580_119_has_the_wide_column_and_the_580_sections() {
    let output = run(cluster("hgx-h100", "580.119.02", "13.0"), "nvidia-smi -q -i 0");
    // The RTX 3050's 580.119.02 report, top level: 570's without the reset
    // status and the voltage, with Display Attached, GPU PDI and the clock
    // event counters.
    let mut expected: Vec<&str> = SECTIONS_570.iter().copied().filter(|s| !["GPU Reset Status", "Voltage"].contains(s)).collect();
    expected.insert(4, "Display Attached");
    expected.insert(14, "GPU PDI");
    let at = expected.iter().position(|s| *s == "Sparse Operation Mode").unwrap_or(0);
    expected.insert(at, "Clocks Event Reasons Counters");
    assert_eq!(sections(&output), expected);
    for line in output.lines().filter(|line| line.contains(" : ")) {
        assert_eq!(line.find(" : ").map(|at| at + 1), Some(55), "{line:?}");
    }
    for quoted in [
        "Driver Version                                         : 580.119.02\n",
        "    Display Mode                                       : Requested functionality has been deprecated\n    Display Attached                                   : No\n",
        "        vGPU Heterogeneous Mode                        : N/A\n    GPU Recovery Action                                : None\n    GSP Firmware Version                               : 580.119.02\n",
        "            SRAM Other                                 : 0\n        Channel Repair Pending                         : No\n        TPC Repair Pending                             : No\n    Retired Pages\n",
        "        Health\n            Summary                                    : N/A\n            Bandwidth                                  : N/A\n",
        "            Access Timeout Recovery                    : N/A\n            Incorrect Configuration                    : N/A\n",
    ] {
        assert!(output.contains(quoted), "{quoted}\n---\n{output}");
    }
    assert!(output.contains("    GPU PDI                                            : 0x"));
}

#[test]
fn d_performance_580_has_the_gb10_layout() {
    let captured = common::reference("gpu", "nvidia-smi_q-d-PERFORMANCE_gb10_drv580_annotated.txt");
    let output = run(cluster("hgx-h100", "580.95.05", "13.0"), "nvidia-smi -q -d PERFORMANCE -i 0");
    // Field names and padding; the GB10 was busy (Idle Not Active, 14 h of
    // power capping) and has no sparse mode, the idle H100 is and has.
    let names = |text: &str| text.lines().skip(9).map(|line| label(line).to_string()).collect::<Vec<_>>();
    assert_eq!(names(&output), names(&captured));
    assert!(output
        .contains("    Clocks Event Reasons Counters\n        SW Power Capping                  : 0 us\n        Sync Boost                        : 0 us\n"));
    assert!(output.ends_with("    Sparse Operation Mode                 : Disabled\n"));
}

// ---------------------------------------------------------------- faults

#[test]
fn faults_show_in_the_full_report() {
    let node = || "node".to_string();
    let mut c = cluster("hgx-h100", "560.35.03", "12.6");
    for fault in [
        Fault::GpuRowRemapPending { node: node(), gpu: 1 },
        Fault::GpuFallenOffBus { node: node(), gpu: 2, dead: false },
        Fault::GpuThermalSlowdown { node: node(), gpu: 3 },
        Fault::GpuXid { node: node(), gpu: 4, xid: 119 },
        Fault::FabricManagerDown { node: node() },
    ] {
        fault.apply(&mut c).unwrap();
    }
    let mut session = Session::new(c, "node");
    let all = session.run("nvidia-smi -q");
    let out = all.stdout();
    // A GPU off the bus is absent, named on stderr, and not attached.
    assert_eq!(all.stderr(), "Unable to determine the device handle for GPU0000:43:00.0: Unknown Error\n");
    assert!(!out.contains("00000000:43:00.0"));
    assert!(out.contains("Attached GPUs                             : 7\n"));
    assert_eq!(out.matches("\nGPU 00000000:").count(), 7);

    let remap = session.run("nvidia-smi -q -i 1").stdout();
    assert!(remap.contains(
        "    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               : 1\n        Pending                           : Yes\n        Remapping Failure Occurred        : No\n        Bank Remap Availability Histogram\n            Max                           : 2559 bank(s)\n            High                          : 1 bank(s)\n"
    ), "{remap}");
    // The uncorrectable error behind it (Xid 48) wants a reset.
    assert!(remap.contains("    GPU Reset Status\n        Reset Required                    : Yes\n"));
    assert!(remap.contains("        Volatile\n            SRAM Correctable              : 0\n            SRAM Uncorrectable Parity     : 0\n            SRAM Uncorrectable SEC-DED    : 0\n            DRAM Correctable              : 0\n            DRAM Uncorrectable            : 1\n"));

    let hot = session.run("nvidia-smi -q -i 3").stdout();
    assert!(hot.contains("        HW Slowdown                       : Active\n            HW Thermal Slowdown           : Active\n"));

    // A GPU that stopped answering keeps its identity; its readings fail.
    let lost = session.run("nvidia-smi -q -i 4").stdout();
    assert!(lost.contains("    Product Name                          : Unknown Error\n"));
    assert!(lost.contains("    Module ID                             : 6\n"));
    assert!(lost.contains("        GPU Current Temp                  : Unknown Error\n"));
    assert!(lost.contains("        Reset Required                    : Yes\n"));

    // Without Fabric Manager the fabric never completes.
    assert!(out.contains("    Fabric\n        State                             : In Progress\n        Status                            : N/A\n        CliqueId                          : N/A\n"));
}

#[test]
fn faults_show_in_the_newer_layouts() {
    let mut c = cluster("hgx-h100", "580.105.08", "13.0");
    Fault::GpuRowRemapPending { node: "node".into(), gpu: 0 }.apply(&mut c).unwrap();
    Fault::GpuThermalSlowdown { node: "node".into(), gpu: 1 }.apply(&mut c).unwrap();
    let mut session = Session::new(c, "node");
    let remap = session.run("nvidia-smi -q -i 0").stdout();
    assert!(remap.contains("        Pending                           : Yes\n"));
    assert!(remap.contains("    GPU Recovery Action                   : Reset\n"));
    let hot = session.run("nvidia-smi -q -d PERFORMANCE -i 1").stdout();
    let held = |name: &str| {
        hot.lines()
            .skip_while(|l| *l != "    Clocks Event Reasons Counters")
            .find(|l| label(l).trim_start() == name)
            .and_then(|l| l.rsplit(" : ").next())
            .unwrap_or("")
            .to_string()
    };
    assert_ne!(held("HW Thermal Slowdown"), "0 us", "{hot}");
    assert_eq!(held("HW Power Braking"), "0 us", "{hot}");
}

// ---------------------------------------------------------------- -d, -i, no panics

#[test]
fn d_picks_sections_and_rejects_unknown_ones() {
    let c = || cluster("hgx-h100", "535.129.03", "12.2");
    // NVIDIA's own example of `nvidia-smi -q -d compute` on 535.129.03.
    let compute = run(c(), "nvidia-smi -q -d compute -i 0");
    assert!(
        compute.ends_with("\nAttached GPUs                             : 8\nGPU 00000000:04:00.0\n    Compute Mode                          : Default\n"),
        "{compute}"
    );
    let memory = run(c(), "nvidia-smi -q -d MEMORY -i 0");
    assert_eq!(sections(&memory), ["FB Memory Usage", "BAR1 Memory Usage", "Conf Compute Protected Memory Usage"]);
    let picked = run(c(), "nvidia-smi -q -d ROW_REMAPPER,ECC -i 0,1");
    assert_eq!(sections(&picked), ["ECC Mode", "ECC Errors", "Remapped Rows", "ECC Mode", "ECC Errors", "Remapped Rows"]);
    assert!(picked.contains("            None                          : 0 bank(s)\n\nGPU 00000000:23:00.0\n"));
    let reset = run(c(), "nvidia-smi -q -d RESET_STATUS,GSP_FIRMWARE_VERSION,VOLTAGE,PIDS -i 0");
    assert_eq!(sections(&reset), ["GPU Reset Status", "GSP Firmware Version", "Voltage", "Processes"]);
    assert!(reset.contains("        Reset Required                    : No\n        Drain and Reset Recommended       : No\n    GSP Firmware Version                  : 535.129.03\n"));
    let transcript = Session::new(c(), "node").run("nvidia-smi -q -d BOGUS");
    assert_eq!(transcript.status, 2);
}

#[test]
fn any_driver_string_gives_a_report_and_the_same_one_twice() {
    for driver in ["", "abc", "580", "580.119", "4294967296.1.1", "9999.9999.9999", "0.0.0", "535.x.y"] {
        let make = || {
            let mut c = cluster("hgx-h100", "570.158.01", "12.8");
            c.versions.driver = driver.to_string();
            c
        };
        let first = run(make(), "nvidia-smi -q");
        assert!(first.starts_with("\n==============NVSMI LOG==============\n\nTimestamp"), "{driver}");
        assert_eq!(first, run(make(), "nvidia-smi -q"), "{driver}");
        assert_eq!(first.matches("\nGPU 00000000:").count(), 8, "{driver}");
    }
}

// ---------------------------------------------------------------- the real outputs

/// `nvidia-smi -a` on della-k18g3 (one H100 SXM of an HGX node, Slurm
/// allocation), driver 560.35.03: jdh4/job_data_2023 README.md, verbatim.
const DELLA_560: &str = r#"
==============NVSMI LOG==============

Timestamp                                 : Thu Sep 26 14:13:55 2024
Driver Version                            : 560.35.03
CUDA Version                              : 12.6

Attached GPUs                             : 1
GPU 00000000:DB:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Enabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : 1650124008279
    GPU UUID                              : GPU-f7b02328-d6fe-5b1f-9683-15041689bb03
    Minor Number                          : 7
    VBIOS Version                         : 96.00.A5.00.01
    MultiGPU Board                        : No
    Board ID                              : 0xdb00
    Board Part Number                     : 692-2G520-0200-000
    GPU Part Number                       : 2330-885-A1
    FRU Part Number                       : N/A
    Module ID                             : 8
    Inforom Version
        Image Version                     : G520.0200.00.05
        OEM Object                        : 2.1
        ECC Object                        : 7.16
        Power Management Object           : N/A
    Inforom BBX Object Flush
        Latest Timestamp                  : 2024/09/26 04:50:04.817
        Latest Duration                   : 92672 us
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GPU C2C Mode                          : Disabled
    GPU Virtualization Mode
        Virtualization Mode               : None
        Host VGPU Mode                    : N/A
        vGPU Heterogeneous Mode           : N/A
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    GSP Firmware Version                  : 560.35.03
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0xDB
        Device                            : 0x00
        Domain                            : 0x0000
        Base Classcode                    : 0x3
        Sub Classcode                     : 0x2
        Device Id                         : 0x233010DE
        Bus Id                            : 00000000:DB:00.0
        Sub System Id                     : 0x16C110DE
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 5
                Device Current            : 5
                Device Max                : 5
                Host Max                  : 5
            Link Width
                Max                       : 16x
                Current                   : 16x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : 6
        Replay Number Rollovers           : 0
        Tx Throughput                     : 650 KB/s
        Rx Throughput                     : 606 KB/s
        Atomic Caps Outbound              : FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 
        Atomic Caps Inbound               : FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 
    Fan Speed                             : N/A
    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    Sparse Operation Mode                 : Disabled
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 450 MiB
        Used                              : 1 MiB
        Free                              : 81110 MiB
    BAR1 Memory Usage
        Total                             : 131072 MiB
        Used                              : 1 MiB
        Free                              : 131071 MiB
    Conf Compute Protected Memory Usage
        Total                             : 0 MiB
        Used                              : 0 MiB
        Free                              : 0 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : 0 %
        Memory                            : 0 %
        Encoder                           : 0 %
        Decoder                           : 0 %
        JPEG                              : 0 %
        OFA                               : 0 %
    Encoder Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    FBC Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
            SRAM Threshold Exceeded       : No
        Aggregate Uncorrectable SRAM Sources
            SRAM L2                       : 0
            SRAM SM                       : 0
            SRAM Microcontroller          : 0
            SRAM PCIE                     : 0
            SRAM Other                    : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 2560 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 34 C
        GPU T.Limit Temp                  : 53 C
        GPU Shutdown T.Limit Temp         : -8 C
        GPU Slowdown T.Limit Temp         : -2 C
        GPU Max Operating T.Limit Temp    : 0 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : 40 C
        Memory Max Operating T.Limit Temp : 0 C
    GPU Power Readings
        Power Draw                        : 71.53 W
        Current Power Limit               : 700.00 W
        Requested Power Limit             : 700.00 W
        Default Power Limit               : 700.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
    GPU Memory Power Readings 
        Power Draw                        : 30.79 W
    Module Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
        Requested Power Limit             : N/A
        Default Power Limit               : N/A
        Min Power Limit                   : N/A
        Max Power Limit                   : N/A
    Clocks
        Graphics                          : 345 MHz
        SM                                : 345 MHz
        Memory                            : 2619 MHz
        Video                             : 765 MHz
    Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Default Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Deferred Clocks
        Memory                            : N/A
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1545 MHz
    Max Customer Boost Clocks
        Graphics                          : 1980 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Voltage
        Graphics                          : 685.000 mV
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 0
        ClusterUUID                       : 00000000-0000-0000-0000-000000000000
        Health
            Bandwidth                     : N/A
    Processes                             : None
    Capabilities
        EGM                               : disabled
"#;

/// `nvidia-smi -a` on an 8 x A100-SXM4-40GB node, driver 535.129.03, the
/// header and GPU 0 (research index id 47337582899, a Chinese nvidia-smi notes
/// page; transcribed from the index text).
const A100_535: &str = r#"
==============NVSMI LOG==============

Timestamp                                 : Thu Jan  4 14:41:13 2024
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached GPUs                             : 8
GPU 00000000:2F:00.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    Product Brand                         : NVIDIA
    Product Architecture                  : Ampere
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Disabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : 1323121035405
    GPU UUID                              : GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310
    Minor Number                          : 0
    VBIOS Version                         : 92.00.36.00.04
    MultiGPU Board                        : No
    Board ID                              : 0x2f00
    Board Part Number                     : 692-2G506-0200-002
    GPU Part Number                       : 20B0-884-A1
    FRU Part Number                       : N/A
    Module ID                             : 4
    Inforom Version
        Image Version                     : G506.0200.00.04
        OEM Object                        : 2.0
        ECC Object                        : 6.16
        Power Management Object           : N/A
    Inforom BBX Object Flush
        Latest Timestamp                  : N/A
        Latest Duration                   : N/A
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GSP Firmware Version                  : 535.129.03
    GPU Virtualization Mode
        Virtualization Mode               : None
        Host VGPU Mode                    : N/A
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0x2F
        Device                            : 0x00
        Domain                            : 0x0000
        Device Id                         : 0x20B010DE
        Bus Id                            : 00000000:2F:00.0
        Sub System Id                     : 0x134F10DE
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
                Device Current            : 4
                Device Max                : 4
                Host Max                  : 3
            Link Width
                Max                       : 16x
                Current                   : 16x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : 0
        Replay Number Rollovers           : 0
        Tx Throughput                     : 0 KB/s
        Rx Throughput                     : 0 KB/s
        Atomic Caps Inbound               : N/A
        Atomic Caps Outbound              : N/A
    Fan Speed                             : N/A
    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    FB Memory Usage
        Total                             : 40960 MiB
        Reserved                          : 620 MiB
        Used                              : 4 MiB
        Free                              : 40334 MiB
    BAR1 Memory Usage
        Total                             : 65536 MiB
        Used                              : 1 MiB
        Free                              : 65535 MiB
    Conf Compute Protected Memory Usage
        Total                             : 0 MiB
        Used                              : 0 MiB
        Free                              : 0 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : 0 %
        Memory                            : 0 %
        Encoder                           : 0 %
        Decoder                           : 0 %
        JPEG                              : 0 %
        OFA                               : 0 %
    Encoder Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    FBC Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 640 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 22 C
        GPU T.Limit Temp                  : N/A
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 85 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : 40 C
        Memory Max Operating Temp         : 95 C
    GPU Power Readings
        Power Draw                        : 52.12 W
        Current Power Limit               : 400.00 W
        Requested Power Limit             : 400.00 W
        Default Power Limit               : 400.00 W
        Min Power Limit                   : 100.00 W
        Max Power Limit                   : 400.00 W
    Module Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
        Requested Power Limit             : N/A
        Default Power Limit               : N/A
        Min Power Limit                   : N/A
        Max Power Limit                   : N/A
    Clocks
        Graphics                          : 210 MHz
        SM                                : 210 MHz
        Memory                            : 1215 MHz
        Video                             : 585 MHz
    Applications Clocks
        Graphics                          : 1095 MHz
        Memory                            : 1215 MHz
    Default Applications Clocks
        Graphics                          : 1095 MHz
        Memory                            : 1215 MHz
    Deferred Clocks
        Memory                            : N/A
    Max Clocks
        Graphics                          : 1410 MHz
        SM                                : 1410 MHz
        Memory                            : 1215 MHz
        Video                             : 1290 MHz
    Max Customer Boost Clocks
        Graphics                          : 1410 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Voltage
        Graphics                          : 706.250 mV
    Fabric
        State                             : N/A
        Status                            : N/A
    Processes                             : None
"#;

/// `nvidia-smi -a` on an 8 x H100 SXM HGX node, driver 565.57.01, the header
/// and GPU 0: thamada/nvidia-smi gls/H100SXMx8_smi.py (`out_a`, whose
/// literal opens with the newline that starts the output).
const H100_565: &str = r#"
==============NVSMI LOG==============

Timestamp                                 : Thu Nov 14 07:00:14 2024
Driver Version                            : 565.57.01
CUDA Version                              : 12.7

Attached GPUs                             : 8
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Enabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : 1654423001593
    GPU UUID                              : GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1
    Minor Number                          : 0
    VBIOS Version                         : 96.00.74.00.01
    MultiGPU Board                        : No
    Board ID                              : 0x1800
    Board Part Number                     : 692-2G520-0200-000
    GPU Part Number                       : 2330-885-A1
    FRU Part Number                       : N/A
    Platform Info
        RACK Serial Number                : N/A
        Chassis Physical Slot Number      : N/A
        Compute Slot Index                : N/A
        Node Index                        : N/A
        Peer Type                         : N/A
        Module Id                         : 2
    Inforom Version
        Image Version                     : G520.0200.00.05
        OEM Object                        : 2.1
        ECC Object                        : 7.16
        Power Management Object           : N/A
    Inforom BBX Object Flush
        Latest Timestamp                  : 2024/11/14 06:25:18.433
        Latest Duration                   : 92243 us
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GPU C2C Mode                          : Disabled
    GPU Virtualization Mode
        Virtualization Mode               : None
        Host VGPU Mode                    : N/A
        vGPU Heterogeneous Mode           : N/A
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    GPU Recovery Action                   : None
    GSP Firmware Version                  : 565.57.01
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0x18
        Device                            : 0x00
        Domain                            : 0x0000
        Base Classcode                    : 0x3
        Sub Classcode                     : 0x2
        Device Id                         : 0x233010DE
        Bus Id                            : 00000000:18:00.0
        Sub System Id                     : 0x16C110DE
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 5
                Device Current            : 5
                Device Max                : 5
                Host Max                  : 5
            Link Width
                Max                       : 16x
                Current                   : 16x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : 7
        Replay Number Rollovers           : 0
        Tx Throughput                     : 567 KB/s
        Rx Throughput                     : 559 KB/s
        Atomic Caps Outbound              : FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 
        Atomic Caps Inbound               : FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 
    Fan Speed                             : N/A
    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    Sparse Operation Mode                 : Disabled
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 454 MiB
        Used                              : 1 MiB
        Free                              : 81106 MiB
    BAR1 Memory Usage
        Total                             : 131072 MiB
        Used                              : 1 MiB
        Free                              : 131071 MiB
    Conf Compute Protected Memory Usage
        Total                             : 0 MiB
        Used                              : 0 MiB
        Free                              : 0 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : 0 %
        Memory                            : 0 %
        Encoder                           : 0 %
        Decoder                           : 0 %
        JPEG                              : 0 %
        OFA                               : 0 %
    Encoder Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    FBC Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
            SRAM Threshold Exceeded       : No
        Aggregate Uncorrectable SRAM Sources
            SRAM L2                       : 0
            SRAM SM                       : 0
            SRAM Microcontroller          : 0
            SRAM PCIE                     : 0
            SRAM Other                    : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 2560 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 30 C
        GPU T.Limit Temp                  : 57 C
        GPU Shutdown T.Limit Temp         : -8 C
        GPU Slowdown T.Limit Temp         : -2 C
        GPU Max Operating T.Limit Temp    : 0 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : 36 C
        Memory Max Operating T.Limit Temp : 0 C
    GPU Power Readings
        Power Draw                        : 100.89 W
        Current Power Limit               : 700.00 W
        Requested Power Limit             : 700.00 W
        Default Power Limit               : 700.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
    GPU Memory Power Readings 
        Power Draw                        : 69.61 W
    Module Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
        Requested Power Limit             : N/A
        Default Power Limit               : N/A
        Min Power Limit                   : N/A
        Max Power Limit                   : N/A
    Clocks
        Graphics                          : 345 MHz
        SM                                : 345 MHz
        Memory                            : 2619 MHz
        Video                             : 765 MHz
    Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Default Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Deferred Clocks
        Memory                            : N/A
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1545 MHz
    Max Customer Boost Clocks
        Graphics                          : 1980 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Voltage
        Graphics                          : 685.000 mV
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 0
        ClusterUUID                       : 00000000-0000-0000-0000-000000000000
        Health
            Bandwidth                     : N/A
    Processes                             : None
    Capabilities
        EGM                               : disabled
"#;
