//! The node's deterministic network identities, part of the model so that
//! every view agrees (ip, ping, kubectl, /etc/hosts, NCCL's and the job's logs): front-end and rail addresses, MAC addresses.

use crate::model::Node;
use crate::rng::stable_hash;

/// A number that names the node: its hostname's trailing number, else a hash.
fn host_number(hostname: &str) -> u64 {
    let digits = hostname.len() - hostname.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    hostname[hostname.len() - digits..].parse::<u64>().ok().filter(|_| digits <= 6).unwrap_or_else(|| stable_hash(hostname.as_bytes()) % 60_000)
}

/// The front-end (management) address, `10.1.X.Y`, unique per node number.
pub fn frontend_ip(hostname: &str) -> String {
    let n = host_number(hostname);
    format!("10.1.{}.{}", n / 250 % 256, n % 250 + 1)
}

/// The node's BMC on the out-of-band network, `10.2.X.Y`, named `NODE-bmc`.
pub fn bmc_ip(hostname: &str) -> String {
    let n = host_number(hostname);
    format!("10.2.{}.{}", n / 250 % 256, n % 250 + 1)
}

/// The BMC's host name for `hostname`.
pub fn bmc_name(hostname: &str) -> String {
    format!("{hostname}-bmc")
}

/// The front-end NIC, as `ip` names it.
pub const FRONTEND_NIC: &str = "enp170s0f0np0";

/// The address of RoCE netdev `rail` (one subnet per rail), as its four
/// bytes: a RoCE GID carries them.
pub fn rail_ipv4(hostname: &str, rail: usize) -> [u8; 4] {
    let n = host_number(hostname);
    [10, (100 + rail) as u8, (n / 250 % 256) as u8, (n % 250 + 1) as u8]
}

/// The address of RoCE netdev `rail`, dotted.
pub fn rail_ip(hostname: &str, rail: usize) -> String {
    let [a, b, c, d] = rail_ipv4(hostname, rail);
    format!("{a}.{b}.{c}.{d}")
}

/// A MAC address from a seed, with the vendor bytes given.
pub fn mac(oui: u64, low: u64) -> String {
    let value = (oui << 24) | (low & 0xff_ffff);
    let bytes: Vec<String> = (0..6).rev().map(|i| format!("{:02x}", (value >> (i * 8)) & 0xff)).collect();
    bytes.join(":")
}

/// The node's front-end MAC.
pub fn frontend_mac(node: &Node) -> String {
    mac(0x94_6d_ae, stable_hash(node.hostname.as_bytes()))
}
