//! `nvidia-smi topo -m` / `-mp`: the topology matrix of the node's GPUs and
//! NICs (FACTS.md §4). Fields are TAB-separated; a GPU row ends with its CPU
//! affinity, NUMA affinity, an empty field and `N/A` (GPU NUMA ID), a NIC row
//! with four TABs.
//!
//! Codes come from the model: GPUs joined by NVLink show `NV#` with the
//! number of links both ends have up (a GPU with every link down falls back
//! to its PCIe path); PCIe paths are `PIX` behind one switch, `NODE` on one
//! NUMA node, `SYS` across sockets. `-mp` shows PCIe paths only.

use super::{invalid_arguments, reachable};
use crate::commands::{Invocation, Output};
use crate::model::Gpu;

const LEGEND: &str = "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n";

/// `nvidia-smi topo` without a matrix option prints this usage ([K]: the
/// real text lists more options; only the matrix ones are emulated).
const USAGE: &str = "\n    topo -- Display topological information about the system.\n\n    Usage: nvidia-smi topo [options]\n\n    Options include:\n    [-m | --matrix]: Display the GPUDirect communication matrix for the system.\n    [-mp | --matrix_pci]: Display the GPUDirect communication matrix for the system (PCI Only).\n";

/// A device in the matrix: its PCIe switch and NUMA node.
struct Device<'a> {
    switch: u32,
    numa: u32,
    gpu: Option<&'a Gpu>,
}

fn pcie_path(a: &Device, b: &Device) -> String {
    if a.switch == b.switch && a.numa == b.numa {
        "PIX"
    } else if a.numa == b.numa {
        "NODE"
    } else {
        "SYS"
    }
    .to_string()
}

fn path(a: &Device, b: &Device, nvlink: bool) -> String {
    if let (true, Some(x), Some(y)) = (nvlink, a.gpu, b.gpu) {
        let bonded = x.active_nvlinks().min(y.active_nvlinks());
        if bonded > 0 {
            return format!("NV{bonded}");
        }
    }
    pcie_path(a, b)
}

pub fn run(invocation: &Invocation) -> Output {
    let args = invocation.args().get(1..).unwrap_or(&[]);
    let nvlink = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] | ["-h"] | ["--help"] => return Output::ok(USAGE),
        ["-m"] | ["--matrix"] => true,
        ["-mp"] | ["--matrix_pci"] => false,
        _ => return invalid_arguments(),
    };
    let node = invocation.node;
    let all: Vec<&Gpu> = node.gpus.iter().collect();
    let (gpus, stderr) = reachable(&all);
    let mut devices: Vec<Device> = gpus.iter().map(|gpu| Device { switch: gpu.pcie_switch, numa: gpu.numa_node, gpu: Some(*gpu) }).collect();
    devices.extend(node.hcas.iter().map(|hca| Device { switch: hca.pcie_switch, numa: hca.numa_node, gpu: None }));
    // A GPU lost from the bus leaves a gap: the others keep their indices, as in `nvidia-smi -L`.
    let names: Vec<String> = gpus.iter().map(|gpu| format!("GPU{}", gpu.index)).chain((0..node.hcas.len()).map(|i| format!("NIC{i}"))).collect();

    let mut out = String::new();
    for name in &names {
        out.push('\t');
        out += name;
    }
    out += "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
    let host = &invocation.cluster.preset.host;
    for (row, device) in devices.iter().enumerate() {
        out += &names[row];
        for (column, other) in devices.iter().enumerate() {
            out.push('\t');
            out += &if row == column { " X ".to_string() } else { path(device, other, nvlink) };
        }
        out += &match device.gpu {
            Some(_) => format!("\t{}\t{}\t\tN/A\n", host.socket_cpus(device.numa), device.numa),
            None => "\t\t\t\t\n".to_string(),
        };
    }
    out += LEGEND;
    if nvlink {
        out += "  NV#  = Connection traversing a bonded set of # NVLinks\n";
    }
    out.push('\n');
    if !node.hcas.is_empty() {
        out += "NIC Legend:\n\n";
        for (at, hca) in node.hcas.iter().enumerate() {
            out += &format!("  NIC{at}: {}\n", hca.name);
        }
        out.push('\n');
    }
    Output { stdout: out, stderr, status: 0, duration_ms: 200, ..Output::default() }
}
