//! The cluster as one system: what changes together does (issue "The
//! cluster behaves as one system"). Each test is one bullet, with the real
//! message or layout it expects.

use clusterlab_engine::{load, Session};

fn lab(source: &str) -> Session {
    let lab = load(source).expect("the lab loads");
    let host = lab.first_host().to_string();
    Session::new(lab.instantiate(0), &host)
}

const TWO_NODES: &str = "[lab]\nid = \"t\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n";

#[test]
fn time_flows_through_a_command_line() {
    let mut shell = lab(TWO_NODES);
    let out = shell.run("date +%s; sleep 3600; date +%s").stdout();
    let times: Vec<i64> = out.lines().map(|line| line.parse().unwrap()).collect();
    assert_eq!(times[1] - times[0], 3600, "{out}");
    // A nested line starts when its caller does.
    let out = shell.run("sleep 60; ssh gpu-002 date +%s; date +%s").stdout();
    let times: Vec<i64> = out.lines().map(|line| line.parse().unwrap()).collect();
    assert_eq!(times[0], times[1]);
    // The next line starts where this one ended.
    let next: i64 = shell.run("date +%s").stdout().trim().parse().unwrap();
    assert_eq!(next, times[1]);
}

#[test]
fn a_marginal_links_errors_rise_within_a_line() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"hca-symbol-errors\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\ncount = 2400\n");
    let mut shell = lab(&source);
    // 2,400 errors a day ago: 100 an hour, 100 more after `sleep 3600`.
    let out = shell.run("sudo perfquery -C mlx5_2 | grep SymbolErrorCounter; sleep 3600; sudo perfquery -C mlx5_2 | grep SymbolErrorCounter").stdout();
    let counts: Vec<u64> = out.lines().map(|line| line.rsplit('.').next().unwrap().parse().unwrap()).collect();
    assert_eq!(counts[1] - counts[0], 100, "{out}");
    let sysfs = shell.run("cat /sys/class/infiniband/mlx5_2/ports/1/counters/symbol_error").stdout();
    assert_eq!(sysfs.trim().parse::<u64>().unwrap(), counts[1]);
}

#[test]
fn traffic_shows_in_perfquery_deltas_on_the_ports_used() {
    let mut shell = lab(TWO_NODES);
    let data = |shell: &mut Session, host: &str, hca: &str| -> u64 {
        let out = shell.run(&format!("ssh {host} sudo perfquery -x -C {hca} | grep PortXmitData")).stdout();
        out.trim().rsplit('.').next().unwrap().parse().unwrap()
    };
    let before = (data(&mut shell, "gpu-001", "mlx5_3"), data(&mut shell, "gpu-001", "mlx5_4"));
    shell.run("ssh gpu-002 ib_write_bw -d mlx5_3 &");
    shell.run("ib_write_bw -d mlx5_3 -s 1048576 -n 100 gpu-002");
    let after = (data(&mut shell, "gpu-001", "mlx5_3"), data(&mut shell, "gpu-001", "mlx5_4"));
    // PortXmitData counts 4-octet words: 100 MiB are 26,214,400 of them.
    assert_eq!(after.0 - before.0, 100 * 1048576 / 4);
    assert_eq!(after.1, before.1, "a port the run did not use");
}

#[test]
fn privileged_actions_need_sudo() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-001\"\ngpu = 3\nxid = 119\n");
    let mut shell = lab(&source);
    let reset = shell.run("nvidia-smi -r -i 3");
    assert_eq!(reset.status, 4, "{}", reset.text());
    assert!(reset.stdout().ends_with(": Insufficient Permissions\n"));
    let restart = shell.run("systemctl restart nvidia-fabricmanager");
    assert_eq!(restart.status, 1);
    assert!(restart.stderr().starts_with("Failed to restart nvidia-fabricmanager.service: Interactive authentication required.\n"));
    let drain = shell.run("scontrol update nodename=gpu-001 state=drain reason=x");
    assert_eq!((drain.stderr().as_str(), drain.status), ("slurm_update error: Access/permission denied\n", 1));
    assert!(shell.changes().is_empty(), "nothing changed: {:?}", shell.changes());
    // With sudo each succeeds, and the drain is recorded as root's.
    assert_eq!(shell.run("sudo systemctl stop dcgm-exporter nvidia-dcgm").status, 0);
    assert_eq!(shell.run("sudo nvidia-smi -r -i 3").status, 0);
    assert_eq!(shell.run("sudo scontrol update nodename=gpu-001 state=drain reason=x").status, 0);
    assert!(shell.run("sinfo -R").stdout().contains(" root "), "{}", shell.run("sinfo -R").stdout());
    // Who runs: the shell's EUID is read-only; sudo's variables are sudo's.
    assert_eq!(shell.run("echo $EUID; sudo printenv USER SUDO_USER HOME").stdout(), "1000\nroot\nuser\n/root\n");
    let spoof = shell.run("EUID=0 scontrol update nodename=gpu-002 state=drain reason=x");
    assert_eq!((spoof.stderr().as_str(), spoof.status), ("-bash: EUID: readonly variable\n", 1));
    assert_eq!(shell.run("sudo bash -c 'echo $EUID'").stdout(), "0\n");
    assert!(!shell.run("sudo env").stdout().contains("EUID"));
}

