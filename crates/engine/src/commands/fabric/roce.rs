//! What an RDMA port shows beyond the IB counters, shared by `show_gids`,
//! `ibv_devinfo -v`, `rdma`, `ethtool -S` and sysfs: its GID table and,
//! on RoCE, the Ethernet and RDMA counters its traffic and flow control
//! leave.
//!
//! The GID table of a RoCE port: the link-local GID from the netdev's MAC,
//! then the IPv4-mapped GID of the rail address, each as RoCE v1 and v2
//! (indexes 0-3); an IB port has its one GID at index 0.
//!
//! The counters follow from the port's traffic (`counters_now`: jobs and
//! runs) and from whether PFC protects the RDMA priority: a lossless port
//! pauses its switch now and then and is paused by it; a port without PFC
//! sends no pause and drops what it cannot buffer (`rx_discards_phy`), each
//! drop an out-of-sequence packet for the RDMA responder
//! ([`crate::perf::DROP_RATE_WITHOUT_PFC`]). DCQCN's congestion
//! notifications scale with the traffic; where its notification point is
//! off the port sends no CNP, where its reaction point is off it ignores
//! those it gets and, unpaced, is paused by the switch far more often
//! ([`crate::perf::PAUSED_SHARE_WITHOUT_ECN`]).

use crate::commands::fabric::ib_common::{counters_now, default_gid, is_infiniband};
use crate::model::fabric::{Hca, ROCE_PRIORITY};
use crate::model::network::{rail_ip, rail_ipv4};
use crate::model::{Cluster, Node};
use crate::perf::DROP_RATE_WITHOUT_PFC;

/// One entry of a port's GID table.
pub struct Gid {
    pub index: u32,
    /// Eight groups of four hex digits, as sysfs prints it.
    pub gid: String,
    /// `IB/RoCE v1` or `RoCE v2` (IB ports: `IB/RoCE v1`).
    pub kind: &'static str,
    /// The IPv4 address an IPv4-mapped GID carries.
    pub ipv4: Option<String>,
}

/// The GID table of `hca` on `node`.
pub fn gid_table(node: &Node, hca: &Hca) -> Vec<Gid> {
    let Some(link_local) = default_gid(&hca.port) else { return Vec::new() };
    if is_infiniband(&hca.port) {
        return vec![Gid { index: 0, gid: link_local, kind: "IB/RoCE v1", ipv4: None }];
    }
    let rail = node.hcas.iter().position(|h| h.name == hca.name).unwrap_or(0);
    let [a, b, c, d] = rail_ipv4(&node.hostname, rail);
    let mapped = format!("0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}");
    let ip = rail_ip(&node.hostname, rail);
    let mut table = Vec::new();
    for (index, (gid, ipv4)) in [(link_local.clone(), None), (mapped, Some(ip))].into_iter().enumerate() {
        let index = index as u32 * 2;
        table.push(Gid { index, gid: gid.clone(), kind: "IB/RoCE v1", ipv4: ipv4.clone() });
        table.push(Gid { index: index + 1, gid, kind: "RoCE v2", ipv4 });
    }
    table
}

/// A RoCE port's counters now, named as mlx5 names them.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoceCounters {
    /// RDMA traffic (on the RoCE priority), bytes and packets.
    pub rdma_rx_bytes: u64,
    pub rdma_tx_bytes: u64,
    pub rdma_rx_packets: u64,
    pub rdma_tx_packets: u64,
    /// The kernel's own traffic over the netdev (ARP, LLDP, neighbour discovery).
    pub kernel_rx_packets: u64,
    pub kernel_tx_packets: u64,
    /// Pause frames on the RoCE priority: received from the switch, sent to it.
    pub rx_pause: u64,
    pub tx_pause: u64,
    /// Microseconds paused.
    pub rx_pause_duration: u64,
    pub tx_pause_duration: u64,
    /// Frames the port dropped for want of buffer.
    pub rx_discards: u64,
    pub out_of_sequence: u64,
    pub np_ecn_marked: u64,
    pub np_cnp_sent: u64,
    pub rp_cnp_handled: u64,
    pub rp_cnp_ignored: u64,
    pub link_down_events: u64,
    pub symbol_errors: u64,
    pub corrected_bits: u64,
}

