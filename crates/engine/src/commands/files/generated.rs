//! The read-only files a node generates from the model: each says what the
//! tool that reads the same fact says (`ibstat`'s rate is the port's `rate`
//! file; `perfquery -x`'s data counter is `counters/port_xmit_data`; `ip
//! link`'s state is `/sys/class/net/IF/operstate`).

use crate::commands::fabric::ib_common::{base_lid, counters_now, sm_lid, Link};
use crate::commands::fabric::roce::{gid_table, RoceCounters};
use crate::commands::host::ip::interfaces;
use crate::commands::host::{dmesg, journalctl};
use crate::commands::scheduler::slurm::{hostlist, PARTITION};
use crate::model::fabric::{Hca, LinkLayer, PortCounters};
use crate::model::network::{self, FRONTEND_NIC};
use crate::model::time::civil;
use crate::model::{Cluster, Node};

/// The files of `/sys/class/infiniband/DEV/ports/N/` the model fills.
const PORT_FILES: &[&str] = &["lid", "link_layer", "phys_state", "rate", "sm_lid", "state"];

/// The files of `/sys/class/infiniband/DEV/`.
const DEVICE_FILES: &[&str] = &["board_id", "fw_ver", "hca_type", "node_guid"];

/// `ports/N/counters/`, as ib_core names them.
const COUNTER_FILES: &[&str] = &[
    "VL15_dropped",
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
];

/// The files of `/sys/class/net/IF/`.
const NET_FILES: &[&str] = &["address", "carrier", "mtu", "operstate", "type"];

const SLURM_CONF: &str = "/etc/slurm/slurm.conf";

const FIXED: &[&str] = &[
    "/etc/hostname",
    "/etc/hosts",
    "/etc/infiniband-diags/error_thresholds",
    crate::model::network::NETPLAN_FILE,
    "/etc/nccl.conf",
    "/etc/os-release",
    SLURM_CONF,
    "/proc/cpuinfo",
    "/proc/driver/nvidia/version",
    "/proc/meminfo",
    "/proc/net/dev",
    "/proc/mounts",
    "/sys/module/nvidia/version",
    "/var/log/apt/history.log",
    "/var/log/kern.log",
    "/var/log/syslog",
];

use crate::model::node::HOME;

/// Where `sbatch` writes a job's output: `slurm-%j.out` in the directory it
/// was submitted from, the home directory here.
pub fn job_log_path(id: i64) -> String {
    format!("{HOME}/slurm-{id}.out")
}

/// The batch script a lab leaves for a workload, with the Megatron-LM
/// arguments its model follows.
pub fn batch_script(spec: &crate::model::workload::WorkloadSpec) -> String {
    if let Some(load) = spec.load {
        return serving_script(spec, load);
    }
    let (layers, hidden) = crate::model::workload::pace::shape(spec.params_b);
    let mut text = format!(
        "#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n#SBATCH --gpus-per-node={}\n#SBATCH --nodelist={}\n#SBATCH --exclusive\n#SBATCH --output=slurm-%j.out\n\n",
        spec.name,
        spec.nodes.len(),
        spec.gpus_per_node,
        spec.gpus_per_node,
        crate::commands::scheduler::slurm::hostlist::compress(&spec.nodes.iter().map(String::as_str).collect::<Vec<_>>())
    );
    text += "export CUDA_DEVICE_MAX_CONNECTIONS=1\nexport NCCL_IB_HCA=mlx5\n\n";
    let finetune = if spec.kind == crate::model::workload::Kind::FineTuning { "    --finetune \\\n" } else { "" };
    text += &format!(
        "srun python pretrain_gpt.py \\\n    --tensor-model-parallel-size {} \\\n    --pipeline-model-parallel-size {} \\\n    --num-layers {layers} \\\n    --hidden-size {hidden} \\\n    --seq-length {} \\\n    --micro-batch-size 1 \\\n    --global-batch-size {} \\\n    --train-iters {} \\\n    --bf16 \\\n    --use-distributed-optimizer \\\n    --overlap-grad-reduce \\\n    --data-path {} \\\n    --num-workers {} \\\n{finetune}    --save {dir} \\\n    --load {dir} \\\n    --save-interval {} \\\n    --ckpt-format torch_dist \\\n    --log-interval {} \\\n    --timing-log-level 1 \\\n    --distributed-timeout-minutes 10\n",
        spec.tensor,
        spec.pipeline,
        spec.seq_len,
        spec.global_batch,
        spec.steps,
        spec.dataset,
        spec.loader_workers,
        spec.checkpoint_every,
        spec.log_interval(),
        dir = spec.checkpoint_dir(),
    );
    text
}