#[test]
fn the_cuda_version_follows_the_driver() {
    for (driver, cuda) in [("525.60.13", "12.0"), ("535.183.01", "12.2"), ("550.54.15", "12.4"), ("570.158.01", "12.8"), ("580.95.05", "13.0")] {
        let source = TWO_NODES.replace("nodes = [", &format!("driver = \"{driver}\"\nnodes = ["));
        let mut shell = lab(&source);
        let header = shell.run("nvidia-smi | sed -n 3p").stdout();
        assert!(header.contains(&format!("Driver Version: {driver}")) && header.contains(&format!("CUDA Version: {cuda} ")), "{header}");
    }
}

#[test]
fn a_lost_gpu_leaves_a_gap_in_every_gpu_view() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-001\"\ngpu = 3\n");
    let mut shell = lab(&source);
    let list = shell.run("nvidia-smi -L").stdout();
    let indices: Vec<&str> = list.lines().map(|line| line.split(':').next().unwrap()).collect();
    assert_eq!(indices, ["GPU 0", "GPU 1", "GPU 2", "GPU 4", "GPU 5", "GPU 6", "GPU 7"]);
    let topo = shell.run("nvidia-smi topo -m").stdout();
    let header: Vec<&str> = topo.lines().next().unwrap().split('\t').filter(|c| c.starts_with("GPU") && c.len() <= 4).collect();
    assert_eq!(header, ["GPU0", "GPU1", "GPU2", "GPU4", "GPU5", "GPU6", "GPU7"]);
    assert!(topo.lines().any(|line| line.starts_with("GPU4\t")), "{topo}");
}

#[test]
fn kubernetes_and_slurm_are_separate_systems() {
    let mut shell = lab(TWO_NODES);
    assert_eq!(shell.run("kubectl cordon gpu-001").stdout(), "node/gpu-001 cordoned\n");
    assert_eq!(shell.run("sinfo -R").stdout().lines().count(), 1, "Slurm keeps the node");
    shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=ib");
    let nodes = shell.run("kubectl get nodes").stdout();
    assert!(nodes.lines().any(|l| l.starts_with("gpu-002 ") && !l.contains("SchedulingDisabled")), "{nodes}");
    // A Slurm resume does not uncordon, and an uncordon does not resume.
    shell.run("sudo scontrol update NodeName=gpu-002 State=RESUME");
    assert!(shell.run("kubectl get nodes").stdout().contains("gpu-001   Ready,SchedulingDisabled"));
    shell.run("sudo scontrol update NodeName=gpu-001 State=DRAIN Reason=both");
    shell.run("kubectl uncordon gpu-001");
    assert!(shell.run("sinfo -R").stdout().contains("both"));
}

