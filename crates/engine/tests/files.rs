//! The node's files against the tools that show the same facts: a port's
//! sysfs `rate` says what `ibstat` says, before and after a fault's repair,
//! and globbing walks the generated tree as bash would.

use clusterlab_engine::{load, Session};

/// Every port's rate on `node` as (sysfs, ibstat), in Gb/s.
fn rates(shell: &mut Session, node: &str) -> Vec<(String, String)> {
    let sysfs = shell.run(&format!("ssh {node} 'for f in /sys/class/infiniband/mlx5_*/ports/1/rate; do cat $f; done'")).stdout();
    let ibstat = shell.run(&format!("ssh {node} ibstat | grep Rate")).stdout();
    let sysfs = sysfs.lines().map(|line| line.split(' ').next().unwrap_or("").to_string());
    let ibstat = ibstat.lines().map(|line| line.trim().trim_start_matches("Rate: ").to_string());
    sysfs.zip(ibstat).collect()
}

#[test]
fn a_ports_rate_file_follows_ibstat_through_a_fault_and_its_repair() {
    let lab = load(include_str!("../../../labs/slow-rail.toml")).expect("the lab loads");
    for seed in 0..3 {
        let variant = lab.variant(seed);
        let (node, hca) = (&variant.values["bad_node"], &variant.values["bad_hca"]);
        let mut shell = Session::new(lab.instantiate(seed), lab.first_host());
        let before = rates(&mut shell, node);
        assert_eq!(before.len(), 8);
        assert!(before.iter().all(|(sysfs, ibstat)| sysfs == ibstat), "{before:?}");
        let index: usize = hca.trim_start_matches("mlx5_").parse().unwrap();
        assert_eq!(before[index].0, "200");
        let state = shell.run(&format!("ssh {node} cat /sys/class/infiniband/{hca}/ports/1/state /sys/class/infiniband/{hca}/ports/1/phys_state")).stdout();
        assert_eq!(state, "4: ACTIVE\n5: LinkUp\n");

        shell.run(&format!("sudo scontrol update NodeName={node} State=DRAIN Reason=rail"));
        shell.run(&format!("dctech reseat-cable {node} {hca}"));
        let after = rates(&mut shell, node);
        assert!(after.iter().all(|(sysfs, ibstat)| sysfs == ibstat && sysfs == "400"), "{after:?}");
    }
}

#[test]
fn globs_match_the_generated_tree() {
    let lab = load(include_str!("../../../labs/first-look.toml")).expect("the lab loads");
    let mut shell = Session::new(lab.instantiate(1), lab.first_host());
    assert_eq!(shell.run("echo /sys/class/infiniband/mlx5_[0-2]").stdout(), "/sys/class/infiniband/mlx5_0 /sys/class/infiniband/mlx5_1 /sys/class/infiniband/mlx5_2\n");
    assert_eq!(shell.run("ls -d /proc/driver/nvidia/gpus/*/information | wc -l").stdout(), "8\n");
    // No match: the word stays as typed; quoted patterns are not expanded.
    assert_eq!(shell.run("echo /nope/* '/sys/class/*'").stdout(), "/nope/* /sys/class/*\n");
    shell.run("echo a > one.txt; echo b > two.txt; echo c > .hidden");
    assert_eq!(shell.run("echo *.txt; cat *.txt").stdout(), "one.txt two.txt\na\nb\n");
    assert_eq!(shell.run("echo ~/*.txt").stdout(), "/home/user/one.txt /home/user/two.txt\n");
}