/// A server's batch script: vLLM's OpenAI-compatible server on the
/// job's GPUs, with the limits the lab gives it spelt out.
fn serving_script(spec: &crate::model::workload::WorkloadSpec, load: crate::model::workload::Load) -> String {
    use crate::model::workload::pace::{BLOCK_TOKENS, MAX_NUM_BATCHED_TOKENS};
    let name = spec.served_name();
    format!(
        "#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gpus-per-node={}\n#SBATCH --nodelist={}\n#SBATCH --exclusive\n#SBATCH --output=slurm-%j.out\n\nexport HF_HUB_OFFLINE=1\nexport VLLM_DISABLE_LOG_LOGO=1\n\nvllm serve {} \\\n    --served-model-name {name} \\\n    --tensor-parallel-size {} \\\n    --max-model-len {} \\\n    --max-num-seqs {} \\\n    --max-num-batched-tokens {MAX_NUM_BATCHED_TOKENS} \\\n    --gpu-memory-utilization {} \\\n    --block-size {BLOCK_TOKENS} \\\n    --host 0.0.0.0 \\\n    --port 8000 \\\n    --disable-uvicorn-access-log\n",
        spec.name,
        spec.gpus_per_node,
        spec.nodes.first().map_or("", String::as_str),
        spec.dataset,
        spec.tensor,
        spec.seq_len,
        load.max_num_seqs,
        load.memory_share(),
    )
}

/// A character device under `/dev`, as `ls -l` and `stat` show it.
pub struct Device {
    pub path: String,
    pub major: u32,
    pub minor: u32,
    /// Permission bits: the GPUs' and verbs' devices are everyone's, the
    /// management datagram (UMAD) and BMC devices root's alone, which is
    /// why a plain user's `perfquery` cannot open its port.
    pub mode: u32,
}

/// The NVIDIA driver's device major (one minor per GPU), and the minor of
/// its control device, `/dev/nvidiactl`.
pub const NVIDIA_MAJOR: u32 = 195;
pub const NVIDIACTL_MINOR: u32 = 255;

/// The node's character devices: the driver's (`nvidia-modprobe` makes
/// one per GPU, major 195), the RDMA stack's (major 231: `umad`, `issm`,
/// `uverbs` per HCA) and the BMC's.
pub fn devices(node: &Node) -> Vec<Device> {
    let device = |path: String, major: u32, minor: u32, mode: u32| Device { path, major, minor, mode };
    let mut list = vec![device("/dev/null".into(), 1, 3, 0o666), device("/dev/ipmi0".into(), 241, 0, 0o600)];
    list.extend(node.gpus.iter().map(|gpu| device(format!("/dev/nvidia{}", gpu.index), NVIDIA_MAJOR, gpu.index, 0o666)));
    list.push(device("/dev/nvidiactl".into(), NVIDIA_MAJOR, NVIDIACTL_MINOR, 0o666));
    list.push(device("/dev/nvidia-modeset".into(), NVIDIA_MAJOR, 254, 0o666));
    list.push(device("/dev/nvidia-uvm".into(), 510, 0, 0o666));
    list.push(device("/dev/nvidia-uvm-tools".into(), 510, 1, 0o666));
    for (at, _) in node.hcas.iter().enumerate() {
        let at = at as u32;
        list.push(device(format!("/dev/infiniband/umad{at}"), 231, at, 0o600));
        list.push(device(format!("/dev/infiniband/issm{at}"), 231, 64 + at, 0o600));
        list.push(device(format!("/dev/infiniband/uverbs{at}"), 231, 192 + at, 0o666));
    }
    list.push(device("/dev/infiniband/rdma_cm".into(), 10, 122, 0o666));
    list
}

/// A DCQCN switch under a RoCE netdev (`ecn/roce_np/enable/3`): whether it
/// is the reaction point's, and its priority.
pub fn ecn_attribute(file: &str) -> Option<(bool, u8)> {
    let rest = file.strip_prefix("ecn/")?;
    let (point, priority) = rest.split_once("/enable/")?;
    let reaction_point = match point {
        "roce_np" => false,
        "roce_rp" => true,
        _ => return None,
    };
    let priority: u8 = priority.parse().ok().filter(|p| *p < 8)?;
    Some((reaction_point, priority))
}

/// The change writing `text` to the kernel attribute at `path` makes on
/// `node`, when `path` is one that takes writes (the DCQCN switches): the
/// change, or the error `write` gets (`Invalid argument` for a value other
/// than 0 or 1). None for any other path.
pub fn attribute_write(node: &Node, path: &str, text: &str) -> Option<Result<crate::model::change::Change, &'static str>> {
    let rest = path.strip_prefix("/sys/class/net/")?;
    let (netdev, file) = rest.split_once('/')?;
    let (reaction_point, priority) = ecn_attribute(file)?;
    node.hcas.iter().find(|hca| hca.netdev == netdev && hca.port.link_layer == LinkLayer::Ethernet)?;
    let enabled = match text.trim() {
        "1" => true,
        "0" => false,
        _ => return Some(Err("Invalid argument")),
    };
    Some(Ok(crate::model::change::Change::SetEcn { node: node.hostname.clone(), netdev: netdev.to_string(), reaction_point, priority, enabled }))
}

