//! `mlxlink -d DEV [-m] [-c]`: an HCA port's link as NVIDIA's MFT tool
//! shows it: Operational, Supported and Troubleshooting Info and Tool
//! Information, with `-m` the cable's Module Info and with `-c` the Physical
//! Counters and BER Info. Layout from mlxlink_cx7_ndr_dac_show_mo.txt (labels
//! padded to 35 columns, the first sections' values followed by a space);
//! facts in ../shared/reference/fabric/FACTS.md §4. Status opcodes, their
//! groups (`PHY FW` below 1023, `MNG FW` from 1024) and messages are the
//! firmware's link-diagnostic codes (NVIDIA switch manuals, "Link Diagnostic
//! Per Port"); the counter rows are mstflint's showBer order.

use crate::commands::fabric::ib_common::counters_now;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::{Hca, LaneSpeed, LinkLayer, PhysState, Port, PortState};
use crate::model::Node;
use crate::rng::Rng;

pub struct Mlxlink;

static SIGNATURE: Signature = Signature {
    name: "mlxlink",
    summary: "check an hca port's link: state, speed, width, fec, troubleshooting status, cable and ber counters",
    usage: "mlxlink -d <device> [-p <port_number>] [-m] [-c]",
    flags: &[
        Flag { short: Some('d'), long: Some("device"), value: Some("<device>"), help: "Perform operation for a specified mst device" },
        Flag { short: Some('p'), long: Some("port"), value: Some("<port_number>"), help: "Port Number" },
        Flag { short: Some('m'), long: Some("show_module"), value: None, help: "Show Module Info" },
        Flag { short: Some('c'), long: Some("show_counters"), value: None, help: "Show Physical Counters and BER Info" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Display help message." },
    ],
    examples: &[
        Example { command: "sudo mlxlink -d mlx5_0", description: "link state, speed, width and troubleshooting status of mlx5_0" },
        Example { command: "sudo mlxlink -d mlx5_0 -m", description: "the same with the cable's module info" },
        Example { command: "sudo mlxlink -d mlx5_0 -c", description: "mlx5_0 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_1 -c", description: "mlx5_1 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_2 -c", description: "mlx5_2 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_3 -c", description: "mlx5_3 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_4 -c", description: "mlx5_4 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_5 -c", description: "mlx5_5 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_6 -c", description: "mlx5_6 with physical counters and BER" },
        Example { command: "sudo mlxlink -d mlx5_7 -c", description: "mlx5_7 with physical counters and BER" },
    ],
};

/// MFT and amBER of the captured run.
const MFT_VERSION: &str = "4.35.0-159";
const AMBER_VERSION: &str = "6.4";

/// Module Info of the captured passive NDR DAC, label `|` value; lines
/// starting `@` are computed (identifier, compliance, serial number).
const MODULE: &str = "Temperature [C]|0 [0..0]
Voltage [mV]|0 [0..0]
Bias Current [mA]|0,0,0,0 [0..0]
Rx Power Current [dBm]|0,0,0,0 [0..0]
Tx Power Current [dBm]|0,0,0,0 [0..0]
@Identifier
@Compliance
Cable Technology|Copper cable, passive, unequalized
Cable Type|Passive copper cable
OUI|Nvidia
Vendor Name|FS
Vendor Part Number|OSFPFL-400G-PC01
@Vendor Serial Number
Rev|00
Wavelength [nm]|N/A
Transfer Distance [m]|1
Attenuation (5g,7g,12g,25g)[dB]|0,0,0,0
FW Version|N/A
Digital Diagnostic Monitoring|Yes
Power Class|N/A
MAX Power|N/A
CDR RX|N/A
CDR TX|N/A
LOS Alarm|N/A
SNR Media Lanes [dB]|N/A
SNR Host Lanes [dB]|N/A
IB Cable Width|1x,2x,4x,8x
Memory Map Revision|64
Linear Direct Drive|0
@Cable Breakout
SMF Length|N/A
Cable Rx AMP|N/A
Cable Rx Emphasis (Pre)|N/A
Cable Rx Post Emphasis|N/A
Cable Tx Equalization|N/A
Wavelength Tolerance|N/A
Module State|Ready state
DataPath state [per lane]|N/A,N/A,N/A,N/A
Rx Output Valid [per lane]|0,0,0,0
Nominal bit rate|N/A
Rx Power Type|OMA
Manufacturing Date|09_04_26
@Active Set Host Compliance Code
Active Set Media Compliance Code|N/A
Error Code Response|ConfigUndefined
Module FW Fault|0
DataPath FW Fault|0
Tx Fault [per lane]|0,0,0,0
Tx LOS [per lane]|0,0,0,0
Tx CDR LOL [per lane]|0,0,0,0
Rx LOS [per lane]|1,0,1,1
Rx CDR LOL [per lane]|1,1,1,1
Tx Adaptive EQ Fault [per lane]|0,0,0,0
";

fn title(name: &str) -> String {
    format!("\n{name}\n{}\n", "-".repeat(name.len()))
}

/// A row of the link sections: mlxlink leaves a space after the value.
fn row(label: &str, value: impl std::fmt::Display) -> String {
    format!("{label:<35}: {value} \n")
}

/// The HCA `-d` names: `mlx5_N`, a PCI address (`0000:18:00.0` or
/// `18:00.0`) or an mst device (`/dev/mst/mt4129_pciconf0`, the Nth function
/// of that part).
fn find<'n>(node: &'n Node, device: &str) -> Option<&'n Hca> {
    let name = device.strip_prefix("/dev/mst/").unwrap_or(device);
    if let Some((part, index)) = name.strip_prefix("mt").and_then(|rest| rest.split_once("_pciconf")) {
        let index: usize = index.parse().ok()?;
        return node.hcas.iter().filter(|hca| part == hca.part_id.to_string()).nth(index);
    }
    node.hcas.iter().find(|hca| hca.name == device || hca.bus_id == device || hca.bus_id.get(5..) == Some(device))
}

