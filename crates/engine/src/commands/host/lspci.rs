//! `lspci`: the node's PCI devices the model knows (GPUs and HCAs), with
//! `-d`, `-s`, `-D`, `-n`/`-nn`, `-k` and `-v`/`-vv`.
//!
//! One line per device as in lspci-Dnn_hgx-h100_vm-passthrough.txt; verbose
//! fields are TAB-indented, `LnkCap:`/`LnkSta:` two TABs deep with a TAB after
//! the colon (FACTS.md §10; lspci-vvv_lnk-grep_rtx3080_x4-downgraded.txt shows
//! the words). A GPU that fell off the bus stays listed, but its config space
//! reads as all ones: `(rev ff)` and `!!! Unknown header type 7f`.

use crate::commands::host::pci_ids::{gpu_device_name, gpu_subsystem, hca_device, MELLANOX_VENDOR, NVIDIA_VENDOR};
use crate::commands::options::complaint;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::LinkLayer;
use crate::model::gpu::PcieLink;
use crate::model::{Cluster, Node};

pub struct Lspci;

static SIGNATURE: Signature = Signature {
    name: "lspci",
    summary: "list PCI devices: GPUs and HCAs, their ids and PCIe link state",
    usage: "lspci [<switches>]",
    flags: &[
        Flag { short: Some('v'), long: None, value: None, help: "Be verbose (-vv or -vvv for even more details)" },
        Flag { short: Some('n'), long: None, value: None, help: "Show numeric ID's (-nn for both names and numbers)" },
        Flag { short: Some('D'), long: None, value: None, help: "Always show domain numbers" },
        Flag { short: Some('k'), long: None, value: None, help: "Show kernel drivers handling each device" },
        Flag { short: Some('s'), long: None, value: Some("[[[[<domain>]:]<bus>]:][<slot>][.[<func>]]"), help: "Show only devices in selected slots" },
        Flag { short: Some('d'), long: None, value: Some("[<vendor>]:[<device>]"), help: "Show only devices with specified ID's" },
    ],
    examples: &[
        Example { command: "lspci -d 10de:", description: "every NVIDIA device, even GPUs the driver lost" },
        Example { command: "sudo lspci -vv -d 10de:", description: "NVIDIA devices with their PCIe link capability and status" },
        Example { command: "sudo lspci -vv -d 15b3:", description: "the HCAs' PCIe link capability and status" },
    ],
};

/// One PCI function.
struct Device {
    /// `0000:04:00.0`, lower case.
    address: String,
    class: u16,
    class_name: &'static str,
    vendor: u16,
    vendor_name: &'static str,
    device: u16,
    device_name: String,
    revision: Option<u8>,
    subsystem: u16,
    link: PcieLink,
    driver: &'static str,
    modules: &'static str,
    /// Config space reads all ones (the device fell off the bus).
    lost: bool,
}

fn devices(cluster: &Cluster, node: &Node) -> Vec<Device> {
    let mut all: Vec<Device> = node
        .gpus
        .iter()
        .map(|gpu| Device {
            address: gpu.kernel_bus_id(),
            class: 0x0302,
            class_name: "3D controller",
            vendor: NVIDIA_VENDOR,
            vendor_name: "NVIDIA Corporation",
            device: gpu.device_id,
            device_name: gpu_device_name(gpu.device_id),
            revision: Some(0xa1),
            subsystem: gpu_subsystem(gpu.device_id),
            link: gpu.pcie,
            driver: "nvidia",
            modules: "nvidiafb, nouveau, nvidia_drm, nvidia",
            lost: !gpu.is_visible(),
        })
        .collect();
    let (class, class_name) = match cluster.fabric {
        LinkLayer::InfiniBand => (0x0207, "Infiniband controller"),
        LinkLayer::Ethernet => (0x0200, "Ethernet controller"),
    };
    all.extend(node.hcas.iter().map(|hca| {
        let (device, device_name) = hca_device(hca.part_id);
        Device {
            address: hca.bus_id.to_ascii_lowercase(),
            class,
            class_name,
            vendor: MELLANOX_VENDOR,
            vendor_name: "Mellanox Technologies",
            device,
            device_name,
            revision: None,
            subsystem: device,
            link: hca.pcie,
            driver: "mlx5_core",
            modules: "mlx5_core",
            lost: false,
        }
    }));
    crate::sort::sort_by(&mut all, |a, b| a.address.cmp(&b.address));
    all
}

/// A `-s` or `-d` component: `None` matches anything.
type Part = Option<u32>;

fn hex_part(text: &str, max: u32) -> Result<Part, ()> {
    if text.is_empty() || text == "*" {
        return Ok(None);
    }
    match u32::from_str_radix(text, 16) {
        Ok(value) if value <= max => Ok(Some(value)),
        _ => Err(()),
    }
}

fn matches(part: Part, value: u32) -> bool {
    part.is_none_or(|wanted| wanted == value)
}