/// The slots of a port's GID table (`gid_tbl_len`): 255 on a RoCE port,
/// 8 on an IB one.
fn gid_slots(hca: &crate::model::fabric::Hca) -> u32 {
    if hca.port.link_layer == LinkLayer::Ethernet {
        255
    } else {
        8
    }
}

/// Every generated file's path on `node`.
pub fn paths(cluster: &Cluster, node: &Node) -> Vec<String> {
    let mut paths: Vec<String> = FIXED.iter().filter(|p| !(node.slurmd_in_pod && **p == SLURM_CONF)).map(|p| p.to_string()).collect();
    paths.extend(devices(node).into_iter().map(|device| device.path));
    // The home directory is shared: every node sees the jobs' scripts and logs.
    paths.extend(cluster.workload_specs.iter().map(|spec| spec.script_path()));
    paths.extend(cluster.lab_pods().iter().map(|pod| pod.manifest_path()));
    paths.extend(cluster.workloads.iter().filter(|w| w.started <= cluster.now).map(|w| job_log_path(w.job_id)));
    for gpu in &node.gpus {
        paths.push(format!("/proc/driver/nvidia/gpus/{}/information", proc_bus_id(&gpu.bus_id)));
    }
    for hca in &node.hcas {
        let device = format!("/sys/class/infiniband/{}", hca.name);
        paths.extend(DEVICE_FILES.iter().map(|file| format!("{device}/{file}")));
        let port = format!("{device}/ports/{}", hca.port.number);
        paths.extend(PORT_FILES.iter().map(|file| format!("{port}/{file}")));
        paths.extend(COUNTER_FILES.iter().map(|file| format!("{port}/counters/{file}")));
        // Every slot of the GID table (the empty ones read as zeros).
        let gids = gid_table(node, hca);
        paths.extend((0..gid_slots(hca)).map(|slot| format!("{port}/gids/{slot}")));
        if hca.port.link_layer == LinkLayer::Ethernet {
            for attribute in ["types", "ndevs"] {
                paths.extend(gids.iter().map(|gid| format!("{port}/gid_attrs/{attribute}/{}", gid.index)));
            }
        }
        let names = RoceCounters::default().hw_counters_of(hca).into_iter().map(|(name, _)| name).chain(["lifespan"]);
        paths.extend(names.map(|name| format!("{port}/hw_counters/{name}")));
        if hca.port.link_layer == LinkLayer::Ethernet {
            for point in ["roce_np", "roce_rp"] {
                paths.extend((0..8).map(|priority| format!("/sys/class/net/{}/ecn/{point}/enable/{priority}", hca.netdev)));
            }
        }
    }
    for iface in interfaces(node) {
        paths.extend(NET_FILES.iter().map(|file| format!("/sys/class/net/{}/{file}", iface.name)));
    }
    paths
}