/// IB speeds a ConnectX enables up to its fastest, as the capture's CX-7
/// shows (`0x000000f1 (NDR,HDR,EDR,FDR,SDR)`).
fn enabled_speeds(max: LaneSpeed) -> String {
    let all = [(0x100, "XDR", LaneSpeed::Xdr), (0x80, "NDR", LaneSpeed::Ndr), (0x40, "HDR", LaneSpeed::Hdr), (0x20, "EDR", LaneSpeed::Edr)];
    let (mut mask, mut names) = (0x11u32, Vec::new());
    for (bit, name, speed) in all {
        if speed <= max {
            mask |= bit;
            names.push(name);
        }
    }
    names.extend(["FDR", "SDR"]);
    format!("0x{mask:08x} ({})", names.join(","))
}

fn fec(speed: LaneSpeed) -> &'static str {
    match speed {
        LaneSpeed::Ndr | LaneSpeed::Xdr => "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)",
        LaneSpeed::Hdr => "RS-FEC - (544,514) + PLR",
        LaneSpeed::Edr => "Standard RS-FEC - RS(528,514)",
    }
}

/// The firmware's link-diagnostic opcode and message for the port.
fn diagnosis(port: &Port, symbol_errors: u64) -> (u32, &'static str) {
    if port.state == PortState::Down {
        return if port.phys_state == PhysState::Disabled { (1, "Port is close by command") } else { (60, "No partner detected for long time") };
    }
    if port.lane_speed < port.max_lane_speed {
        (34, "Speed degradation")
    } else if port.width < port.max_width || symbol_errors > 0 {
        (15, "Bad signal integrity")
    } else {
        (0, "No issue was observed")
    }
}

/// A bit error ratio as mlxlink prints it: `3E-12`; no errors is `15E-255`.
fn ber(errors: u64, bits: f64) -> String {
    if errors == 0 || bits <= 0.0 {
        return "15E-255".to_string();
    }
    let ratio = errors as f64 / bits;
    let mut magnitude = (-ratio.log10()).ceil().max(0.0) as i32;
    let mut coefficient = (ratio * 10f64.powi(magnitude)).round() as u64;
    if coefficient >= 10 {
        coefficient = (coefficient + 5) / 10;
        magnitude -= 1;
    }
    format!("{}E-{magnitude}", coefficient.max(1))
}