/// `-s [[[[<domain>]:]<bus>]:][<slot>][.[<func>]]`.
struct SlotFilter {
    domain: Part,
    bus: Part,
    slot: Part,
    function: Part,
}

impl SlotFilter {
    fn parse(text: &str) -> Result<SlotFilter, String> {
        let (head, function) = match text.rsplit_once('.') {
            Some((head, function)) => (head, hex_part(function, 7).map_err(|_| "Invalid function number")?),
            None => (text, None),
        };
        let parts: Vec<&str> = head.split(':').collect();
        let (domain, bus, slot) = match parts.as_slice() {
            [slot] => ("", "", *slot),
            [bus, slot] => ("", *bus, *slot),
            [domain, bus, slot] => (*domain, *bus, *slot),
            _ => return Err("Invalid slot number".to_string()),
        };
        Ok(SlotFilter {
            domain: hex_part(domain, 0xffff).map_err(|_| "Invalid domain number")?,
            bus: hex_part(bus, 0xff).map_err(|_| "Invalid bus number")?,
            slot: hex_part(slot, 0x1f).map_err(|_| "Invalid slot number")?,
            function,
        })
    }

    fn accepts(&self, address: &str) -> bool {
        let field = |range: std::ops::Range<usize>| address.get(range).and_then(|hex| u32::from_str_radix(hex, 16).ok()).unwrap_or(0);
        matches(self.domain, field(0..4)) && matches(self.bus, field(5..7)) && matches(self.slot, field(8..10)) && matches(self.function, field(11..12))
    }
}

/// `-d [<vendor>]:[<device>][:<class>]`.
struct IdFilter {
    vendor: Part,
    device: Part,
    class: Part,
}

impl IdFilter {
    fn parse(text: &str) -> Result<IdFilter, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let (vendor, device, class) = match parts.as_slice() {
            [vendor, device] => (*vendor, *device, ""),
            [vendor, device, class] => (*vendor, *device, *class),
            _ => return Err("Invalid vendor ID".to_string()),
        };
        Ok(IdFilter {
            vendor: hex_part(vendor, 0xffff).map_err(|_| "Invalid vendor ID")?,
            device: hex_part(device, 0xffff).map_err(|_| "Invalid device ID")?,
            class: hex_part(class, 0xffff).map_err(|_| "Invalid class code")?,
        })
    }

    fn accepts(&self, device: &Device) -> bool {
        matches(self.vendor, u32::from(device.vendor)) && matches(self.device, u32::from(device.device)) && matches(self.class, u32::from(device.class))
    }
}

#[derive(Default)]
struct Options {
    verbose: u8,
    numeric: u8,
    domains: bool,
    kernel: bool,
    /// Run as root: the capabilities (and the link's state) are readable.
    root: bool,
}

impl Command for Lspci {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut options = Options { root: crate::commands::is_root(invocation.env), ..Options::default() };
        let mut slots: Option<SlotFilter> = None;
        let mut ids: Option<IdFilter> = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.short, value) {
                    (Some('v'), _) => options.verbose = options.verbose.saturating_add(1),
                    (Some('n'), _) => options.numeric = options.numeric.saturating_add(1),
                    (Some('D'), _) => options.domains = true,
                    (Some('k'), _) => options.kernel = true,
                    (Some('s'), Some(text)) => match SlotFilter::parse(&text) {
                        Ok(filter) => slots = Some(filter),
                        Err(problem) => return Output::error(format!("lspci: -s: {problem}\n"), 1),
                    },
                    (Some('d'), Some(text)) => match IdFilter::parse(&text) {
                        Ok(filter) => ids = Some(filter),
                        Err(problem) => return Output::error(format!("lspci: -d: {problem}\n"), 1),
                    },
                    _ => {}
                },
                Arg::Positional(_) => return Output::error(format!("lspci: Unexpected arguments\n\n{}", usage()), 1),
                unknown => return Output::error(format!("{}{}", complaint("lspci", &unknown), usage()), 1),
            }
        }
        let cluster = invocation.cluster;
        let text: String = devices(cluster, invocation.node)
            .iter()
            .filter(|device| slots.as_ref().is_none_or(|filter| filter.accepts(&device.address)))
            .filter(|device| ids.as_ref().is_none_or(|filter| filter.accepts(device)))
            .map(|device| describe(device, &options))
            .collect();
        Output::ok(text)
    }
}

