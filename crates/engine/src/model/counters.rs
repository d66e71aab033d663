//! The PMA counters at both ends of a host's cable: the HCA port's, and the
//! leaf switch port's across from it. The model keeps only the HCA side's
//! base counts (set by faults, perftest traffic and cable work); the leaf
//! port's follow from them, so a bad cable shows at both ends, as a fabric
//! sweep finds it, and each end clears on its own (`perfquery -R` on the
//! HCA leaves the switch's evidence, and a reboot drops the link once more
//! as the switch counts it).

use super::fabric::{Port, PortCounters};
use super::node::Node;
use super::time::EpochSeconds;
use super::Cluster;
use crate::rng::Rng;

impl PortCounters {
    /// Field by field, stopping at the maximum.
    pub fn saturating_add(self, other: PortCounters) -> PortCounters {
        self.zip(other, u64::saturating_add)
    }

    /// Field by field, stopping at 0.
    pub fn saturating_sub(self, other: PortCounters) -> PortCounters {
        self.zip(other, u64::saturating_sub)
    }

    /// The same link seen from its other end: what one sends the other receives.
    pub fn from_the_far_end(self) -> PortCounters {
        PortCounters { xmit_data: self.rcv_data, rcv_data: self.xmit_data, xmit_pkts: self.rcv_pkts, rcv_pkts: self.xmit_pkts, ..self }
    }

    fn zip(self, other: PortCounters, op: fn(u64, u64) -> u64) -> PortCounters {
        PortCounters {
            symbol_errors: op(self.symbol_errors, other.symbol_errors),
            link_error_recovery: op(self.link_error_recovery, other.link_error_recovery),
            link_downed: op(self.link_downed, other.link_downed),
            rcv_errors: op(self.rcv_errors, other.rcv_errors),
            rcv_remote_physical_errors: op(self.rcv_remote_physical_errors, other.rcv_remote_physical_errors),
            xmit_discards: op(self.xmit_discards, other.xmit_discards),
            xmit_wait: op(self.xmit_wait, other.xmit_wait),
            xmit_data: op(self.xmit_data, other.xmit_data),
            rcv_data: op(self.rcv_data, other.rcv_data),
            xmit_pkts: op(self.xmit_pkts, other.xmit_pkts),
            rcv_pkts: op(self.rcv_pkts, other.rcv_pkts),
        }
    }
}

impl Cluster {
    /// The HCA port's counters now: its base counts, the training jobs'
    /// traffic since the counters were last cleared, and the symbol errors
    /// a marginal link keeps adding (`symbol_errors_per_hour`, one link
    /// error recovery per 500).
    pub fn hca_port_counters(&self, port: &Port) -> PortCounters {
        let mut counters = port.counters;
        let (cleared_at, job_before) = port.counters_reset.unwrap_or((self.started_at, 0));
        let job = self.job_traffic_bytes(port.guid).saturating_sub(job_before);
        counters = counters.saturating_add(job_traffic(port, job));
        counters.saturating_add(accrued(port, self.started_at.max(cleared_at), self.now))
    }

    /// The counters of the leaf switch port cabled to HCA `hca` of `node`,
    /// now: since the switch last cleared them.
    pub fn leaf_port_counters(&self, node: &Node, hca: usize) -> PortCounters {
        let Some(port) = node.hcas.get(hca).map(|h| &h.port) else { return PortCounters::default() };
        let lifetime = self.leaf_port_lifetime(node, port, self.now);
        lifetime.saturating_sub(port.leaf_counters_reset.unwrap_or_default())
    }

    /// Everything the leaf port has counted by `at`. Its receiver sees the
    /// HCA's transmit lanes: a marginal cable errs at both ends, a seeded
    /// share as often at the switch's. Each boot of the node takes the
    /// link down once.
    pub(crate) fn leaf_port_lifetime(&self, node: &Node, port: &Port, at: EpochSeconds) -> PortCounters {
        let hca_side = port
            .counters
            .saturating_add(port.cleared)
            .saturating_add(job_traffic(port, self.job_traffic_bytes_until(port.guid, at)))
            .saturating_add(accrued(port, self.started_at, at));
        let permille = Rng::derive(self.seed, &["leaf receiver", &node.hostname, &port.guid.to_string()]).range_u64(300, 1_000);
        let share = |count: u64| count.saturating_mul(permille) / 1_000;
        let boots = self.history.iter().filter(|(when, change)| *when <= at && change.is_boot_of(&node.hostname)).count() as u64;
        let mut leaf = hca_side.from_the_far_end();
        leaf.symbol_errors = share(hca_side.symbol_errors);
        leaf.link_error_recovery = share(hca_side.link_error_recovery);
        leaf.rcv_errors = share(hca_side.rcv_errors);
        leaf.link_downed = hca_side.link_downed.saturating_add(boots);
        leaf
    }
}

/// A job's `bytes` through the port: data counters in 4-octet words, as the
/// MADs count them, and a packet per active MTU.
fn job_traffic(port: &Port, bytes: u64) -> PortCounters {
    let mtu = u64::from(port.active_mtu.max(256));
    PortCounters { xmit_data: bytes / 4, rcv_data: bytes / 4, xmit_pkts: bytes / mtu, rcv_pkts: bytes / mtu, ..PortCounters::default() }
}

/// The symbol errors (and recoveries) a marginal link adds from `from` to `to`.
fn accrued(port: &Port, from: EpochSeconds, to: EpochSeconds) -> PortCounters {
    if port.symbol_errors_per_hour == 0 {
        return PortCounters::default();
    }
    let elapsed = (to - from).max(0) as u64;
    let added = port.symbol_errors_per_hour.saturating_mul(elapsed) / 3600;
    PortCounters { symbol_errors: added, link_error_recovery: added / 500, ..PortCounters::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_far_end_swaps_directions_and_arithmetic_saturates() {
        let a = PortCounters { xmit_data: 7, rcv_pkts: 2, symbol_errors: u64::MAX, ..PortCounters::default() };
        let far = a.from_the_far_end();
        assert_eq!((far.rcv_data, far.xmit_pkts, far.xmit_data), (7, 2, 0));
        assert_eq!(a.saturating_add(a).symbol_errors, u64::MAX);
        assert_eq!(PortCounters::default().saturating_sub(a), PortCounters::default());
    }
}