fn counters(invocation: &Invocation, hca: &Hca, up: bool) -> String {
    let port = &hca.port;
    let mut out = title("Physical Counters and BER Info");
    let mut rng = Rng::derive(invocation.cluster.seed, &[&invocation.node.hostname, "mlxlink", &hca.name]);
    let elapsed = (invocation.cluster.now - invocation.cluster.started_at()).max(0) as f64;
    let cleared_min = rng.range_u64(20_000, 400_000) as f64 / 10.0 + elapsed / 60.0;
    let c = counters_now(invocation.cluster, port);
    let lanes = u64::from(port.width.max(1));
    let lane_bits = f64::from(port.lane_speed.gbps()) * 1e9 * cleared_min * 60.0;
    // Healthy PAM4 lanes show raw BER around 1E-9; a marginal link's
    // uncorrected symbol errors come with far more corrected ones.
    let raw: Vec<u64> = (0..lanes).map(|_| (lane_bits * rng.range_u64(2, 40) as f64 * 1e-11) as u64 + c.symbol_errors * 2_000).collect();
    let raw_total: u64 = raw.iter().sum();
    let na = |value: String| if up { value } else { "N/A".to_string() };
    let bits = lane_bits * lanes as f64;
    out += &row("Time Since Last Clear [Min]", na(format!("{cleared_min:.1}")));
    out += &row("Symbol Errors", na(c.symbol_errors.to_string()));
    out += &row("Symbol BER", na(ber(c.symbol_errors, bits)));
    out += &row("Effective Physical Errors", na(c.symbol_errors.to_string()));
    out += &row("Effective Physical BER", na(ber(c.symbol_errors, bits)));
    let per_lane: Vec<String> = raw.iter().map(u64::to_string).collect();
    out += &row("Raw Physical Errors Per Lane", na(per_lane.join(",")));
    out += &row("Raw Physical BER", na(ber(raw_total, bits)));
    out += &row("Link Down Counter", na(c.link_downed.to_string()));
    out += &row("Link Error Recovery Counter", na(c.link_error_recovery.to_string()));
    out
}

fn module(invocation: &Invocation, hca: &Hca) -> String {
    let osfp = hca.port.max_lane_speed >= LaneSpeed::Ndr;
    let compliance = format!("IB {}", hca.port.max_lane_speed.name());
    let mut rng = Rng::derive(invocation.cluster.seed, &[&invocation.node.hostname, "cable", &hca.name]);
    let mut out = title("Module Info");
    for line in MODULE.lines() {
        let computed;
        let (label, value) = match line.strip_prefix('@') {
            Some(label) => {
                computed = match label {
                    "Identifier" => (if osfp { "OSFP" } else { "QSFP56" }).to_string(),
                    "Vendor Serial Number" => format!("C{}-{}", rng.range_u64(2_000_000_000, 2_999_999_999), rng.range_u64(1, 9)),
                    "Cable Breakout" => (if osfp { "OSFP to OSFP" } else { "QSFP to QSFP" }).to_string(),
                    _ => compliance.clone(),
                };
                (label, computed.as_str())
            }
            None => line.split_once('|').unwrap_or((line, "")),
        };
        out += &format!("{label:<35}: {value}\n");
    }
    out
}

