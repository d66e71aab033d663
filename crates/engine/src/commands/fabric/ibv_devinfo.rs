//! `ibv_devinfo`: the verbs view of the RDMA devices (libibverbs'
//! examples/devinfo.c): device attributes and, per port, state, MTUs, LIDs and
//! link layer; `-v` adds the port's width, speed, physical state and GIDs.
//!
//! Limitation: `-v` adds only the port attributes; the ~40 device capability
//! lines real devinfo prints (max_mr_size, max_qp, ...) are not in the model.

use crate::commands::fabric::ib_common::{base_lid, capability_mask, hardware_version, mtu_code, sm_lid, strtol, system_image_guid, Link};
use crate::commands::fabric::roce::gid_table;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::{Hca, LinkLayer, PhysState, PortState};
use crate::model::Node;

pub struct IbvDevinfo;

static SIGNATURE: Signature = Signature {
    name: "ibv_devinfo",
    summary: "show the RDMA devices as libibverbs sees them: firmware, GUIDs, port state, MTU, LIDs",
    usage: "ibv_devinfo [-d DEVICE] [-i PORT] [-l] [-v]",
    flags: &[
        Flag { short: Some('d'), long: Some("ib-dev"), value: Some("<dev>"), help: "use IB device <dev> (default first device found)" },
        Flag { short: Some('i'), long: Some("ib-port"), value: Some("<port>"), help: "use port <port> of IB device (default all ports)" },
        Flag { short: Some('l'), long: Some("list"), value: None, help: "print only the IB devices names" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "print all the attributes of the IB device(s)" },
    ],
    examples: &[
        Example { command: "ibv_devinfo", description: "every device: firmware, port state, active MTU, LIDs, link layer" },
        Example { command: "ibv_devinfo -v", description: "adds each port's active width, speed and physical state" },
        Example { command: "ibv_devinfo -d mlx5_0", description: "one device only" },
        Example { command: "ibv_devinfo -l", description: "the device names" },
    ],
};

/// devinfo returns -1 for usage errors and a missing device.
const EXIT_FAILURE: i32 = 255;

fn usage() -> String {
    let mut out = "Usage: ibv_devinfo             print the ca attributes\n\nOptions:\n".to_string();
    for flag in SIGNATURE.flags {
        let head = format!("  -{}, --{}", flag.short.unwrap_or(' '), flag.long.unwrap_or(""));
        let head = match flag.value {
            Some(value) => format!("{head}={value}"),
            None => head,
        };
        out += &format!("{head:<25}{}\n", flag.help);
    }
    out
}

impl Command for IbvDevinfo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut device, mut port, mut verbose) = (None::<String>, 0i64, false);
        let node = invocation.node;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('d') => device = value,
                    Some('i') => {
                        port = strtol(value.as_deref().unwrap_or(""));
                        if port <= 0 {
                            return Output { status: 1, ..Output::ok(usage()) };
                        }
                    }
                    Some('v') => verbose = true,
                    Some('l') => {
                        let count = node.hcas.len();
                        let mut out = format!("{count} HCA{} found:\n", if count == 1 { "" } else { "s" });
                        for hca in &node.hcas {
                            out += &format!("\t{}\n", hca.name);
                        }
                        out.push('\n');
                        return Output::ok(out);
                    }
                    _ => {}
                },
                // Extra operands are ignored, as getopt leaves them.
                Arg::Positional(_) => {}
                Arg::Unknown(_) | Arg::MissingValue(_) => {
                    let complaint = crate::commands::options::complaint("ibv_devinfo", &arg);
                    return Output { stdout: usage(), stderr: complaint, status: EXIT_FAILURE, duration_ms: 0, ..Output::default() };
                }
            }
        }
        // libibverbs lists devices in the order the kernel registered them.
        let hcas: Vec<&Hca> = match &device {
            Some(name) => match node.hca(name) {
                Some(hca) => vec![hca],
                None => return Output::error(format!("IB device '{name}' wasn't found\n"), EXIT_FAILURE),
            },
            None if node.hcas.is_empty() => return Output::error("No IB devices found\n", EXIT_FAILURE),
            None => node.hcas.iter().collect(),
        };
        let out: String = hcas.iter().map(|hca| device_block(invocation.node, hca, port, verbose)).collect();
        Output { duration_ms: 20 * hcas.len() as u64, ..Output::ok(out) }
    }
}

