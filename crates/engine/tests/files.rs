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
    assert_eq!(
        shell.run("echo /sys/class/infiniband/mlx5_[0-2]").stdout(),
        "/sys/class/infiniband/mlx5_0 /sys/class/infiniband/mlx5_1 /sys/class/infiniband/mlx5_2\n"
    );
    assert_eq!(shell.run("ls -d /proc/driver/nvidia/gpus/*/information | wc -l").stdout(), "8\n");
    // No match: the word stays as typed; quoted patterns are not expanded.
    assert_eq!(shell.run("echo /nope/* '/sys/class/*'").stdout(), "/nope/* /sys/class/*\n");
    shell.run("echo a > one.txt; echo b > two.txt; echo c > .hidden");
    assert_eq!(shell.run("echo *.txt; cat *.txt").stdout(), "one.txt two.txt\na\nb\n");
    assert_eq!(shell.run("echo ~/*.txt").stdout(), "/home/user/one.txt /home/user/two.txt\n");
}

#[test]
fn port_counters_move_with_traffic_and_agree_with_perfquery() {
    let lab = load(include_str!("../../../labs/first-look.toml")).expect("the lab loads");
    let mut shell = Session::new(lab.instantiate(1), lab.first_host());
    let counters = "/sys/class/infiniband/mlx5_0/ports/1/counters";
    let read = |shell: &mut Session, host: &str, name: &str| -> u64 {
        shell.run(&format!("ssh {host} cat {counters}/{name}")).stdout().trim().parse().expect("a number")
    };
    assert_eq!(read(&mut shell, "gpu-001", "port_xmit_data"), 0);
    shell.run("ssh gpu-002 ib_write_bw -d mlx5_0 &");
    assert_eq!(shell.run("ib_write_bw -d mlx5_0 -s 65536 -n 1000 gpu-002").status, 0);
    // 1,000 writes of 64 KiB, counted in 4-octet words, sent here and received there.
    assert_eq!(read(&mut shell, "gpu-001", "port_xmit_data"), 1000 * 65536 / 4);
    assert_eq!(read(&mut shell, "gpu-002", "port_rcv_data"), 1000 * 65536 / 4);
    assert_eq!(read(&mut shell, "gpu-002", "port_xmit_data"), 0);
    assert_eq!(read(&mut shell, "gpu-001", "port_xmit_packets"), 1000 * 65536 / 4096);
    let perfquery = shell.run("sudo perfquery -x -C mlx5_0 | grep PortXmitData").stdout();
    assert!(perfquery.ends_with(&format!(".{}\n", 1000 * 65536 / 4)), "{perfquery}");
    // A second run adds to the same counters, and the lab keeps one sum per port.
    shell.run("ssh gpu-002 ib_write_bw -d mlx5_0 &");
    shell.run("ib_write_bw -d mlx5_0 -s 65536 -n 1000 gpu-002");
    assert_eq!(read(&mut shell, "gpu-001", "port_xmit_data"), 2 * 1000 * 65536 / 4);
    let traffic = shell.changes().iter().filter(|(_, change)| format!("{change:?}").starts_with("Traffic")).count();
    assert_eq!(traffic, 2);
    // A multi-node NCCL job moves data through every rail.
    shell.run("srun -N 2 all_reduce_perf -b 1M -e 1M");
    for hca in 0..8 {
        let moved: u64 = shell.run(&format!("cat /sys/class/infiniband/mlx5_{hca}/ports/1/counters/port_rcv_data")).stdout().trim().parse().unwrap();
        assert!(moved > 0, "mlx5_{hca}");
    }
}

#[test]
fn network_and_configuration_files_show_the_model() {
    let lab = load(include_str!("../../../labs/slow-rail.toml")).expect("the lab loads");
    let mut shell = Session::new(lab.instantiate(0), lab.first_host());
    let links = shell.run("ip -br link").stdout();
    for line in links.lines() {
        let (name, state) = line.split_once(' ').map(|(n, rest)| (n, rest.trim_start())).unwrap();
        let operstate = shell.run(&format!("cat /sys/class/net/{name}/operstate")).stdout();
        let expected = if state.starts_with("UNKNOWN") {
            "unknown"
        } else if state.starts_with("UP") {
            "up"
        } else {
            "down"
        };
        assert_eq!(operstate.trim(), expected, "{line}");
    }
    let conf = shell.run("grep ^NodeName /etc/slurm/slurm.conf").stdout();
    assert!(conf.starts_with("NodeName=gpu-[001-002] CPUs="), "{conf}");
    let gres = shell.run("scontrol show node gpu-001 | grep -o 'Gres=[^ ]*'").stdout();
    assert!(conf.contains(gres.trim()), "{conf} {gres}");
    assert!(shell.run("cat /etc/nccl.conf").stdout().contains("NCCL_SOCKET_IFNAME="));
    // The kernel's messages reach syslog with their uptime stamps, day space-padded.
    let syslog = shell.run("grep -m1 'NVRM: loading' /var/log/syslog").stdout();
    let dmesg = shell.run("sudo dmesg | grep -m1 'NVRM: loading'").stdout();
    assert!(syslog.ends_with(&format!("gpu-001 kernel: {dmesg}")), "{syslog} / {dmesg}");
    let journal = shell.run("journalctl -k | grep -m1 'NVRM: loading'").stdout();
    let (day, padded) = (&journal[4..6], &syslog[4..6]);
    let expected = match day.strip_prefix('0') {
        Some(digit) => format!(" {digit}"),
        None => day.to_string(),
    };
    assert_eq!((&journal[..4], padded), (&syslog[..4], expected.as_str()), "{syslog} / {journal}");
}

#[test]
fn nccl_reads_the_users_conf_file_after_the_environment() {
    let lab = load(include_str!("../../../labs/first-look.toml")).expect("the lab loads");
    let mut shell = Session::new(lab.instantiate(1), lab.first_host());
    let using =
        |shell: &mut Session, line: &str| -> String { shell.run(line).stdout().lines().find(|l| l.contains("NET/IB : Using")).unwrap_or_default().to_string() };
    let all = using(&mut shell, "NCCL_DEBUG=INFO srun -N 2 all_reduce_perf -b 8 -e 8");
    assert!(all.contains("mlx5_7"), "{all}");
    shell.run("echo NCCL_IB_HCA=mlx5_0 > ~/.nccl.conf");
    let one = using(&mut shell, "NCCL_DEBUG=INFO srun -N 2 all_reduce_perf -b 8 -e 8");
    assert!(one.contains("mlx5_0") && !one.contains("mlx5_1"), "{one}");
    let env_wins = using(&mut shell, "NCCL_IB_HCA=mlx5_1 NCCL_DEBUG=INFO srun -N 2 all_reduce_perf -b 8 -e 8");
    assert!(env_wins.contains("mlx5_1") && !env_wins.contains("mlx5_0"), "{env_wins}");
}