fn describe(device: &Device, options: &Options) -> String {
    let address = if options.domains { device.address.as_str() } else { device.address.get(5..).unwrap_or(&device.address) };
    let revision = if device.lost { Some(0xff) } else { device.revision };
    let mut line = match options.numeric {
        0 => format!("{address} {}: {} {}", device.class_name, device.vendor_name, device.device_name),
        1 => format!("{address} {:04x}: {:04x}:{:04x}", device.class, device.vendor, device.device),
        _ => format!(
            "{address} {} [{:04x}]: {} {} [{:04x}:{:04x}]",
            device.class_name, device.class, device.vendor_name, device.device_name, device.vendor, device.device
        ),
    };
    if let Some(revision) = revision {
        line += &format!(" (rev {revision:02x})");
    }
    if device.lost && options.verbose > 0 {
        line += " (prog-if ff)";
    }
    line.push('\n');
    if options.verbose == 0 {
        if options.kernel {
            line += &format!("\tKernel driver in use: {}\n\tKernel modules: {}\n", device.driver, device.modules);
        }
        return line;
    }
    if device.lost {
        line += "\t!!! Unknown header type 7f\n";
    } else {
        let subsystem = match options.numeric {
            0 => format!("{} Device {:04x}", device.vendor_name, device.subsystem),
            1 => format!("{:04x}:{:04x}", device.vendor, device.subsystem),
            _ => format!("{} Device [{:04x}:{:04x}]", device.vendor_name, device.vendor, device.subsystem),
        };
        line += &format!("\tSubsystem: {subsystem}\n");
        // Past the first 64 bytes, configuration space is root's to read.
        if !options.root {
            line += "\tCapabilities: <access denied>\n";
        } else {
            line += "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n";
            if options.verbose >= 2 {
                line += &link_lines(&device.link);
            }
        }
    }
    line += &format!("\tKernel driver in use: {}\n\tKernel modules: {}\n\n", device.driver, device.modules);
    line
}

/// `LnkCap:` and `LnkSta:` with `(ok)` or `(downgraded)` per field.
fn link_lines(link: &PcieLink) -> String {
    let mark = |current: u8, capable: u8| if current < capable { " (downgraded)" } else { " (ok)" };
    format!(
        "\t\tLnkCap:\tPort #0, Speed {}GT/s, Width x{}, ASPM not supported\n\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n\t\tLnkSta:\tSpeed {}GT/s{}, Width x{}{}\n\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n",
        PcieLink::gts(link.max_gen),
        link.max_width,
        PcieLink::gts(link.gen),
        mark(link.gen, link.max_gen),
        link.width,
        mark(link.width, link.max_width)
    )
}

fn usage() -> String {
    let mut out = String::from("Usage: lspci [<switches>]\n\n");
    for flag in SIGNATURE.flags {
        let name = format!("-{}{}", flag.short.unwrap_or('?'), flag.value.map(|v| format!(" {v}")).unwrap_or_default());
        out += &format!("{name:<20}\t{}\n", flag.help);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn a_plain_user_sees_no_capabilities() {
        let out = run_on_first_node("lspci -s 04:00.0 -vv").stdout;
        assert!(out.contains("\tCapabilities: <access denied>\n") && !out.contains("LnkSta"), "{out}");
        assert_eq!(run_on_first_node("lspci -vv | grep LnkSta").stdout, "");
    }

    #[test]
    fn lists_gpus_and_hcas_in_bus_order() {
        let out = run_on_first_node("sudo lspci");
        assert_eq!(out.stdout.lines().count(), 16);
        assert_eq!(out.stdout.lines().next(), Some("04:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)"));
        let nn = run_on_first_node("sudo lspci -Dnn -d 10de:");
        assert_eq!(nn.stdout.lines().count(), 8);
        assert!(nn.stdout.starts_with("0000:04:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n"));
        assert_eq!(run_on_first_node("sudo lspci -s 23:00.0").stdout.lines().count(), 1);
        assert_eq!(run_on_first_node("sudo lspci -n -s 0000:18:").stdout, "18:00.0 0207: 15b3:1021\n");
    }

    #[test]
    fn verbose_shows_link_state_and_lost_gpus() {
        let mut cluster = cluster();
        Fault::GpuPcieDegraded { node: "gpu-001".into(), gpu: 0, gen: Some(4), width: Some(8) }.apply(&mut cluster).unwrap();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 1, xid: 79 }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let out = session.run("sudo lspci -vv -d 10de:").stdout();
        assert!(out.contains("\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"));
        assert!(out.contains("\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)\n"));
        assert!(out.contains("\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)\n"));
        assert!(out.contains("23:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev ff) (prog-if ff)\n\t!!! Unknown header type 7f\n"));
    }

    #[test]
    fn bad_input_answers_as_lspci() {
        let out = run_on_first_node("sudo lspci -z");
        assert!(out.stderr.starts_with("lspci: invalid option -- 'z'\nUsage: lspci [<switches>]\n"));
        assert_eq!(out.status, 1);
        assert_eq!(run_on_first_node("sudo lspci -s zz:00.0").stderr, "lspci: -s: Invalid bus number\n");
        assert_eq!(run_on_first_node("sudo lspci -d 10de").stderr, "lspci: -d: Invalid vendor ID\n");
        assert_eq!(run_on_first_node("sudo lspci -d").status, 1);
    }
}