fn device_block(node: &Node, hca: &Hca, only_port: i64, verbose: bool) -> String {
    let colon = Hca::guid_colon_form;
    let mut out = format!("hca_id:\t{}\n", hca.name);
    out += "\ttransport:\t\t\tInfiniBand (0)\n";
    out += &format!("\tfw_ver:\t\t\t\t{}\n", hca.firmware);
    out += &format!("\tnode_guid:\t\t\t{}\n", colon(hca.node_guid));
    out += &format!("\tsys_image_guid:\t\t\t{}\n", colon(system_image_guid(hca)));
    out += "\tvendor_id:\t\t\t0x02c9\n";
    out += &format!("\tvendor_part_id:\t\t\t{}\n", hca.part_id);
    out += &format!("\thw_ver:\t\t\t\t0x{:X}\n", hardware_version(hca));
    out += &format!("\tboard_id:\t\t\t{}\n", hca.board_id);
    out += "\tphys_port_cnt:\t\t\t1\n";
    let port = &hca.port;
    if only_port != 0 && only_port != i64::from(port.number) {
        return out;
    }
    out += &format!("\t\tport:\t{}\n", port.number);
    out += &format!("\t\t\tstate:\t\t\t{} ({})\n", state_name(port.state), port.state.code());
    out += &format!("\t\t\tmax_mtu:\t\t{} ({})\n", port.max_mtu, mtu_code(port.max_mtu));
    out += &format!("\t\t\tactive_mtu:\t\t{} ({})\n", port.active_mtu, mtu_code(port.active_mtu));
    out += &format!("\t\t\tsm_lid:\t\t\t{}\n", sm_lid(port));
    out += &format!("\t\t\tport_lid:\t\t{}\n", base_lid(port));
    out += &format!("\t\t\tport_lmc:\t\t0x{:02x}\n", port.lmc);
    out += &format!("\t\t\tlink_layer:\t\t{}\n", port.link_layer.label());
    if verbose {
        let infiniband = port.link_layer == LinkLayer::InfiniBand;
        let link = Link::of(hca);
        let (width, width_code) = link.verbs_width();
        let (speed, speed_code) = link.lane.verbs();
        out += "\t\t\tmax_msg_sz:\t\t0x40000000\n";
        out += &format!("\t\t\tport_cap_flags:\t\t0x{:08x}\n", capability_mask(port));
        out += if infiniband { "\t\t\tmax_vl_num:\t\t4 (3)\n" } else { "\t\t\tmax_vl_num:\t\tinvalid value (0)\n" };
        out += "\t\t\tbad_pkey_cntr:\t\t0x0\n";
        out += "\t\t\tqkey_viol_cntr:\t\t0x0\n";
        out += "\t\t\tsm_sl:\t\t\t0\n";
        out += &format!("\t\t\tpkey_tbl_len:\t\t{}\n", if infiniband { 128 } else { 1 });
        out += &format!("\t\t\tgid_tbl_len:\t\t{}\n", if infiniband { 8 } else { 255 });
        out += &format!("\t\t\tsubnet_timeout:\t\t{}\n", if infiniband { 18 } else { 0 });
        out += "\t\t\tinit_type_reply:\t0\n";
        out += &format!("\t\t\tactive_width:\t\t{width} ({width_code})\n");
        out += &format!("\t\t\tactive_speed:\t\t{speed} ({speed_code})\n");
        out += &format!("\t\t\tphys_state:\t\t{} ({})\n", phys_state_name(port.phys_state), port.phys_state.code());
        // ibv_devinfo prints an IPv4-mapped GID in the IPv4 form.
        for gid in gid_table(node, hca) {
            let shown = gid.ipv4.map_or(gid.gid, |ip| format!("::ffff:{ip}"));
            if infiniband {
                out += &format!("\t\t\tGID[{:3}]:\t\t{shown}\n", gid.index);
            } else {
                out += &format!("\t\t\tGID[{:3}]:\t\t{shown}, {}\n", gid.index, gid.kind.trim_start_matches("IB/"));
            }
        }
    }
    out.push('\n');
    out
}

fn state_name(state: PortState) -> &'static str {
    match state {
        PortState::Down => "PORT_DOWN",
        PortState::Initializing => "PORT_INIT",
        PortState::Armed => "PORT_ARMED",
        PortState::Active => "PORT_ACTIVE",
    }
}

fn phys_state_name(state: PhysState) -> &'static str {
    match state {
        PhysState::Sleep => "SLEEP",
        PhysState::Polling => "POLLING",
        PhysState::Disabled => "DISABLED",
        PhysState::Training => "PORT_CONFIGURATION TRAINING",
        PhysState::LinkUp => "LINK_UP",
        PhysState::LinkErrorRecovery => "LINK_ERROR_RECOVERY",
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn healthy_devices_show_active_ports_at_4096() {
        let output = run_on_first_node("ibv_devinfo");
        assert_eq!(output.status, 0);
        assert_eq!(output.stdout.matches("hca_id:\t").count(), 8);
        assert!(output.stdout.contains("\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n"));
    }

    #[test]
    fn verbose_shows_width_speed_and_physical_state() {
        let out = run_on_first_node("ibv_devinfo -v -d mlx5_0").stdout;
        assert!(out.contains("\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t100.0 Gbps (128)\n\t\t\tphys_state:\t\tLINK_UP (5)\n"), "{out}");
    }

    #[test]
    fn list_missing_device_and_bad_port() {
        assert!(run_on_first_node("ibv_devinfo -l").stdout.starts_with("8 HCAs found:\n\tmlx5_0\n"));
        let missing = run_on_first_node("ibv_devinfo -d mlx5_9");
        assert_eq!((missing.status, missing.stderr.as_str()), (255, "IB device 'mlx5_9' wasn't found\n"));
        assert_eq!(run_on_first_node("ibv_devinfo -i 0").status, 1);
        assert_eq!(run_on_first_node("ibv_devinfo --bogus").status, 255);
    }

    #[test]
    fn mtu_and_degraded_width_faults_show() {
        let mut cluster = cluster();
        Fault::HcaMtu { node: "gpu-001".into(), hca: "mlx5_4".into(), mtu: 1024 }.apply(&mut cluster).unwrap();
        Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_5".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        let mut session = shell(cluster);
        assert!(session.run("ibv_devinfo -d mlx5_4").stdout().contains("\t\t\tactive_mtu:\t\t1024 (3)\n"));
        assert!(session.run("ibv_devinfo -v -d mlx5_5").stdout().contains("\t\t\tactive_width:\t\t2X (16)\n"));
    }
}