/// Bytes of Ethernet, IP, UDP, BTH and ICRC around an RDMA payload on the wire.
pub const FRAME_OVERHEAD: u64 = 62;

impl RoceCounters {
    pub fn of(cluster: &Cluster, node: &Node, hca: &Hca) -> RoceCounters {
        let port = &hca.port;
        let c = counters_now(cluster, port);
        let rdma_rx_bytes = c.rcv_data.saturating_mul(4);
        let rdma_tx_bytes = c.xmit_data.saturating_mul(4);
        // A neighbour or LLDP frame about every 30 s each way since boot.
        let up = (cluster.now - node.booted_at).max(0) as u64;
        let (kernel_rx_packets, kernel_tx_packets) = (up / 30 + 12, up / 30 + 9);
        let lossless = port.lossless();
        let bit = 1 << ROCE_PRIORITY;
        let (notifies, reacts) = (port.ecn_np & bit != 0, port.ecn_rp & bit != 0);
        // Unpaced, the port is paused for PAUSED_SHARE_WITHOUT_ECN of its
        // sending time: a pause quantum (~3 us at 400G) per 1,400 packets or so.
        let rx_pause_every = if reacts { 12_000 } else { 1_400 };
        let (rx_pause, tx_pause) = if lossless { (c.xmit_pkts / rx_pause_every, c.rcv_pkts / 20_000) } else { (0, 0) };
        let cnps_received = c.xmit_pkts / 5_500;
        let rx_discards = if lossless { 0 } else { (c.rcv_pkts as f64 * DROP_RATE_WITHOUT_PFC) as u64 };
        let np_ecn_marked = c.rcv_pkts / 5_000;
        RoceCounters {
            rdma_rx_bytes,
            rdma_tx_bytes,
            rdma_rx_packets: c.rcv_pkts,
            rdma_tx_packets: c.xmit_pkts,
            kernel_rx_packets,
            kernel_tx_packets,
            rx_pause,
            tx_pause,
            rx_pause_duration: rx_pause * 3,
            tx_pause_duration: tx_pause * 2,
            rx_discards,
            out_of_sequence: rx_discards,
            np_ecn_marked,
            np_cnp_sent: if notifies { np_ecn_marked * 9 / 10 } else { 0 },
            rp_cnp_handled: if reacts { cnps_received } else { 0 },
            rp_cnp_ignored: if reacts { 0 } else { cnps_received },
            link_down_events: c.link_downed,
            symbol_errors: c.symbol_errors,
            corrected_bits: rdma_rx_bytes / 12_500_000 + c.symbol_errors.saturating_mul(48),
        }
    }

    /// What each RDMA hw_counter of `hca` reads, in the kernel's order: an
    /// IB port lacks RoCE's retransmission and congestion counters.
    pub fn hw_counters_of(&self, hca: &Hca) -> Vec<(&'static str, u64)> {
        let roce = !is_infiniband(&hca.port);
        self.hw_counters()
            .into_iter()
            .filter(|(name, _)| roce || !(name.starts_with("roce_") || name.starts_with("rp_") || name.starts_with("np_") || *name == "rx_icrc_encapsulated"))
            .collect()
    }

