//! The fabric engineer's sweeps tell the truth about every shipped lab's
//! fabric faults: on InfiniBand, `ibdiagnet` and `ibqueryerrors` name each
//! slow, narrow or erroring port (an erroring cable at both ends) and miss
//! each dead one from their counts;
//! on RoCE, `ip link`, `ethtool -S` and the ECN switches show the port
//! whose MTU, PFC or DCQCN is wrong. Each lab is checked at one variant,
//! from its first node, as its trainee starts it.

use std::path::PathBuf;

use clusterlab_engine::model::fault::Fault;
use clusterlab_engine::{load, Session};

fn labs() -> Vec<(String, clusterlab_engine::Lab)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../labs");
    let mut labs = Vec::new();
    for entry in std::fs::read_dir(dir).expect("labs/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let lab = load(&std::fs::read_to_string(&path).expect("readable lab")).expect("the lab loads");
            labs.push((path.display().to_string(), lab));
        }
    }
    labs
}

#[test]
fn every_fabric_fault_shows_in_the_sweeps() {
    let mut checked = 0;
    for (path, lab) in labs() {
        let cluster = lab.instantiate(1);
        let faults: Vec<Fault> = cluster.injected.iter().map(|injected| injected.fault.clone()).collect();
        let host = cluster.nodes[0].hostname.clone();
        let mut shell = Session::new(cluster, &host);
        let netdev = |shell: &Session, node: &str, hca: &str| {
            shell.cluster.node(node).and_then(|n| n.hcas.iter().find(|h| h.name == hca)).map(|h| h.netdev.clone()).unwrap_or_default()
        };
        for fault in faults {
            let roce = shell.cluster.fabric == clusterlab_engine::model::fabric::LinkLayer::Ethernet;
            match &fault {
                Fault::HcaLinkDegraded { node, hca, .. } if !roce => {
                    let sweep = shell.run("sudo ibdiagnet").stdout();
                    assert!(sweep.contains(&format!("<-->{node}/{hca}/P1 - Unexpected")), "{path}: ibdiagnet misses the slow link of {node} {hca}");
                }
                Fault::HcaSymbolErrors { node, hca, .. } => {
                    let sweep = shell.run("sudo ibdiagnet -P all=1").stdout();
                    assert!(sweep.contains(&format!(" {node}/{hca}/P1\n        Performance Monitor counter")), "{path}: ibdiagnet -P misses {node} {hca}");
                    let errors = shell.run("sudo ibqueryerrors").stdout();
                    assert!(errors.contains(&format!("\"{node} {hca}\"")), "{path}: ibqueryerrors misses {node} {hca}: {errors}");
                    // The leaf port across the cable counts errors too.
                    let rail = shell.cluster.node(node).and_then(|n| n.hcas.iter().position(|h| h.name == *hca)).expect("the HCA");
                    assert!(errors.contains(&format!(";leaf-rail{rail}:")), "{path}: ibqueryerrors misses the leaf of {node} {hca}: {errors}");
                }
                Fault::HcaPortDown { node, hca, .. } if !roce => {
                    let cas = shell.run("sudo ibnetdiscover -H").stdout();
                    assert!(!cas.contains(&format!("\"{node} {hca}\"")), "{path}: the sweep finds the dead port {node} {hca}");
                }
                Fault::HcaMtu { node, hca, .. } if roce => {
                    let netdev = netdev(&shell, node, hca);
                    let link = shell.run(&format!("ssh {node} ip link show {netdev}")).stdout();
                    assert!(!link.contains(" mtu 9000 "), "{path}: ip link shows {node} {netdev} at full MTU: {link}");
                }
                Fault::HcaPfcOff { node, hca } => {
                    let netdev = netdev(&shell, node, hca);
                    let stats = shell.run(&format!("ssh {node} ethtool -S {netdev}")).stdout();
                    assert!(!stats.contains("prio3_pause"), "{path}: ethtool -S shows PFC pauses on {node} {netdev}");
                }
                Fault::HcaEcnOff { node, hca } => {
                    let netdev = netdev(&shell, node, hca);
                    let ecn = shell.run(&format!("ssh {node} cat /sys/class/net/{netdev}/ecn/roce_rp/enable/3")).stdout();
                    assert_eq!(ecn, "0\n", "{path}: DCQCN reads on for {node} {netdev}");
                }
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} fabric faults among the shipped labs");
}