#[test]
fn hands_on_work_is_physical() {
    let mut shell = lab(TWO_NODES);
    // The site's policy: no hands-on work on a node Slurm has not drained.
    let refused = shell.run("dctech power-cycle gpu-002");
    assert_eq!(refused.status, 1);
    assert!(refused.stderr().starts_with("dctech: refused: gpu-002 is not drained."));
    shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=work");

    // A power cycle boots the node again: uptime, BootTime and the kernel log start over.
    let boot_before = shell.run("scontrol show node gpu-002 | grep -o 'BootTime=[^ ]*'").stdout();
    assert!(shell.run("ssh gpu-002 uptime").stdout().contains(" days,"));
    shell.run("ssh gpu-002 'echo x | sudo tee /dev/null'");
    assert_eq!(shell.run("dctech power-cycle gpu-002").status, 0);
    // Up again five minutes before the ticket closed.
    let uptime = shell.run("ssh gpu-002 uptime").stdout();
    assert!(uptime.contains(" up 5 min,"), "{uptime}");
    let boot_after = shell.run("scontrol show node gpu-002 | grep -o 'BootTime=[^ ]*'").stdout();
    assert_ne!(boot_before, boot_after);
    let booted = shell.run("date -d '5 min ago' +%Y-%m-%dT%H:%M").stdout();
    assert!(boot_after.contains(booted.trim()), "{boot_after} / {booted}");
    let first = shell.run("ssh gpu-002 sudo dmesg | head -1").stdout();
    assert!(first.starts_with("[    "), "{first}");

    // A new GPU has a new UUID and serial number; a new HCA new GUIDs.
    let uuid = |shell: &mut Session| shell.run("ssh gpu-002 nvidia-smi --query-gpu=uuid,serial --format=csv,noheader -i 3").stdout();
    let before = uuid(&mut shell);
    shell.run("dctech replace-gpu gpu-002 3");
    let replaced = uuid(&mut shell);
    assert_ne!(replaced, before);
    let guid = |shell: &mut Session| shell.run("ssh gpu-002 ibstat mlx5_4 | grep 'Node GUID'").stdout();
    let before = guid(&mut shell);
    shell.run("dctech replace-hca gpu-002 mlx5_4");
    assert_ne!(guid(&mut shell), before);

    // Cable work takes the link down and up: the kernel says so and LinkDowned counts it.
    shell.run("dctech reseat-cable gpu-002 mlx5_1");
    let downed = shell.run("ssh gpu-002 sudo perfquery -C mlx5_1 | grep LinkDownedCounter").stdout();
    assert!(downed.ends_with(".1\n"), "{downed}");
    let log = shell.run("ssh gpu-002 sudo dmesg | grep ibp").stdout();
    assert!(log.contains(": Link down\n") && log.ends_with(": Link up\n"), "{log}");
    // And the GPU replaced earlier keeps its new identity through later work.
    assert_eq!(uuid(&mut shell), replaced);
}

#[test]
fn ecc_errors_and_row_remaps_tell_one_story() {
    let query = "nvidia-smi -i 2 --query-gpu=ecc.errors.uncorrected.volatile.total,remapped_rows.pending --format=csv,noheader";
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-ecc-uncorrectable\"\nnode = \"gpu-001\"\ngpu = 2\ncount = 100\n");
    let mut shell = lab(&source);
    assert_eq!(shell.run(query).stdout(), "100, Yes\n");
    // The Xid 48 lines come over seconds, then the remap's Xid 63.
    let xids = shell.run("sudo dmesg | grep 'Xid'").stdout();
    let stamps: Vec<&str> = xids.lines().filter(|l| l.contains(": 48,")).map(|l| &l[..14]).collect();
    assert_eq!(stamps.len(), 3);
    assert!(stamps[0] != stamps[1] && stamps[1] != stamps[2], "{xids}");
    assert!(xids.lines().last().unwrap().contains(": 63,"), "{xids}");

    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-row-remap-pending\"\nnode = \"gpu-001\"\ngpu = 2\n");
    let mut shell = lab(&source);
    assert_eq!(shell.run(query).stdout(), "1, Yes\n");
}

#[test]
fn a_slowed_gpu_slows_the_collectives_it_is_in() {
    let busbw = |source: &str| -> f64 {
        let mut shell = lab(source);
        let out = shell.run("all_reduce_perf -b 1G -e 1G -g 8").stdout();
        let line = out.lines().find(|l| l.contains("Avg bus bandwidth")).unwrap().to_string();
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    let healthy = busbw(TWO_NODES);
    let thermal = busbw(&format!("{TWO_NODES}[[faults]]\nkind = \"gpu-thermal-slowdown\"\nnode = \"gpu-001\"\ngpu = 4\n"));
    let braked = busbw(&format!("{TWO_NODES}[[faults]]\nkind = \"gpu-power-brake\"\nnode = \"gpu-001\"\ngpu = 4\n"));
    assert!(healthy > 400.0, "{healthy}");
    assert!(thermal < healthy * 0.95 && thermal > healthy * 0.85, "{thermal} vs {healthy}");
    assert!(braked < healthy * 0.4, "{braked} vs {healthy}");
}

#[test]
fn a_gpu_falling_off_the_bus_logs_aer_then_xid_79() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-001\"\ngpu = 3\n");
    let mut shell = lab(&source);
    let log = shell.run("sudo dmesg").stdout();
    let aer = log.lines().position(|l| l.contains("AER: Uncorrected (Fatal) error received")).expect("an AER report");
    let surprise = log.lines().position(|l| l.ends_with("[ 5] Surprise Down Error    (First)")).expect("Surprise Down");
    let xid = log.lines().position(|l| l.contains("): 79, ") && l.ends_with("GPU has fallen off the bus.")).expect("Xid 79");
    assert!(aer < surprise && surprise < xid, "{log}");
    // Logged when it happened, not at boot.
    let stamp: f64 = log.lines().nth(xid).unwrap()[1..13].trim().parse().unwrap();
    assert!(stamp > 3600.0, "{stamp}");
}