/// The text of the generated file at `path` (absolute, normalised).
pub fn text(cluster: &Cluster, node: &Node, path: &str) -> Option<String> {
    match path {
        // /dev/null reads as empty (the shell discards what is written to
        // it); so do the other devices, which hold no text.
        _ if path.starts_with("/dev/") => return devices(node).iter().any(|device| device.path == path).then(String::new),
        "/etc/hostname" => return Some(format!("{}\n", node.hostname)),
        "/etc/hosts" => {
            let mut text = "127.0.0.1 localhost\n".to_string();
            for other in &cluster.nodes {
                text += &format!("{} {}\n", network::frontend_ip(&other.hostname), other.hostname);
            }
            text += &format!("{} {}\n", network::MONITOR_IP, network::MONITOR_HOST);
            for other in &cluster.nodes {
                text += &format!("{} {}\n", network::bmc_ip(&other.hostname), network::bmc_name(&other.hostname));
            }
            return Some(text);
        }
        "/etc/os-release" => return Some(cluster.versions.os.os_release.to_string()),
        _ if path.strip_prefix(HOME).is_some_and(|rest| rest.starts_with('/')) => {
            if let Some(spec) = cluster.workload_specs.iter().find(|spec| spec.script_path() == path) {
                return Some(batch_script(spec));
            }
            if let Some(pod) = cluster.lab_pods().iter().find(|pod| pod.manifest_path() == path) {
                return Some(crate::commands::scheduler::kubectl_pods::manifest_yaml(&pod.spec));
            }
            let workload = cluster.workloads.iter().find(|w| w.started <= cluster.now && job_log_path(w.job_id) == path)?;
            return Some(crate::commands::scheduler::job_log::render(cluster, workload, cluster.now));
        }
        "/etc/nccl.conf" => return Some(nccl_conf(cluster)),
        "/proc/meminfo" => return Some(meminfo(cluster, node)),
        "/proc/cpuinfo" => return Some(cpuinfo(cluster)),
        "/proc/net/dev" => return Some(net_dev(cluster, node)),
        "/etc/infiniband-diags/error_thresholds" => return Some(error_thresholds()),
        crate::model::network::NETPLAN_FILE => return Some(crate::model::network::netplan_installed(cluster, node)),
        "/proc/mounts" => {
            return Some(
                crate::model::storage::mounts(cluster.preset.host.memory_mib * 1024)
                    .iter()
                    .map(|m| format!("{} {} {} {} 0 0\n", m.source, m.target, m.fstype, m.options))
                    .collect(),
            )
        }
        // slurmd in a pod fetches its configuration from slurmctld (configless):
        // the host has none.
        SLURM_CONF if node.slurmd_in_pod => return None,
        SLURM_CONF => return Some(slurm_conf(cluster)),
        "/var/log/syslog" => return Some(syslog(cluster, node, false)),
        // The module loaded at boot, whatever the packages installed since.
        "/sys/module/nvidia/version" => return Some(format!("{}\n", node.driver_loaded)),
        "/var/log/apt/history.log" => return Some(apt_history(cluster, node)),
        "/var/log/kern.log" => return Some(syslog(cluster, node, true)),
        "/proc/driver/nvidia/version" => {
            // The same build line the kernel logged when the module loaded.
            let build = node.kernel_log.iter().find_map(|line| line.text.strip_prefix("NVRM: loading "))?;
            return Some(format!("NVRM version: {build}\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n"));
        }
        _ => {}
    }
    if let Some(rest) = path.strip_prefix("/proc/driver/nvidia/gpus/") {
        let (bus, file) = rest.split_once('/')?;
        let gpu = node.gpus.iter().find(|gpu| proc_bus_id(&gpu.bus_id) == bus)?;
        return (file == "information").then(|| {
            format!(
                "Model: \t\t {}\nIRQ:   \t\t {}\nGPU UUID: \t {}\nVideo BIOS: \t {}\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t {}\nDevice Minor: \t {}\nGPU Excluded:\t No\n",
                cluster.preset.gpu.name,
                170 + gpu.index,
                gpu.uuid,
                cluster.preset.gpu.vbios,
                proc_bus_id(&gpu.bus_id),
                gpu.index,
            )
        });
    }
    if let Some(rest) = path.strip_prefix("/sys/class/net/") {
        let (name, file) = rest.split_once('/')?;
        if let Some((reaction_point, priority)) = ecn_attribute(file) {
            let port = &node.hcas.iter().find(|hca| hca.netdev == name && hca.port.link_layer == LinkLayer::Ethernet)?.port;
            let mask = if reaction_point { port.ecn_rp } else { port.ecn_np };
            return Some(format!("{}\n", (mask >> priority) & 1));
        }
        let iface = interfaces(node).into_iter().find(|iface| iface.name == name)?;
        return Some(match file {
            "address" => format!("{}\n", iface.mac),
            "carrier" => format!("{}\n", u8::from(iface.up)),
            "mtu" => format!("{}\n", iface.mtu),
            // The kernel's operstate: loopback has no lower layer to report.
            "operstate" => format!(
                "{}\n",
                if iface.loopback {
                    "unknown"
                } else if iface.up {
                    "up"
                } else {
                    "down"
                }
            ),
            // ARPHRD_LOOPBACK, ARPHRD_INFINIBAND, ARPHRD_ETHER.
            "type" => {
                let ib = node.hcas.iter().any(|hca| hca.netdev == iface.name && hca.port.link_layer == LinkLayer::InfiniBand);
                format!(
                    "{}\n",
                    if iface.loopback {
                        772
                    } else if ib {
                        32
                    } else {
                        1
                    }
                )
            }
            _ => return None,
        });
    }
    let rest = path.strip_prefix("/sys/class/infiniband/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let hca = node.hca(parts.first()?)?;
    match parts[1..] {
        [file] => device_file(hca, file),
        ["ports", port, file] if port == hca.port.number.to_string() => port_file(hca, file),
        ["ports", port, "counters", file] if port == hca.port.number.to_string() => {
            counter_file(&counters_now(cluster, &hca.port), file).map(|value| format!("{value}\n"))
        }
        ["ports", port, "gids", index] if port == hca.port.number.to_string() => {
            let slot: u32 = index.parse().ok().filter(|i| path.ends_with(&format!("/{i}")))?;
            (slot < gid_slots(hca)).then(|| {
                let gid = gid_table(node, hca).into_iter().find(|gid| gid.index == slot);
                format!("{}\n", gid.map_or_else(|| "0000:0000:0000:0000:0000:0000:0000:0000".to_string(), |gid| gid.gid))
            })
        }
        // Only filled slots have a type and a netdev (the kernel answers
        // EINVAL for the others; here they are not there).
        ["ports", port, "gid_attrs", attribute @ ("types" | "ndevs"), index] if port == hca.port.number.to_string() => {
            let gid = gid_table(node, hca).into_iter().find(|gid| gid.index.to_string() == index)?;
            Some(format!("{}\n", if attribute == "types" { gid.kind } else { hca.netdev.as_str() }))
        }
        ["ports", port, "hw_counters", file] if port == hca.port.number.to_string() => {
            if file == "lifespan" {
                return Some("10\n".to_string());
            }
            let counters = RoceCounters::of(cluster, node, hca).hw_counters_of(hca);
            counters.into_iter().find(|(name, _)| *name == file).map(|(_, value)| format!("{value}\n"))
        }
        _ => None,
    }
}

/// `0000:18:00.0` as `/proc/driver/nvidia/gpus` names it (lower case).
fn proc_bus_id(bus_id: &str) -> String {
    let id = bus_id.to_ascii_lowercase();
    // nvidia-smi's 8-digit domain is 4 digits in /proc.
    match id.split_once(':') {
        Some((domain, rest)) if domain.len() == 8 => format!("{}:{rest}", &domain[4..]),
        _ => id,
    }
}

/// One port file's text, as the kernel writes it.
pub fn port_file(hca: &Hca, file: &str) -> Option<String> {
    Some(match file {
        "state" => format!("{}: {}\n", hca.port.state.code(), hca.port.state.kernel_name()),
        "phys_state" => format!("{}: {}\n", hca.port.phys_state.code(), hca.port.phys_state.label()),
        "rate" => format!("{}\n", Link::of(hca).sysfs_rate()),
        "link_layer" => format!("{}\n", hca.port.link_layer.label()),
        "lid" => format!("{:#x}\n", base_lid(&hca.port)),
        "sm_lid" => format!("{:#x}\n", sm_lid(&hca.port)),
        _ => return None,
    })
}

fn device_file(hca: &Hca, file: &str) -> Option<String> {
    Some(match file {
        "board_id" => format!("{}\n", hca.board_id),
        "fw_ver" => format!("{}\n", hca.firmware),
        "hca_type" => format!("{}\n", hca.ca_type),
        "node_guid" => format!("{}\n", Hca::guid_colon_form(hca.node_guid)),
        _ => return None,
    })
}

/// A counter as sysfs shows it: data and packets 64 bits wide (ib_core
/// reads the extended counters), counted in 4-octet words as the MADs count
/// them; the error counters as wide as PortCounters has them, saturating.
fn counter_file(c: &PortCounters, file: &str) -> Option<u64> {
    let capped = |value: u64, bits: u32| value.min((1u64 << bits) - 1);
    Some(match file {
        "symbol_error" => capped(c.symbol_errors, 16),
        "link_error_recovery" => capped(c.link_error_recovery, 8),
        "link_downed" => capped(c.link_downed, 8),
        "port_rcv_errors" => capped(c.rcv_errors, 16),
        "port_rcv_remote_physical_errors" => capped(c.rcv_remote_physical_errors, 16),
        "port_xmit_discards" => capped(c.xmit_discards, 16),
        "port_xmit_wait" => capped(c.xmit_wait, 32),
        "port_xmit_data" => c.xmit_data,
        "port_rcv_data" => c.rcv_data,
        "port_xmit_packets" | "unicast_xmit_packets" => c.xmit_pkts,
        "port_rcv_packets" | "unicast_rcv_packets" => c.rcv_pkts,
        name if COUNTER_FILES.contains(&name) => 0,
        _ => return None,
    })
}

/// ibqueryerrors' default threshold file, laid out as infiniband-diags
/// installs it: every counter it may name with a suggested value,
/// commented out (so each threshold is 0). The header is our own words.
fn error_thresholds() -> String {
    use crate::commands::fabric::ibqueryerrors::THRESHOLD_NAMES;
    // The package's suggested values, in the order of the names.
    const SUGGESTED: [u32; 13] = [10, 10, 10, 10, 100, 100, 100, 100, 100, 10, 10, 100, 1000];
    let mut out = "# Error thresholds for ibqueryerrors, one NAME=VALUE per line\n\n".to_string();
    for (name, value) in THRESHOLD_NAMES.iter().zip(SUGGESTED) {
        out += &format!("#{name}={value}\n");
    }
    out
}

/// `/proc/cpuinfo` as Linux 5.15's x86 `show_cpuinfo` writes it: a block
/// per logical CPU, numbered as `HostSpec::socket_cpus` says (each
/// socket's cores, then their hyperthread siblings), the CPU model's
/// identity and features from the preset (`CpuId`).
fn cpuinfo(cluster: &Cluster) -> String {
    let host = &cluster.preset.host;
    let id = host.cpu_id;
    let vendor = if host.cpu_model.starts_with("AMD") { "AuthenticAMD" } else { "GenuineIntel" };
    let cores = host.sockets * host.cores_per_socket;
    let mut out = String::new();
    for processor in 0..host.cpus() {
        let (thread, slot) = (processor / cores, processor % cores);
        let (socket, core) = (slot / host.cores_per_socket, slot % host.cores_per_socket);
        let apicid = socket * id.apic_ids_per_socket + core * host.threads_per_core + thread;
        out += &format!(
            "processor\t: {processor}\nvendor_id\t: {vendor}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\nstepping\t: {}\nmicrocode\t: {}\ncpu MHz\t\t: {}.000\ncache size\t: {} KB\n",
            id.family, id.model, host.cpu_model, id.stepping, id.microcode, id.mhz, id.cache_kib
        );
        out += &format!(
            "physical id\t: {socket}\nsiblings\t: {}\ncore id\t\t: {core}\ncpu cores\t: {}\napicid\t\t: {apicid}\ninitial apicid\t: {apicid}\n",
            host.cores_per_socket * host.threads_per_core,
            host.cores_per_socket
        );
        out += &format!("fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: {}\nwp\t\t: yes\nflags\t\t: {}\n", id.cpuid_level, id.flags);
        if let Some(vmx) = id.vmx_flags {
            out += &format!("vmx flags\t: {vmx}\n");
        }
        out += &format!("bugs\t\t: {}\nbogomips\t: {}\n", id.bugs, id.bogomips);
        if let Some(pages) = id.tlb_pages {
            out += &format!("TLB size\t: {pages} 4K pages\n");
        }
        let (physical, virtual_bits) = id.address_sizes;
        out += &format!(
            "clflush size\t: 64\ncache_alignment\t: 64\naddress sizes\t: {physical} bits physical, {virtual_bits} bits virtual\npower management:{}\n\n",
            if id.power_management.is_empty() { String::new() } else { format!(" {}", id.power_management) }
        );
    }
    out
}

/// `/proc/meminfo` (Linux 5.15's fields and widths), from the numbers
/// `free` shows: free's buff/cache is Buffers + Cached + SReclaimable, its
/// used is what is neither free nor cache, its shared is Shmem.
/// What a network device has carried since boot: (received bytes,
/// packets, multicast packets; sent bytes, packets).
pub fn netdev_traffic(cluster: &Cluster, node: &Node, device: &str) -> (u64, u64, u64, u64, u64) {
    let uptime = (cluster.now - node.booted_at).max(0) as f64;
    let mut rng = crate::rng::Rng::derive(cluster.seed, &[&node.hostname, "netdev", device]);
    let jitter = 0.8 + 0.4 * rng.unit_f64();
    // (bytes/s in, bytes/s out, bytes a packet): the front end carries
    // logins, scrapes and Lustre's traffic; lo the node's own services;
    // IPoIB its address resolution and multicast groups.
    let (rx_rate, tx_rate, packet) = match device {
        "lo" => (2_600.0, 2_600.0, 380.0),
        FRONTEND_NIC => (180_000.0, 95_000.0, 1_100.0),
        _ => (60.0, 45.0, 120.0),
    };
    let mut rx = uptime * rx_rate * jitter;
    let mut tx = uptime * tx_rate * jitter;
    if device == FRONTEND_NIC {
        // Lustre over TCP: this node's ranks write their share of each
        // checkpoint, and read their share of each one a run resumed from.
        for checkpoint in crate::model::storage::checkpoints(cluster) {
            let Some(spec) = cluster.workload_specs.iter().find(|spec| spec.name == checkpoint.job) else { continue };
            if !spec.nodes.contains(&node.hostname) {
                continue;
            }
            let share = checkpoint.bytes as f64 * checkpoint.written_permille as f64 / 1000.0 / spec.nodes.len().max(1) as f64;
            tx += share * 1.02;
        }
        for workload in cluster.workloads.iter().filter(|w| w.resumed_from > 0 && w.started <= cluster.now && w.spec.nodes.contains(&node.hostname)) {
            let bytes = crate::model::workload::pace::parameter_count(workload.spec.params_b) as f64 * crate::model::workload::pace::CHECKPOINT_BYTES_PER_PARAM;
            rx += bytes / workload.spec.nodes.len().max(1) as f64 * 1.02;
        }
    }
    let multicast = if device == "lo" { 0.0 } else { uptime * 0.4 * jitter };
    (rx as u64, (rx / packet) as u64, multicast as u64, tx as u64, (tx / packet) as u64)
}

/// `/proc/net/dev`: each device's counters in the kernel's columns.
fn net_dev(cluster: &Cluster, node: &Node) -> String {
    let mut text = String::from(
        "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n",
    );
    for iface in interfaces(node) {
        let (rx, rx_packets, multicast, tx, tx_packets) = netdev_traffic(cluster, node, &iface.name);
        text += &format!(
            "{:>6}: {rx:7} {rx_packets:7} {:4} {:4} {:4} {:5} {:10} {multicast:9} {tx:8} {tx_packets:7} {:4} {:4} {:4} {:5} {:7} {:10}\n",
            iface.name, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
        );
    }
    text
}

fn meminfo(cluster: &Cluster, node: &Node) -> String {
    let memory = crate::commands::host::free::memory(cluster, node);
    let buffers = memory.cache / 60;
    let reclaimable = memory.cache / 12;
    let cached = memory.cache - buffers - reclaimable;
    let anon = memory.used * 3 / 4;
    let kib: Vec<(&str, u64)> = vec![
        ("MemTotal", memory.total),
        ("MemFree", memory.free),
        ("MemAvailable", memory.available),
        ("Buffers", buffers),
        ("Cached", cached),
        ("SwapCached", 0),
        ("Active", anon / 2 + cached / 2),
        ("Inactive", anon / 2 + cached / 2),
        ("Active(anon)", anon / 2),
        ("Inactive(anon)", anon / 2),
        ("Active(file)", cached / 2),
        ("Inactive(file)", cached / 2),
        ("Unevictable", 30_720),
        ("Mlocked", 27_648),
        ("SwapTotal", 0),
        ("SwapFree", 0),
        ("Dirty", 412),
        ("Writeback", 0),
        ("AnonPages", anon),
        ("Mapped", cached / 20),
        ("Shmem", memory.shared),
        ("KReclaimable", reclaimable),
        ("Slab", reclaimable + memory.used / 20),
        ("SReclaimable", reclaimable),
        ("SUnreclaim", memory.used / 20),
        ("KernelStack", 71_552),
        ("PageTables", memory.used / 200),
        ("NFS_Unstable", 0),
        ("Bounce", 0),
        ("WritebackTmp", 0),
        ("CommitLimit", memory.total / 2),
        ("Committed_AS", memory.used + memory.shared),
        ("VmallocTotal", 34_359_738_367),
        ("VmallocUsed", 1_082_124),
        ("VmallocChunk", 0),
        ("Percpu", 470_016),
        ("HardwareCorrupted", 0),
        ("AnonHugePages", anon / 3 / 2048 * 2048),
        ("ShmemHugePages", 0),
        ("ShmemPmdMapped", 0),
        ("FileHugePages", 0),
        ("FilePmdMapped", 0),
    ];
    // Linux's `%-15s %8lu kB` lines (show_val_kb).
    let lines = |fields: &[(&str, u64)]| fields.iter().map(|(name, value)| format!("{:<16}{value:>8} kB\n", format!("{name}:"))).collect::<String>();
    let mut text = lines(&kib);
    for name in ["HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp"] {
        text += &format!("{:<16}{:>8}\n", format!("{name}:"), 0);
    }
    let direct = [
        ("Hugepagesize", 2048),
        ("Hugetlb", 0),
        ("DirectMap4k", 1_923_968),
        ("DirectMap2M", 62_468_096),
        ("DirectMap1G", memory.total.saturating_sub(64_392_064) / 1_048_576 * 1_048_576),
    ];
    text += &lines(&direct);
    text
}

/// The site's NCCL defaults, read by every NCCL job (after `~/.nccl.conf`
/// and the environment, as NCCL reads them).
fn nccl_conf(cluster: &Cluster) -> String {
    let mut text = format!("# Site defaults for NCCL jobs (read after ~/.nccl.conf and the environment)\nNCCL_SOCKET_IFNAME={FRONTEND_NIC}\n");
    if cluster.fabric == LinkLayer::Ethernet {
        // RoCE v2 over IPv4 is GID index 3 on ConnectX.
        text += "NCCL_IB_GID_INDEX=3\n";
    }
    text
}

/// The scheduler's configuration: one partition over every node, each with
/// the preset's CPUs, memory and GPUs (what `scontrol show node` reports).
fn slurm_conf(cluster: &Cluster) -> String {
    let host = &cluster.preset.host;
    let names: Vec<&str> = cluster.nodes.iter().map(|node| node.hostname.as_str()).collect();
    let gpus = cluster.nodes.first().map_or(0, |node| node.gpus.len());
    format!(
        "# slurm.conf: the same on every node of the cluster.\n\
         ClusterName=lab\n\
         SlurmctldHost=slurm-head\n\
         AuthType=auth/munge\n\
         ProctrackType=proctrack/cgroup\n\
         TaskPlugin=task/affinity,task/cgroup\n\
         ReturnToService=2\n\
         SlurmctldPort=6817\n\
         SlurmdPort=6818\n\
         StateSaveLocation=/var/spool/slurmctld\n\
         SlurmdSpoolDir=/var/spool/slurmd\n\
         SlurmctldLogFile=/var/log/slurmctld.log\n\
         SlurmdLogFile=/var/log/slurmd.log\n\
         SchedulerType=sched/backfill\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core_Memory\n\
         GresTypes=gpu\n\
         #\n\
         # COMPUTE NODES\n\
         NodeName={} CPUs={} Boards=1 SocketsPerBoard={} CoresPerSocket={} ThreadsPerCore={} RealMemory={} Gres=gpu:{gpus} State=UNKNOWN\n\
         PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        hostlist::compress(&names),
        host.cpus(),
        host.sockets,
        host.cores_per_socket,
        host.threads_per_core,
        host.memory_mib,
    )
}

/// rsyslog's files: the journal in the traditional format (the day padded
/// with a space, kernel lines keeping their uptime stamp).
fn syslog(cluster: &Cluster, node: &Node, kernel_only: bool) -> String {
    let mut entries: Vec<(i64, String, String)> = node
        .kernel_log
        .iter()
        .map(|line| {
            let at = node.booted_at + (line.uptime_us / 1_000_000) as i64;
            (at, "kernel".to_string(), format!("{}{}", dmesg::prefix(node, line, false), line.text.replace('\n', " ")))
        })
        .collect();
    if !kernel_only {
        entries.extend(journalctl::fabric_manager_entries(cluster, node).into_iter().map(|entry| (entry.at, entry.identifier, entry.text)));
    }
    // A stable sort keeps each source's order within a second.
    crate::sort::sort_by_key(&mut entries, |entry| entry.0);
    let mut text = String::new();
    for (at, identifier, message) in entries {
        let c = civil(at);
        let month = journalctl::MONTHS.get(c.month as usize - 1).copied().unwrap_or("Jan");
        text += &format!("{month} {:>2} {:02}:{:02}:{:02} {} {identifier}: {message}\n", c.day, c.hour, c.minute, c.second, node.hostname);
    }
    text
}

/// apt's log of this month's package runs: the driver updates the node
/// took. Each run is a blank line and its fields; versions as NVIDIA's CUDA
/// repository numbers its driver packages (`-0ubuntu1`) and Fabric
/// Manager's (`-1`). The packages' scripts restarted Fabric Manager near
/// the end of the run, the moment the fault records.
fn apt_history(cluster: &Cluster, node: &Node) -> String {
    use crate::model::fault::Fault;
    let mut text = String::new();
    for injected in &cluster.injected {
        let Fault::DriverMismatch { node: host, installed } = &injected.fault else { continue };
        if *host != node.hostname {
            continue;
        }
        let restarted = cluster.struck_at(injected);
        let old = &cluster.versions.driver;
        let branch = installed.split('.').next().unwrap_or_default();
        let driver = ["libnvidia-compute", "nvidia-compute-utils", "nvidia-utils", "nvidia-kernel-common", "nvidia-dkms", "nvidia-driver"];
        let mut upgraded: Vec<String> = driver.iter().map(|package| format!("{package}-{branch}:amd64 ({old}-0ubuntu1, {installed}-0ubuntu1)")).collect();
        upgraded.extend(["libnvidia-nscq", "nvidia-fabricmanager"].iter().map(|package| format!("{package}-{branch}:amd64 ({old}-1, {installed}-1)")));
        text += &format!(
            "\nStart-Date: {}\nCommandline: /usr/bin/unattended-upgrade\nUpgrade: {}\nEnd-Date: {}\n",
            apt_time(restarted - 96),
            upgraded.join(", "),
            apt_time(restarted + 3)
        );
    }
    text
}

/// `2026-03-09  03:56:12`: apt's two spaces between date and time.
fn apt_time(at: crate::model::time::EpochSeconds) -> String {
    let c = civil(at);
    format!("{}-{:02}-{:02}  {:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}