    /// Every RDMA hw_counter, in the kernel's order.
    pub fn hw_counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rx_write_requests", self.rdma_rx_bytes / 524_288),
            ("rx_read_requests", 0),
            ("rx_atomic_requests", 0),
            ("rx_dct_connect", 0),
            ("out_of_buffer", 0),
            ("out_of_sequence", self.out_of_sequence),
            ("duplicate_request", self.out_of_sequence / 40),
            ("rnr_nak_retry_err", 0),
            ("packet_seq_err", 0),
            ("implied_nak_seq_err", 0),
            ("local_ack_timeout_err", 0),
            ("resp_local_length_error", 0),
            ("resp_cqe_error", 0),
            ("req_cqe_error", 0),
            ("req_remote_invalid_request", 0),
            ("req_remote_access_errors", 0),
            ("resp_remote_access_errors", 0),
            ("resp_cqe_flush_error", 0),
            ("req_cqe_flush_error", 0),
            ("req_transport_retries_exceeded", 0),
            ("req_rnr_retries_exceeded", 0),
            ("roce_adp_retrans", 0),
            ("roce_adp_retrans_to", 0),
            ("roce_slow_restart", 0),
            ("roce_slow_restart_cnps", 0),
            ("roce_slow_restart_trans", 0),
            ("rp_cnp_ignored", self.rp_cnp_ignored),
            ("rp_cnp_handled", self.rp_cnp_handled),
            ("np_ecn_marked_roce_packets", self.np_ecn_marked),
            ("np_cnp_sent", self.np_cnp_sent),
            ("rx_icrc_encapsulated", 0),
        ]
    }

    /// `ethtool -S`'s counters for a port with PFC on `pfc_enabled`'s priorities, in mlx5's order.
    pub fn ethtool(&self, pfc_enabled: u8, mtu: u32) -> Vec<(String, u64)> {
        let rx_frames = self.rdma_rx_packets + self.kernel_rx_packets + self.rp_cnp_handled + self.rp_cnp_ignored;
        let tx_frames = self.rdma_tx_packets + self.kernel_tx_packets + self.np_cnp_sent;
        let rx_bytes = self.rdma_rx_bytes + self.rdma_rx_packets * FRAME_OVERHEAD + self.kernel_rx_packets * 90;
        let tx_bytes = self.rdma_tx_bytes + self.rdma_tx_packets * FRAME_OVERHEAD + self.kernel_tx_packets * 90;
        let (kernel_rx_bytes, kernel_tx_bytes) = (self.kernel_rx_packets * 86, self.kernel_tx_packets * 86);
        let mut list: Vec<(String, u64)> = Vec::new();
        let mut put = |name: &str, value: u64| list.push((name.to_string(), value));
        // The software counters see only what the kernel itself sends and receives.
        for (name, value) in [
            ("rx_packets", self.kernel_rx_packets),
            ("rx_bytes", kernel_rx_bytes),
            ("tx_packets", self.kernel_tx_packets),
            ("tx_bytes", kernel_tx_bytes),
            ("tx_tso_packets", 0),
            ("tx_tso_bytes", 0),
            ("tx_tso_inner_packets", 0),
            ("tx_tso_inner_bytes", 0),
            ("tx_added_vlan_packets", 0),
            ("tx_nop", 0),
            ("rx_lro_packets", 0),
            ("rx_lro_bytes", 0),
            ("rx_ecn_mark", 0),
            ("rx_removed_vlan_packets", 0),
            ("rx_csum_unnecessary", 0),
            ("rx_csum_none", self.kernel_rx_packets / 2),
            ("rx_csum_complete", self.kernel_rx_packets - self.kernel_rx_packets / 2),
            ("tx_csum_partial", 0),
            ("tx_queue_stopped", 0),
            ("tx_queue_dropped", 0),
            ("tx_xmit_more", 0),
            ("tx_recover", 0),
            ("tx_cqes", self.kernel_tx_packets),
            ("tx_queue_wake", 0),
            ("tx_cqe_err", 0),
            ("rx_wqe_err", 0),
            ("rx_buff_alloc_err", 0),
            ("rx_cqe_compress_blks", 0),
            ("rx_cqe_compress_pkts", 0),
            ("ch_events", self.kernel_rx_packets + self.kernel_tx_packets),
            ("ch_poll", self.kernel_rx_packets + self.kernel_tx_packets),
            ("ch_arm", self.kernel_rx_packets + self.kernel_tx_packets),
            ("rx_out_of_buffer", 0),
            ("rx_if_down_packets", 0),
            ("rx_vport_unicast_packets", self.kernel_rx_packets / 3),
            ("rx_vport_unicast_bytes", kernel_rx_bytes / 3),
            ("tx_vport_unicast_packets", self.kernel_tx_packets / 3),
            ("tx_vport_unicast_bytes", kernel_tx_bytes / 3),
            ("rx_vport_multicast_packets", self.kernel_rx_packets - self.kernel_rx_packets / 3),
            ("rx_vport_multicast_bytes", kernel_rx_bytes - kernel_rx_bytes / 3),
            ("tx_vport_multicast_packets", self.kernel_tx_packets - self.kernel_tx_packets / 3),
            ("tx_vport_multicast_bytes", kernel_tx_bytes - kernel_tx_bytes / 3),
            ("rx_vport_broadcast_packets", 0),
            ("rx_vport_broadcast_bytes", 0),
            ("tx_vport_broadcast_packets", 0),
            ("tx_vport_broadcast_bytes", 0),
            ("rx_vport_rdma_unicast_packets", self.rdma_rx_packets),
            ("rx_vport_rdma_unicast_bytes", self.rdma_rx_bytes),
            ("tx_vport_rdma_unicast_packets", self.rdma_tx_packets),
            ("tx_vport_rdma_unicast_bytes", self.rdma_tx_bytes),
            ("rx_vport_rdma_multicast_packets", 0),
            ("rx_vport_rdma_multicast_bytes", 0),
            ("tx_vport_rdma_multicast_packets", 0),
            ("tx_vport_rdma_multicast_bytes", 0),
            ("tx_packets_phy", tx_frames + self.tx_pause),
            ("rx_packets_phy", rx_frames + self.rx_pause),
            ("rx_crc_errors_phy", 0),
            ("tx_bytes_phy", tx_bytes + self.tx_pause * 64),
            ("rx_bytes_phy", rx_bytes + self.rx_pause * 64),
            ("tx_multicast_phy", self.kernel_tx_packets - self.kernel_tx_packets / 3),
            ("tx_broadcast_phy", 0),
            ("rx_multicast_phy", self.kernel_rx_packets - self.kernel_rx_packets / 3),
            ("rx_broadcast_phy", 0),
            ("rx_in_range_len_errors_phy", 0),
            ("rx_out_of_range_len_phy", 0),
            ("rx_oversize_pkts_phy", 0),
            ("rx_symbol_err_phy", 0),
            ("tx_mac_control_phy", self.tx_pause),
            ("rx_mac_control_phy", self.rx_pause),
            ("rx_unsupported_op_phy", 0),
            ("rx_pause_ctrl_phy", 0),
            ("tx_pause_ctrl_phy", 0),
            ("rx_discards_phy", self.rx_discards),
            ("tx_discards_phy", 0),
            ("tx_errors_phy", 0),
            ("rx_undersize_pkts_phy", 0),
            ("rx_fragments_phy", 0),
            ("rx_jabbers_phy", 0),
        ] {
            put(name, value);
        }
        // Frame sizes: the RDMA data at the MTU, their ACKs and CNPs small.
        let data_frame = u64::from(mtu) + FRAME_OVERHEAD;
        let small = self.kernel_rx_packets + self.rp_cnp_handled + self.rp_cnp_ignored + self.rx_pause;
        for (name, low, high) in [
            ("rx_64_bytes_phy", 0, 64),
            ("rx_65_to_127_bytes_phy", 65, 127),
            ("rx_128_to_255_bytes_phy", 128, 255),
            ("rx_256_to_511_bytes_phy", 256, 511),
            ("rx_512_to_1023_bytes_phy", 512, 1023),
            ("rx_1024_to_1518_bytes_phy", 1024, 1518),
            ("rx_1519_to_2047_bytes_phy", 1519, 2047),
            ("rx_2048_to_4095_bytes_phy", 2048, 4095),
            ("rx_4096_to_8191_bytes_phy", 4096, 8191),
            ("rx_8192_to_10239_bytes_phy", 8192, 10239),
        ] {
            let data = if (low..=high).contains(&data_frame) { self.rdma_rx_packets } else { 0 };
            put(name, data + if high == 127 { small } else { 0 });
        }
        for (name, value) in [
            ("link_down_events_phy", self.link_down_events),
            ("rx_pcs_symbol_err_phy", self.symbol_errors),
            ("rx_corrected_bits_phy", self.corrected_bits),
            ("rx_err_lane_0_phy", self.corrected_bits / 4),
            ("rx_err_lane_1_phy", self.corrected_bits / 4),
            ("rx_err_lane_2_phy", self.corrected_bits / 4),
            ("rx_err_lane_3_phy", self.corrected_bits - self.corrected_bits / 4 * 3),
            ("rx_buffer_passed_thres_phy", self.tx_pause),
            ("rx_pci_signal_integrity", 0),
            ("tx_pci_signal_integrity", 0),
            ("outbound_pci_buffer_overflow", 0),
            ("outbound_pci_stalled_rd", 0),
            ("outbound_pci_stalled_wr", 0),
            ("outbound_pci_stalled_rd_events", 0),
            ("outbound_pci_stalled_wr_events", 0),
        ] {
            put(name, value);
        }
        // Per priority: the RDMA traffic on the RoCE priority, the kernel's on 0.
        let roce = usize::from(ROCE_PRIORITY);
        for prio in 0..8 {
            let (rx_b, rx_p, tx_b, tx_p, discards) = match prio {
                0 => (kernel_rx_bytes, self.kernel_rx_packets, kernel_tx_bytes, self.kernel_tx_packets, 0),
                p if p == roce => (rx_bytes - kernel_rx_bytes, self.rdma_rx_packets, tx_bytes - kernel_tx_bytes, self.rdma_tx_packets, self.rx_discards),
                _ => (0, 0, 0, 0, 0),
            };
            put(&format!("rx_prio{prio}_bytes"), rx_b);
            put(&format!("rx_prio{prio}_packets"), rx_p);
            put(&format!("rx_prio{prio}_discards"), discards);
            put(&format!("tx_prio{prio}_bytes"), tx_b);
            put(&format!("tx_prio{prio}_packets"), tx_p);
        }
        // Pause counters only for the priorities PFC is on for.
        for prio in (0..8).filter(|p| pfc_enabled & (1 << p) != 0) {
            let on_roce = prio == roce;
            let pick = |value: u64| if on_roce { value } else { 0 };
            put(&format!("rx_prio{prio}_pause"), pick(self.rx_pause));
            put(&format!("rx_prio{prio}_pause_duration"), pick(self.rx_pause_duration));
            put(&format!("tx_prio{prio}_pause"), pick(self.tx_pause));
            put(&format!("tx_prio{prio}_pause_duration"), pick(self.tx_pause_duration));
            put(&format!("rx_prio{prio}_pause_transition"), pick(self.rx_pause / 2));
        }
        for name in
            ["tx_pause_storm_warning_events", "tx_pause_storm_error_events", "module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted"]
        {
            put(name, 0);
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::roce_session;

    const ECN_OFF: &str = "[[faults]]\nkind = \"hca-ecn-off\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\n";

    fn average_busbw(log: &str) -> f64 {
        log.lines().find_map(|line| line.strip_prefix("# Avg bus bandwidth    : ")).and_then(|value| value.trim().parse().ok()).unwrap_or(0.0)
    }

    #[test]
    fn a_port_without_dcqcn_sends_no_cnp_ignores_those_it_gets_and_is_paused_often() {
        let mut shell = roce_session(ECN_OFF);
        let (bad, good) = (shell.cluster.nodes[0].hcas[2].netdev.clone(), shell.cluster.nodes[0].hcas[1].netdev.clone());
        assert_eq!(shell.run(&format!("cat /sys/class/net/{bad}/ecn/roce_np/enable/3 /sys/class/net/{bad}/ecn/roce_rp/enable/3")).stdout(), "0\n0\n");
        assert_eq!(shell.run(&format!("cat /sys/class/net/{good}/ecn/roce_rp/enable/3")).stdout(), "1\n");
        // Every slot of the GID table is there; the empty ones read as zeros.
        assert_eq!(shell.run("ls /sys/class/infiniband/mlx5_0/ports/1/gids | wc -l").stdout(), "255\n");
        assert_eq!(shell.run("cat /sys/class/infiniband/mlx5_0/ports/1/gids/254").stdout(), "0000:0000:0000:0000:0000:0000:0000:0000\n");
        shell.run("NCCL_DEBUG=WARN srun -N2 --ntasks-per-node=8 all_reduce_perf -b 1G -e 8G -f 2 -g 1 > /dev/null");
        let counter = |shell: &mut crate::testing::Shell, netdev: &str, name: &str| -> u64 {
            let hca = shell.cluster.nodes[0].hcas.iter().find(|hca| hca.netdev == netdev).unwrap().name.clone();
            shell.run(&format!("cat /sys/class/infiniband/{hca}/ports/1/hw_counters/{name}")).stdout().trim().parse().unwrap()
        };
        assert_eq!(counter(&mut shell, &bad, "np_cnp_sent"), 0);
        assert_eq!(counter(&mut shell, &bad, "rp_cnp_handled"), 0);
        assert!(counter(&mut shell, &bad, "rp_cnp_ignored") > 0);
        assert!(counter(&mut shell, &good, "np_cnp_sent") > 0 && counter(&mut shell, &good, "rp_cnp_ignored") == 0);
        let pauses = |shell: &mut crate::testing::Shell, netdev: &str| -> u64 {
            let stats = shell.run(&format!("ethtool -S {netdev}")).stdout();
            stats.lines().find_map(|line| line.strip_prefix("     rx_prio3_pause: ")).unwrap().parse().unwrap()
        };
        assert!(pauses(&mut shell, &bad) > 5 * pauses(&mut shell, &good));
    }

    #[test]
    fn collectives_lose_the_paused_time_single_flows_do_not_and_the_sysfs_switch_repairs_it() {
        let mut shell = roce_session(ECN_OFF);
        let healthy = average_busbw(&roce_session("").run("NCCL_DEBUG=WARN srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8G -e 8G -g 1").stdout());
        let slowed = average_busbw(&shell.run("NCCL_DEBUG=WARN srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8G -e 8G -g 1").stdout());
        let share = slowed / healthy;
        assert!((0.8..0.92).contains(&share), "{slowed} of {healthy}");
        let netdev = shell.cluster.nodes[0].hcas[2].netdev.clone();
        let refused = shell.run(&format!("echo 1 > /sys/class/net/{netdev}/ecn/roce_rp/enable/3"));
        assert!(refused.stderr().contains("Permission denied"), "{}", refused.stderr());
        assert!(shell.run(&format!("echo 2 | sudo tee /sys/class/net/{netdev}/ecn/roce_np/enable/3")).stderr().contains("Invalid argument"));
        for point in ["roce_np", "roce_rp"] {
            shell.run(&format!("echo 1 | sudo tee /sys/class/net/{netdev}/ecn/{point}/enable/3"));
        }
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired));
        let repaired = average_busbw(&shell.run("NCCL_DEBUG=WARN srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8G -e 8G -g 1").stdout());
        assert!((repaired / healthy - 1.0).abs() < 0.03, "{repaired} of {healthy}");
    }
}