#[test]
fn dcgm_fails_a_node_with_a_lost_gpu_or_no_fabric_manager() {
    // A GPU that fell off the bus while the host engine ran: NVML says it is lost.
    let lost = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-001\"\ngpu = 5\nstate = \"dead\"\n");
    let mut shell = lab(&lost);
    let run = shell.run("dcgmi diag -r 2");
    assert_eq!(run.status, 226, "DCGM_ST_NVVS_ERROR");
    let out = run.stdout();
    assert!(out.contains("|-----  Deployment  ---"), "{out}");
    // Messages wrap every 45 characters, mid-word.
    assert!(
        out.contains(
            "| Error                     | Error calling NVML API nvmlDeviceGetHandleByI  |\n|                           | ndex for GPU 5: GPU is lost "
        ),
        "{out}"
    );
    // After a reboot the driver never saw it: DCGM lists seven GPUs and passes them.
    shell.run("sudo scontrol update nodename=gpu-001 state=drain reason=gpu5");
    shell.run("dctech power-cycle gpu-001");
    let out = shell.run("dcgmi diag -r 2").stdout();
    assert!(out.contains("Successfully ran diagnostic for group."), "{out}");
    assert_eq!(out.matches("2330").count(), 7, "{out}");

    // Without Fabric Manager, CUDA cannot initialise: GPU Memory fails with a
    // cuInit warning per GPU and the other CUDA tests are skipped (DCGM 3.3).
    let no_fm = format!("{TWO_NODES}[[faults]]\nkind = \"fabric-manager-down\"\nnode = \"gpu-001\"\n");
    let mut shell = lab(&no_fm);
    let run = shell.run("dcgmi diag -r 2");
    assert_eq!(run.status, 226, "DCGM_ST_NVVS_ERROR");
    let out = run.stdout();
    for line in [
        "| PCIe                      | Skip - All                                     |",
        "| GPU Memory                | Fail - All                                     |",
        "| Warning                   | GPU 0 Error using CUDA API cuInit Check DCGM   |",
        "|                           | ze CUDA library: 'system not yet initialized'  |",
        "|                           | ttps://github.com/nvidia/cuda-samples          |",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert_eq!(out.matches("Error using CUDA API cuInit").count(), 8, "{out}");
}

#[test]
fn a_gsp_timeout_comes_in_bursts_with_the_process_that_waited() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-001\"\ngpu = 2\nxid = 119\n");
    let mut shell = lab(&source);
    let log = shell.run("sudo dmesg").stdout();
    let xids: Vec<&str> = log.lines().filter(|line| line.contains("): 119, ")).collect();
    assert_eq!(xids.len(), 2, "{log}");
    assert!(xids.iter().all(|line| line.contains(", name=python3, Timeout after 6s of waiting for RPC response from GPU2 GSP! Expected function ")), "{log}");
    assert!(log.contains(" Comm: python3 Tainted: P           OE     5.15.0-1063-nvidia #64-Ubuntu\n"), "{log}");
    assert!(log.contains("] Call Trace:\n") && log.contains(" ? rm_ioctl+"), "{log}");
    let limit = log.lines().find(|line| line.contains("Rate limiting")).expect("the rate-limit notice");
    assert!(
        limit.ends_with("NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:43:00 (printing 1 of every 30).  The GPU likely needs to be reset."),
        "{limit}"
    );
    // The 525 driver logs every timeout, 45 s apart, in its older words.
    let old = source.replace("nodes = [", "driver = \"525.60.13\"\nnodes = [");
    let log = lab(&old).run("sudo dmesg -T").stdout();
    let xids: Vec<&str> = log.lines().filter(|line| line.contains("): 119, ")).collect();
    assert_eq!(xids.len(), 6, "{log}");
    assert!(xids.iter().all(|line| line.contains("Timeout waiting for RPC from GSP! Expected function ")), "{log}");
    assert!(!log.contains("Rate limiting"), "{log}");
}