impl Command for Mlxlink {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        // mlxlink's parser accepts a unique prefix of a long option (`--show_mo`).
        let args: Vec<String> = invocation
            .args()
            .iter()
            .map(|arg| match arg.strip_prefix("--") {
                Some(prefix) if !prefix.is_empty() && !prefix.contains('=') => {
                    let mut matches = SIGNATURE.flags.iter().filter_map(|f| f.long).filter(|long| long.starts_with(prefix));
                    match (matches.next(), matches.next()) {
                        (Some(long), None) => format!("--{long}"),
                        _ => arg.clone(),
                    }
                }
                _ => arg.clone(),
            })
            .collect();
        let (mut device, mut show_module, mut show_counters, mut port_number) = (None, false, false, 1);
        for arg in scan(&SIGNATURE, &args) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('d') => device = value,
                    Some('p') => port_number = value.and_then(|v| v.parse().ok()).unwrap_or(0),
                    Some('m') => show_module = true,
                    Some('c') => show_counters = true,
                    _ => return Output::ok(help()),
                },
                Arg::Unknown(text) | Arg::Positional(text) => {
                    return Output::error(format!("-E- Unrecognized option: {text}\n"), 1);
                }
                Arg::MissingValue(flag) => {
                    return Output::error(format!("-E- Missing argument for option: {}\n", flag.display()), 1);
                }
            }
        }
        let Some(device) = device else {
            return Output::error("-E- Please provide a device name using -d flag\n", 1);
        };
        let Some(hca) = find(invocation.node, &device) else {
            return Output::error(format!("-E- Failed to open device: \"{device}\", No such file or directory\n"), 1);
        };
        // MFT opens the device's PCI configuration space: root's alone.
        if !crate::commands::is_root(invocation.env) {
            return Output::error(format!("-E- Failed to open device: \"{device}\", Permission denied\n"), 1);
        }
        if port_number != 1 {
            return Output::error(format!("-E- Invalid port number: {port_number}\n"), 1);
        }
        let port = &hca.port;
        let up = port.state != PortState::Down;
        let ib = port.link_layer == LinkLayer::InfiniBand;
        let symbol_errors = counters_now(invocation.cluster, port).symbol_errors;
        let (state, phys) = match (port.state, port.phys_state) {
            (PortState::Down, PhysState::Disabled) => ("Disable", "Disabled"),
            (PortState::Down, _) => ("Polling", port.phys_state.label()),
            (_, _) if !ib => ("Active", "ETH_AN_FSM_ENABLE"),
            (_, physical) => ("Active", physical.label()),
        };
        let mut out = title("Operational Info");
        out += &row("State", state);
        out += &row("Physical state", phys);
        let speed = if !up {
            "N/A".to_string()
        } else if ib {
            format!("IB-{}", port.lane_speed.name())
        } else {
            format!("{}G", port.rate_gbps())
        };
        out += &row("Speed", speed);
        out += &row("Width", if up { format!("{}x", port.width) } else { "N/A".to_string() });
        out += &row("FEC", if up { fec(port.lane_speed) } else { "N/A" });
        out += &row("Loopback Mode", "No Loopback");
        out += &row("Auto Negotiation", "ON");
        out += &title("Supported Info");
        out += &row("Enabled Link Speed", enabled_speeds(port.max_lane_speed));
        out += &row("Supported Cable Speed", enabled_speeds(port.max_lane_speed));
        let (opcode, message) = diagnosis(port, symbol_errors);
        out += &title("Troubleshooting Info");
        out += &row("Status Opcode", opcode);
        out += &row(
            "Group Opcode",
            match opcode {
                0 | 1023 => "N/A",
                1..=1022 => "PHY FW",
                _ => "MNG FW",
            },
        );
        out += &row("Recommendation", message);
        out += &title("Tool Information");
        out += &row("Firmware Version", &hca.firmware);
        out += &row("amBER Version", AMBER_VERSION);
        out += &row("MFT Version", MFT_VERSION);
        if show_module {
            out += &module(invocation, hca);
        }
        if show_counters {
            out += &counters(invocation, hca, up);
        }
        Output { duration_ms: 900, ..Output::ok(out) }
    }
}

