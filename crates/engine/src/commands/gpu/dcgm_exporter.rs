//! What `dcgm-exporter` serves on port 9400 (gorilla/mux routes): `/metrics`
//! in Prometheus' text format, `/health`, a landing page at `/`, and Go's
//! `404 page not found` elsewhere.
//!
//! The metrics follow dcgm-exporter 3.3.x's template and its
//! `default-counters.csv` (tags 3.3.3-3.3.1 and 3.3.9-3.6.1): per counter
//! a `# HELP` and a `# TYPE` line, then one line per GPU labelled `gpu`,
//! `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname` and the label
//! counter `DCGM_FI_DRIVER_VERSION`; counters in field-id order (Go's
//! template ranges over the map sorted by its key, whose first member is the
//! field id); integers as `%d`, doubles as `%f`; a value DCGM cannot read
//! is left out. Each collection (every 30 s, the exporter's default)
//! draws its own noise, so two reads within one interval agree.

use super::dcgm_fields::{self, FieldValue};
use crate::commands::host::curl::Response;
use crate::model::{Cluster, Node};
use crate::rng::Rng;

pub const PORT: u16 = 9400;

/// The exporter's collection interval (`-c`, in ms by default 30000).
const INTERVAL_SECONDS: i64 = 30;

/// A line of default-counters.csv: field id, name, Prometheus type, help.
type Counter = (u32, &'static str, &'static str, &'static str);

const COUNTERS: &[Counter] = &[
    (100, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    (101, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    (140, "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    (150, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    (155, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    (156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    (200, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "counter", "Total number of bytes transmitted through PCIe TX (in KB) via NVML."),
    (201, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "counter", "Total number of bytes received through PCIe RX (in KB) via NVML."),
    (202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    (203, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    (204, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    (206, "DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    (207, "DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    (230, "DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    (251, "DCGM_FI_DEV_FB_FREE", "gauge", "Frame buffer memory free (in MB)."),
    (252, "DCGM_FI_DEV_FB_USED", "gauge", "Frame buffer memory used (in MB)."),
    (393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    (394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    (395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    (449, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes"),
    (526, "DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    (1009, "DCGM_FI_PROF_PCIE_TX_BYTES", "counter", "Total number of bytes transmitted through PCIe TX via NVML."),
    (1010, "DCGM_FI_PROF_PCIE_RX_BYTES", "counter", "Total number of bytes received through PCIe RX via NVML."),
];

/// The counters of the exporter released with `dcgm`: from 3.3.5 the CSV
/// reads PCIe traffic from the profiling fields rather than NVML's.
fn counters(dcgm: &str) -> impl Iterator<Item = &'static Counter> {
    let mut parts = dcgm.split('.').map(|part| part.parse::<u32>().unwrap_or(0));
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let profiling = version >= (3, 3, 5);
    COUNTERS.iter().filter(move |(id, ..)| if profiling { !(200..=201).contains(id) } else { *id < 1000 })
}

/// `/metrics` of `node` now.
pub fn metrics(cluster: &Cluster, node: &Node) -> String {
    let collected = cluster.now.div_euclid(INTERVAL_SECONDS);
    let gpus: Vec<_> = node.gpus.iter().filter(|gpu| gpu.is_visible()).collect();
    let mut rngs: Vec<Rng> =
        gpus.iter().map(|gpu| Rng::derive(cluster.seed, &[&node.hostname, "dcgm-exporter", &gpu.index.to_string(), &collected.to_string()])).collect();
    // Each GPU's labels, the same on every counter's line.
    let labels: Vec<String> = gpus
        .iter()
        .map(|gpu| {
            format!(
                "gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\",DCGM_FI_DRIVER_VERSION=\"{}\"",
                gpu.index, gpu.uuid, gpu.bus_id, gpu.index, gpu.name, node.hostname, cluster.versions.driver
            )
        })
        .collect();
    let mut out = String::new();
    for (id, name, kind, help) in counters(&cluster.versions.dcgm) {
        let mut lines = String::new();
        for ((gpu, rng), labels) in gpus.iter().zip(rngs.iter_mut()).zip(&labels) {
            let value = match dcgm_fields::value(cluster, &node.hostname, gpu, *id, rng) {
                FieldValue::Int(value) => value.to_string(),
                FieldValue::Double(value) => format!("{value:.6}"),
                FieldValue::Blank => continue,
            };
            lines += &format!("{name}{{{labels}}} {value}\n");
        }
        // A counter without a value on any GPU is not in the map the template ranges over.
        if !lines.is_empty() {
            out += &format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{lines}");
        }
    }
    out
}

/// The exporter's answer to a GET of `path`.
pub fn serve(cluster: &Cluster, node: &Node, path: &str) -> Response {
    let path = path.split(['?', '#']).next().unwrap_or("/");
    match path {
        "/metrics" => Response::ok("text/plain; charset=utf-8", metrics(cluster, node)),
        "/health" => Response::ok("text/plain; charset=utf-8", "OK".to_string()),
        "/" => Response::ok("text/html; charset=utf-8", LANDING.to_string()),
        _ => Response::not_found(),
    }
}

/// The landing page, as the exporter's Go source writes it (tabs included).
const LANDING: &str = "<html>\n\t\t\t<head><title>GPU Exporter</title></head>\n\t\t\t<body>\n\t\t\t<h1>GPU Exporter</h1>\n\t\t\t<p><a href=\"./metrics\">Metrics</a></p>\n\t\t\t</body>\n\t\t\t</html>";

/// No capture of dcgm-exporter is in `shared/reference`: the layout is
/// pinned against its source (tag 3.3.9-3.6.1: `etc/default-counters.csv`,
/// the template in `pkg/dcgmexporter/pipeline.go`) and the public scrape in
/// NVIDIA/dcgm-exporter issue 512 (H100, driver 535), whose lines carry
/// the same labels in the same order.
#[cfg(test)]
mod tests {
    use crate::load;
    use crate::testing::{session, shell, Shell, TWO_NODE_LAB};

    fn scrape(shell: &mut Shell, host: &str) -> String {
        shell.run(&format!("curl -s {host}:9400/metrics")).stdout()
    }

    #[test]
    fn counters_in_field_order_with_the_exporters_labels() {
        let mut shell = session();
        let text = scrape(&mut shell, "gpu-001");
        let names: Vec<&str> = text.lines().filter_map(|line| line.strip_prefix("# TYPE ")).collect();
        let expected = [
            "DCGM_FI_DEV_SM_CLOCK gauge",
            "DCGM_FI_DEV_MEM_CLOCK gauge",
            "DCGM_FI_DEV_MEMORY_TEMP gauge",
            "DCGM_FI_DEV_GPU_TEMP gauge",
            "DCGM_FI_DEV_POWER_USAGE gauge",
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter",
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter",
            "DCGM_FI_DEV_GPU_UTIL gauge",
            "DCGM_FI_DEV_MEM_COPY_UTIL gauge",
            "DCGM_FI_DEV_ENC_UTIL gauge",
            "DCGM_FI_DEV_DEC_UTIL gauge",
            "DCGM_FI_DEV_XID_ERRORS gauge",
            "DCGM_FI_DEV_FB_FREE gauge",
            "DCGM_FI_DEV_FB_USED gauge",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS counter",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS counter",
            "DCGM_FI_DEV_ROW_REMAP_FAILURE gauge",
            "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter",
            "DCGM_FI_DEV_VGPU_LICENSE_STATUS gauge",
            "DCGM_FI_PROF_PCIE_TX_BYTES counter",
            "DCGM_FI_PROF_PCIE_RX_BYTES counter",
        ];
        assert_eq!(names, expected);
        // HELP, TYPE, then one line per GPU.
        assert_eq!(text.lines().count(), expected.len() * (2 + 8));
        let power = text.lines().find(|line| line.starts_with("DCGM_FI_DEV_POWER_USAGE{gpu=\"3\"")).expect("GPU 3's power");
        let labels = power.split_once('{').unwrap().1.split_once('}').unwrap().0;
        let names: Vec<&str> = labels.split(',').map(|label| label.split('=').next().unwrap()).collect();
        assert_eq!(names, ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"]);
        assert!(labels.contains("device=\"nvidia3\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-001\""), "{labels}");
        let value = power.rsplit_once(' ').unwrap().1;
        assert_eq!(value.split_once('.').map(|(_, decimals)| decimals.len()), Some(6), "{value}");
        // One collection per 30 s: a second read in the same interval agrees.
        assert_eq!(scrape(&mut shell, "gpu-001"), text);
    }

    #[test]
    fn faults_show_in_the_series() {
        let lab = load(&format!(
            "{TWO_NODE_LAB}\n[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-002\"\ngpu = 4\nxid = 119\n\n[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = 6\n"
        ))
        .expect("the lab is valid");
        let mut shell = shell(lab.instantiate(1));
        let text = scrape(&mut shell, "gpu-002");
        // The GPU the driver cannot read reports its Xid and nothing else;
        // the one off the bus is gone from every series.
        let gpu4: Vec<&str> = text.lines().filter(|line| line.contains("{gpu=\"4\"")).collect();
        assert_eq!(gpu4.len(), 1);
        assert!(gpu4[0].starts_with("DCGM_FI_DEV_XID_ERRORS{") && gpu4[0].ends_with(" 119"), "{gpu4:?}");
        assert!(!text.contains("{gpu=\"6\""));
    }

    #[test]
    fn an_older_exporter_reads_pcie_through_nvml() {
        let lab = load(&TWO_NODE_LAB.replace("hgx-h100", "hgx-a100")).expect("the lab is valid");
        let mut shell = shell(lab.instantiate(1));
        let text = scrape(&mut shell, "gpu-001");
        assert!(text.contains("# TYPE DCGM_FI_DEV_PCIE_TX_THROUGHPUT counter\n"));
        assert!(!text.contains("DCGM_FI_PROF_"));
    }
}