#[test]
fn batch_jobs_run_over_simulated_time_and_wait_with_slurms_reasons() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"node-down\"\nnode = \"gpu-002\"\n");
    let mut shell = lab(&source);
    let id = |out: String| out.trim().rsplit(' ').next().unwrap().to_string();
    let running = id(shell.run("sbatch --wrap='sleep 120'").stdout());
    let waiting = id(shell.run("sbatch -N2 --wrap=hostname").stdout());
    let named = id(shell.run("sbatch -w gpu-002 -J nccl-check --wrap=hostname").stdout());
    let queue = shell.run("squeue").stdout();
    assert!(queue.starts_with("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"), "{queue}");
    assert!(queue.contains(&format!("{running:>18}       gpu     wrap     user  R       0:02      1 gpu-001\n")), "{queue}");
    assert!(queue.contains(&format!("{waiting:>18}       gpu     wrap     user PD       0:00      2 (Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions)\n")), "{queue}");
    assert!(queue.contains(&format!("{named:>18}       gpu nccl-che     user PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:gpu-002)\n")), "{queue}");
    // Once its script has run its time, the job leaves the queue and stays in accounting.
    shell.run("sleep 200");
    assert!(!shell.run("squeue -h").stdout().contains(&running));
    let accounting = shell.run("sacct").stdout();
    for line in [
        format!("{running:<12}       wrap        gpu    default        224  COMPLETED      0:0 \n"),
        format!("{:<12}      batch               default        224  COMPLETED      0:0 \n", format!("{running}.batch")),
        format!("{waiting:<12}       wrap        gpu    default          0    PENDING      0:0 \n"),
    ] {
        assert!(accounting.contains(&line), "{line}{accounting}");
    }
    assert_eq!(shell.run("sacct -X -P -o JobID,State,Elapsed").stdout().lines().nth(1), Some(format!("{running}|COMPLETED|00:02:00").as_str()));
    assert_eq!(shell.run("sacct -o Bogus").stderr(), "sacct: error: Invalid field requested: \"Bogus\"\n");
}

#[test]
fn srun_waits_in_the_queue_for_nodes_that_are_down() {
    let source = format!("{TWO_NODES}[[faults]]\nkind = \"node-down\"\nnode = \"gpu-002\"\n");
    let mut shell = lab(&source);
    // Ctrl-C five seconds into the wait revokes the allocation.
    let out = shell.run_until("srun -N2 hostname", Some(5_000));
    let id = out.stderr().lines().nth(1).and_then(|line| line.split(' ').nth(2)).unwrap_or_default().to_string();
    assert_eq!(
        out.stderr(),
        format!("srun: Required node not available (down, drained or reserved)\nsrun: job {id} queued and waiting for resources\nsrun: Job allocation {id} has been revoked\n")
    );
    assert_eq!((out.status, out.duration_ms), (130, 5_000));
    assert_eq!(shell.run("srun -w gpu-002 hostname").status, 1);
    // More nodes than the partition has can never run: refused at once.
    assert_eq!(shell.run("srun -N3 hostname").stderr(), "srun: error: Unable to allocate resources: Requested node configuration is not available\n");
    // Excluding the node that is down runs the step on the others.
    let out = shell.run("srun -N1 -x gpu-002 hostname");
    assert_eq!((out.stdout(), out.status), ("gpu-001\n".to_string(), 0));
    assert_eq!(
        shell.run("srun -N1 --exclude=gpu-[001-002] hostname").stderr(),
        "srun: error: Unable to allocate resources: Requested node configuration is not available\n"
    );
    assert_eq!(shell.run("srun -w gpu-001 -x gpu-001 hostname").status, 1);
    assert_eq!(shell.run("srun -x gpu-009 hostname").stderr(), "srun: error: Unable to allocate resources: Invalid node name specified\n");
    assert!(shell.run("srun --help").stdout().starts_with("srun - run a parallel job step on Slurm nodes\n\nUsage: srun "));
}