fn help() -> String {
    let mut out = String::from("\n    NAME:\n        mlxlink\n\n    SYNOPSIS:\n        mlxlink [OPTIONS]\n\n    OPTIONS:\n");
    for flag in SIGNATURE.flags {
        out += &format!("        {:<36}{}\n", flag.display().replace(", --", " |--").replace('=', " "), flag.help);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    fn value<'a>(out: &'a str, label: &str) -> &'a str {
        out.lines().find(|l| l.starts_with(label)).and_then(|l| l.split_once(": ")).map_or("", |(_, v)| v.trim_end())
    }

    #[test]
    fn needs_root() {
        let out = crate::testing::run_on_first_node("mlxlink -d mlx5_0");
        assert_eq!((out.stderr.as_str(), out.status), ("-E- Failed to open device: \"mlx5_0\", Permission denied\n", 1));
    }

    #[test]
    fn healthy_port_reads_like_the_capture() {
        let out = run_on_first_node("sudo mlxlink -d mlx5_0").stdout;
        assert!(out.starts_with("\nOperational Info\n----------------\nState                              : Active \n"), "{out}");
        assert_eq!(value(&out, "Speed"), "IB-NDR");
        assert_eq!(value(&out, "Recommendation"), "No issue was observed");
        let by_bus = run_on_first_node("sudo mlxlink -d 0000:18:00.0").stdout;
        assert_eq!(by_bus, out);
        assert_eq!(run_on_first_node("sudo mlxlink -d 18:00.0").stdout, out);
        assert_eq!(run_on_first_node("sudo mlxlink -d /dev/mst/mt4129_pciconf0").stdout, out);
        let counters = run_on_first_node("sudo mlxlink -d mlx5_0 -c").stdout;
        assert_eq!(value(&counters, "Symbol BER"), "15E-255");
        assert!(value(&counters, "Raw Physical BER").contains("E-"));
        assert_eq!(run_on_first_node("sudo mlxlink -d mlx5_9").status, 1);
        assert_eq!(run_on_first_node("sudo mlxlink").status, 1);
        assert_eq!(run_on_first_node("sudo mlxlink -d").status, 1);
        assert_eq!(run_on_first_node("sudo mlxlink -d mlx5_0 --bogus").status, 1);
        assert_eq!(run_on_first_node("sudo mlxlink --show_mo -d mlx5_0").stdout.lines().count(), out.lines().count() + 56);
    }

    #[test]
    fn faults_show_in_state_speed_and_ber() {
        let mut cluster = cluster();
        let node = "gpu-001".to_string();
        Fault::HcaLinkDegraded { node: node.clone(), hca: "mlx5_1".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
        Fault::HcaLinkDegraded { node: node.clone(), hca: "mlx5_2".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        Fault::HcaSymbolErrors { node: node.clone(), hca: "mlx5_3".into(), count: 24_000 }.apply(&mut cluster).unwrap();
        let down = crate::model::fault::PortDown::Polling;
        Fault::HcaPortDown { node, hca: "mlx5_4".into(), state: down }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        let hdr = session.run("sudo mlxlink -d mlx5_1").stdout();
        assert_eq!((value(&hdr, "Speed"), value(&hdr, "Status Opcode")), ("IB-HDR", "34"));
        let narrow = session.run("sudo mlxlink -d mlx5_2").stdout();
        assert_eq!((value(&narrow, "Width"), value(&narrow, "Group Opcode")), ("2x", "PHY FW"));
        let noisy = session.run("sudo mlxlink -d mlx5_3 -c").stdout();
        assert_eq!(value(&noisy, "Symbol Errors"), "24000");
        assert_ne!(value(&noisy, "Symbol BER"), "15E-255");
        let healthy = session.run("sudo mlxlink -d mlx5_0 -c").stdout();
        let magnitude = |out: &str| value(out, "Raw Physical BER").split("E-").nth(1).unwrap().parse::<u32>().unwrap();
        assert!(magnitude(&noisy) < magnitude(&healthy));
        let dead = session.run("sudo mlxlink -d mlx5_4 -c").stdout();
        assert_eq!((value(&dead, "State"), value(&dead, "Speed"), value(&dead, "Status Opcode")), ("Polling", "N/A", "60"));
        assert_eq!(value(&dead, "Symbol BER"), "N/A");
    }
}
