//! Workloads as one system (issue "Representative workloads"): a training
//! job's log, its GPUs, Slurm and the fabric agree, and faults reach the
//! job the way they reach a real one.

use clusterlab_engine::lab::evidence::Baseline;
use clusterlab_engine::lab::Setup;
use clusterlab_engine::{load, Lab, Session};

const CLUSTER: &str =
    "[lab]\nid = \"w\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nstorage_gb_per_s = 4\n";

const JOB: &str = "[[jobs]]\nname = \"llama3-8b\"\nparams = \"8B\"\nglobal_batch = 16\nseq_len = 2048\nloader_workers = 4\ncheckpoint_every = 1000\n";

fn lab(extra: &str) -> (Lab, Session) {
    let lab = load(&format!("{CLUSTER}{JOB}{extra}")).expect("the lab loads");
    let session = Session::new(lab.instantiate(0), "gpu-001");
    (lab, session)
}

/// The elapsed times of the log's last `n` iteration lines (ms).
fn step_times(session: &mut Session, n: usize) -> Vec<f64> {
    let log = session.run("cat ~/slurm-*.out").stdout();
    let times: Vec<f64> =
        log.lines().filter_map(|line| line.split("elapsed time per iteration (ms): ").nth(1)).filter_map(|rest| rest.split(' ').next()?.parse().ok()).collect();
    times[times.len().saturating_sub(n)..].to_vec()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

fn job_id(session: &mut Session) -> String {
    session.run("squeue -h -o %i").stdout();
    let out = session.run("squeue -h").stdout();
    out.split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn the_log_has_megatrons_lines() {
    let (_, mut session) = lab("");
    let id = job_id(&mut session);
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[0],
        "using world size: 16, data-parallel size: 16, context-parallel size: 1, tensor-model-parallel size: 1, pipeline-model-parallel size: 1"
    );
    assert_eq!(lines[4], " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 8030261248");
    assert!(log.contains("\ntraining ...\n[before the start of training step] datetime: 2026-"), "{}", &log[..1500]);
    let first = lines.iter().find(|line| line.contains(" iteration ")).unwrap();
    // ` [2026-03-09 12:27:34] iteration       10/  100000 | consumed samples:          160 | ...`
    let fields: Vec<&str> = first.split(" | ").collect();
    assert!(fields[0].starts_with(" [2026-03-09 ") && fields[0].ends_with("] iteration       10/  100000"), "{first}");
    assert_eq!(fields[1], "consumed samples:          160");
    assert!(fields[2].starts_with("elapsed time per iteration (ms): 17"), "{first}");
    assert!(fields[3].starts_with("throughput per GPU (TFLOP/s/GPU): 5"), "{first}");
    assert_eq!(fields[4], "learning rate: 1.500000E-06");
    assert_eq!(fields[5], "global batch size:    16");
    assert!(fields[6].starts_with("lm loss: 1.0") && fields[6].ends_with("E+01"), "{first}");
    assert_eq!(fields[7], "loss scale: 1.0");
    assert_eq!(&fields[9..], ["number of skipped iterations:   0", "number of nan iterations:   0 |"]);
    // The timers block, each name dotted out to 48 columns.
    let at = lines.iter().position(|line| line == first).unwrap();
    assert_eq!(lines[at + 1], "(min, max) time across ranks (ms):");
    assert!(lines[at + 2].starts_with("    forward-backward ...............................: ("), "{}", lines[at + 2]);
    assert!(lines[at + 3].starts_with("    batch-generator ................................: ("));
    assert!(log.contains("saving checkpoint at iteration    1000 to /lustre/checkpoints/llama3-8b in torch_dist format\n  successfully saved checkpoint from iteration    1000 to /lustre/checkpoints/llama3-8b [ t 1/1, p 1/1 ]\n(min, max) time across ranks (ms):\n    save-checkpoint ................................: ("));
    // The same bytes for the same lab and seed.
    assert_eq!(session.run(&format!("cat ~/slurm-{id}.out")).stdout(), log);
}

#[test]
fn the_job_is_its_processes_its_gpus_and_its_slurm_record() {
    let (_, mut session) = lab("");
    let id = job_id(&mut session);
    let squeue = session.run("squeue").stdout();
    assert!(squeue.contains(&format!("{id:>18}       gpu llama3-8     user  R ")) && squeue.ends_with("      2 gpu-[001-002]\n"), "{squeue}");
    assert!(session.run("sinfo").stdout().contains("2  alloc gpu-[001-002]"));
    let smi = session.run("nvidia-smi").stdout();
    let processes: Vec<&str> = smi.lines().filter(|line| line.contains("/usr/bin/python3")).collect();
    assert_eq!(processes.len(), 8, "{smi}");
    assert!(processes[0].starts_with("|    0   N/A  N/A ") && processes[0].ends_with("MiB |") && processes[0].len() == 91, "{}", processes[0]);
    let query = session.run("nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader,nounits").stdout();
    for line in query.lines() {
        let (util, power) = line.split_once(", ").unwrap();
        assert!(util.parse::<u32>().unwrap() >= 97 && power.parse::<f64>().unwrap() > 550.0, "{line}");
    }
    assert!(session.run("sacct -n -X -o JobID,State").stdout().contains("RUNNING"));
}

#[test]
fn a_gpu_reset_is_refused_while_the_job_runs_and_works_after_scancel() {
    let (_, mut session) = lab("");
    let refused = session.run("sudo nvidia-smi -r -i 3");
    assert_eq!(refused.status, 255);
    assert!(refused.stdout().starts_with("The following GPUs could not be reset:\n  GPU 00000000:64:00.0: In use by another client\n\n1 device is currently being used by one or more other processes"), "{}", refused.stdout());
    let id = job_id(&mut session);
    assert_eq!(session.run(&format!("scancel {id}")).status, 0);
    session.run("sudo systemctl stop dcgm-exporter nvidia-dcgm");
    let reset = session.run("sudo nvidia-smi -r -i 3");
    assert_eq!((reset.status, reset.stdout()), (0, "GPU 00000000:64:00.0 was successfully reset.\nAll done.\n".to_string()));
    assert!(session.run("nvidia-smi").stdout().contains("No running processes found"));
    assert_eq!(session.run("squeue -h").stdout(), "");
    assert!(session.run("sacct -n -X -o State%20").stdout().contains("CANCELLED by 1000"));
    assert!(session.run(&format!("tail -n 3 ~/slurm-{id}.out")).stdout().contains(&format!("slurmstepd: error: *** JOB {id} ON gpu-001 CANCELLED AT 2026-")));
    let again = session.run(&format!("scancel {id}"));
    assert_eq!((again.status, again.stderr()), (1, format!("scancel: error: Kill job error on job id {id}: Job/step already completing or completed\n")));
    assert_eq!(session.run("scancel 7").stderr(), "scancel: error: Kill job error on job id 7: Invalid job id specified\n");
    assert_eq!(session.run("scancel").stderr(), "scancel: error: No job identification provided\n");
}

#[test]
fn a_slow_rail_raises_the_step_time_and_shows_in_its_counters() {
    let fault = "[[faults]]\nkind = \"hca-link-degraded\"\nnode = \"gpu-002\"\nhca = \"mlx5_5\"\nrate = 200\nat = \"5m\"\n";
    let (_, mut session) = lab(fault);
    let before = mean(&step_times(&mut session, 5));
    assert!((170.0..186.0).contains(&before), "{before}");
    let counters = |session: &mut Session| -> Vec<u64> {
        session
            .run("ssh gpu-002 cat /sys/class/infiniband/mlx5_5/ports/1/counters/port_xmit_data /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data")
            .stdout()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    };
    let start = counters(&mut session);
    session.run("sleep 300");
    let middle = counters(&mut session);
    session.run("sleep 300");
    let after = mean(&step_times(&mut session, 5));
    // The ring runs at the slow rail's rate: the all-reduce doubles and
    // backward no longer hides it.
    assert!(after > before * 1.15 && after < before * 1.3, "{before} -> {after}");
    assert!(session.run("ssh gpu-002 ibstat mlx5_5").stdout().contains("Rate: 200"));
    // The job's gradients cross every rail alike (NCCL spreads its channels
    // over them); with the ring at the slow rail's pace, each carries less
    // per second once the rail is slow.
    let end = counters(&mut session);
    let (healthy_rate, slow_rate) = (middle[0] - start[0], end[0] - middle[0]);
    assert_eq!(end[0] - start[0], end[1] - start[1], "{start:?} {end:?}");
    assert!(healthy_rate > 0 && (slow_rate as f64) < healthy_rate as f64 * 0.92, "{start:?} {middle:?} {end:?}");
    // GPU utilization stays high: only the job's progress shows the problem.
    let util = session.run("nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits").stdout();
    assert!(util.lines().all(|u| u.parse::<u32>().unwrap() >= 97), "{util}");
}

#[test]
fn an_xid_79_kills_the_job_in_every_layer() {
    let fault = "[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = 3\nat = \"5m\"\n";
    let (_, mut session) = lab(fault);
    let id = job_id(&mut session);
    session.run("sleep 400");
    // The rank on the lost GPU died; the others wait on it until the watchdog.
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(
        log.contains("[PG 0 (default_pg) Rank 11] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure\n"),
        "{}",
        &log[log.len() - 800..]
    );
    assert!(log.contains("srun: error: gpu-002: task 11: Aborted (core dumped)\n"));
    assert!(session.run("squeue -h").stdout().contains(" R "), "still running: its ranks wait");
    let util = session.run("nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits").stdout();
    assert!(util.lines().all(|u| u.parse::<u32>().unwrap() >= 97), "NCCL spins while it waits: {util}");
    session.run("sleep 600");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(log.contains("Watchdog caught collective operation timeout: WorkNCCL(SeqNum="), "{}", &log[log.len() - 1500..]);
    assert!(log.contains(", OpType=ALLREDUCE, NumelIn=40000000, NumelOut=40000000, Timeout(ms)=600000) ran for 6000"));
    assert!(
        log.ends_with("srun: error: gpu-001: tasks 0-7: Aborted (core dumped)\nsrun: error: gpu-002: tasks 8-10,12-15: Aborted (core dumped)\n"),
        "{}",
        &log[log.len() - 400..]
    );
    let iterations_then = log.matches(" iteration ").count();
    session.run("sleep 60");
    assert_eq!(session.run(&format!("cat ~/slurm-{id}.out")).stdout().matches(" iteration ").count(), iterations_then, "no progress once dead");
    // Slurm, the kernel and nvidia-smi tell the same story.
    assert_eq!(session.run("sacct -n -X -o JobID,State,ExitCode").stdout(), format!("{id:<12}     FAILED      1:0 \n"));
    let dmesg = session.run("ssh gpu-002 sudo dmesg | grep -i xid").stdout();
    assert!(dmesg.contains("Xid (PCI:0000:64:00): 79"), "{dmesg}");
    let smi = session.run("ssh gpu-002 nvidia-smi");
    assert!(smi.stderr().contains("Unable to determine the device handle for GPU0000:64:00.0: Unknown Error"), "{}", smi.stderr());
    assert!(smi.stdout().contains("No running processes found"));
}

#[test]
fn recovery_is_proven_by_progress_resuming_from_the_checkpoint() {
    let fault = "[[faults]]\nkind = \"hca-link-degraded\"\nnode = \"gpu-002\"\nhca = \"mlx5_5\"\nrate = 200\nat = \"-10m\"\nrepair = [\"reseat-cable\"]\n";
    let question =
        "[[questions]]\nid = \"back\"\ntype = \"state\"\nprompt = \"p\"\nexpect = [{ repaired = true }, { job = \"llama3-8b\", step_time_within = \"5%\" }]\n";
    let (lab, mut session) = lab(&format!("{fault}{question}"));
    let setup = Setup::from_json(&lab.to_json()).unwrap();
    let met = |session: &Session| setup.states_met(0, &session.cluster, &Baseline::default());
    assert!(met(&session).is_empty(), "neither condition holds");
    let slow = mean(&step_times(&mut session, 5));
    session.run("sudo scontrol update nodename=gpu-002 state=drain reason=slow");
    assert!(session.run("sinfo").stdout().contains("drng gpu-002"));
    assert_eq!(session.run("dctech reseat-cable gpu-002 mlx5_5").status, 1, "a job still runs there");
    session.run("scancel -n llama3-8b");
    assert_eq!(session.run("dctech reseat-cable gpu-002 mlx5_5").status, 0);
    session.run("sudo scontrol update nodename=gpu-002 state=resume");
    assert!(session.run("sbatch ~/llama3-8b.sbatch").stdout().starts_with("Submitted batch job "));
    // Not yet: the job has not stepped; the repair, the first condition, holds.
    assert_eq!(met(&session), ["back/0"]);
    session.run("sleep 300");
    let log = session.run("cat $(ls ~/slurm-*.out | tail -n 1)").stdout();
    assert!(log.contains("loading distributed checkpoint from /lustre/checkpoints/llama3-8b at iteration "), "{}", &log[..1200]);
    let fast = mean(&step_times(&mut session, 5));
    assert!(fast < slow * 0.9, "{slow} -> {fast}");
    assert_eq!(met(&session), ["back"]);
    // The panel marks the restart with its time: the cancel to the first new step.
    let html = clusterlab_engine::metrics::panel(&session.cluster);
    let caption = html.split("<figcaption>").nth(1).unwrap().split("</figcaption>").next().unwrap();
    let marked = caption.split(". Training resumed (restart time ").nth(1).unwrap_or_else(|| panic!("{caption}"));
    let (minutes, rest) = marked.split_once(" min ").unwrap_or_else(|| panic!("{marked}"));
    let seconds: i64 = rest.split(" s) at ").next().unwrap().parse().unwrap();
    let restart = minutes.parse::<i64>().unwrap() * 60 + seconds;
    // Drain, the technician's reseat, the resume, sbatch, then the setup and the checkpoint's load.
    assert!((95..3600).contains(&restart), "{restart} s: {caption}");
}

#[test]
fn the_metrics_panel_draws_the_slowdown_against_the_baseline() {
    let fault = "[[faults]]\nkind = \"hca-link-degraded\"\nnode = \"gpu-002\"\nhca = \"mlx5_5\"\nrate = 200\nat = \"-10m\"\n";
    let (_, session) = lab(fault);
    let html = clusterlab_engine::metrics::panel(&session.cluster);
    assert!(html.starts_with("<h3>llama3-8b</h3>\n<figure class=\"metric\"><svg viewBox=\"0 0 320 112\" role=\"img\" aria-labelledby=\"metric-0-0-t\"><title id=\"metric-0-0-t\">Step time (ms)</title>"), "{}", &html[..300]);
    assert_eq!(html.matches("<figure").count(), 7);
    for title in [
        "Step time (ms)",
        "Throughput (tokens/s)",
        "GPU utilization (%)",
        "SM clock (slowest GPU) (MHz)",
        "GPU power (W)",
        "InfiniBand on each rail, mlx5_0 to mlx5_7 (Gb/s)",
        "Input wait (ms)",
    ] {
        assert!(html.contains(&format!(">{title}</title>")), "{title}");
    }
    // The step time rose from the baseline when the fault struck: the
    // slowdown is marked, as a monitor shows it, without its cause (the
    // lab's question).
    let caption = html.split("<figcaption>").nth(1).unwrap().split("</figcaption>").next().unwrap();
    assert!(caption.starts_with("Step time (ms): 17") && caption.contains(" at the end, range 17") && caption.contains("; baseline 17"), "{caption}");
    assert!(caption.contains(" to 21"), "{caption}");
    assert!(caption.contains(". The slowdown began at ") && caption.ends_with('.'), "{caption}");
    assert_eq!(html.matches("<path class=\"change\"").count(), 7);
    for cause in ["hca", "mlx5_5", "gpu-002", "degraded", "fault"] {
        assert!(!html.to_lowercase().contains(cause), "the panel names the cause: {cause}");
    }
    // GPU utilization does not show it.
    let util = html.split("<figcaption>GPU utilization (%): ").nth(1).unwrap();
    assert!(util.starts_with("99.0 at the start, 99.0 at the end, range 99.0 to 99.0; baseline 99.0."), "{}", &util[..80]);
    // A lab without jobs draws nothing.
    let bare = load(CLUSTER).unwrap();
    assert_eq!(clusterlab_engine::metrics::panel(&bare.instantiate(0)), "");
}

#[test]
fn a_thermal_slowdown_holds_the_job_to_its_slowest_gpu() {
    let fault = "[[faults]]\nkind = \"gpu-thermal-slowdown\"\nnode = \"gpu-001\"\ngpu = 6\nat = \"2m\"\n";
    let (_, mut session) = lab(fault);
    let before = mean(&step_times(&mut session, 5));
    session.run("sleep 300");
    let after = mean(&step_times(&mut session, 5));
    // Compute runs at 55% of the clock on one GPU; every rank waits for it.
    assert!(after > before * 1.6, "{before} -> {after}");
    let clocks = session.run("nvidia-smi --query-gpu=index,clocks.sm,clocks_event_reasons.active --format=csv,noheader -i 6").stdout();
    assert!(clocks.starts_with("6, 1089 MHz, 0x"), "{clocks}");
}

#[test]
fn a_restored_session_has_the_same_job_byte_for_byte() {
    let fault = "[[faults]]\nkind = \"hca-link-degraded\"\nnode = \"gpu-002\"\nhca = \"mlx5_5\"\nrate = 200\nat = \"5m\"\nrepair = [\"reseat-cable\"]\n";
    let (lab, mut session) = lab(fault);
    for line in [
        "sleep 400",
        "sudo scontrol update nodename=gpu-002 state=drain reason=slow",
        "scancel -n llama3-8b",
        "dctech reseat-cable gpu-002 mlx5_5",
        "sudo scontrol update nodename=gpu-002 state=resume",
        "sbatch ~/llama3-8b.sbatch",
        "sleep 200",
    ] {
        session.run(line);
    }
    let read = |session: &mut Session| session.run("cat ~/slurm-*.out; sacct; scontrol show job; nvidia-smi; sudo perfquery -x -C mlx5_5").stdout();
    let live = read(&mut session);
    let mut restored = Session::restore(lab.instantiate(0), session.snapshot());
    assert_eq!(read(&mut restored), live);
    let jobs = session.run("scontrol show job").stdout();
    assert_eq!(jobs.matches("JobId=").count(), 2, "{jobs}");
    assert!(jobs.contains("JobState=CANCELLED Reason=None Dependency=(null)\n   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15\n"), "{jobs}");
    assert!(jobs.contains("JobState=RUNNING Reason=None") && jobs.contains("   Command=/home/user/llama3-8b.sbatch\n"), "{jobs}");
}

#[test]
fn the_ranks_are_listed_as_nvidia_smi_lists_compute_processes() {
    let (_, mut session) = lab("");
    let apps = session.run("nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_bus_id --format=csv -i 0,1").stdout();
    let lines: Vec<&str> = apps.lines().collect();
    assert_eq!(lines[0], "pid, process_name, used_gpu_memory [MiB], gpu_bus_id");
    assert_eq!(lines.len(), 3);
    assert!(lines[1].contains(", /usr/bin/python3, ") && lines[1].ends_with(" MiB, 00000000:04:00.0"), "{apps}");
    let pid = lines[1].split(", ").next().unwrap();
    let report = session.run("nvidia-smi -q -d PIDS -i 0").stdout();
    assert!(report.contains(&format!("    Processes\n        GPU instance ID                   : N/A\n        Compute instance ID               : N/A\n        Process ID                        : {pid}\n            Type                          : C\n            Name                          : /usr/bin/python3\n")), "{report}");
    assert!(session.run("nvidia-smi").stdout().contains(&format!("          {pid}      C   /usr/bin/python3 ")));
    session.run("scancel -n llama3-8b");
    assert_eq!(session.run("nvidia-smi --query-compute-apps=pid --format=csv,noheader").stdout(), "");
    assert!(session.run("nvidia-smi -q -d PIDS -i 0").stdout().contains("    Processes                             : None\n"));
}

#[test]
fn an_uncorrectable_ecc_error_kills_its_rank_until_a_reset() {
    let fault = "[[faults]]\nkind = \"gpu-ecc-uncorrectable\"\nnode = \"gpu-001\"\ngpu = 2\ncount = 1\nat = \"3m\"\n";
    let (_, mut session) = lab(fault);
    let id = job_id(&mut session);
    session.run("sleep 900");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(
        log.contains("[PG 0 (default_pg) Rank 2] Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered\n"),
        "{}",
        &log[log.len() - 1200..]
    );
    assert!(
        log.ends_with("srun: error: gpu-001: tasks 0-1,3-7: Aborted (core dumped)\nsrun: error: gpu-002: tasks 8-15: Aborted (core dumped)\n"),
        "{}",
        &log[log.len() - 300..]
    );
    assert!(session.run("sacct -n -X -o State").stdout().contains("FAILED"));
    // The driver names the rank's process, which the error ended.
    let xid = session.run("sudo dmesg | grep Xid").stdout();
    assert!(xid.contains("): 48, pid=") && xid.contains(", name=python3, An uncorrectable double bit error (DBE)"), "{xid}");
}

#[test]
fn a_contained_error_ends_its_job_and_the_gpu_takes_the_next_one() {
    let fault = "[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-002\"\ngpu = 5\nxid = 94\nat = \"2m\"\n";
    let (_, mut session) = lab(fault);
    let id = job_id(&mut session);
    session.run("sleep 900");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(
        log.contains("[PG 0 (default_pg) Rank 13] Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered\n"),
        "{}",
        &log[log.len() - 1200..]
    );
    assert!(session.run("sacct -n -X -o State").stdout().contains("FAILED"));
    // The driver names the rank's process, and marks the row for remapping.
    let pid = session.run("ssh gpu-002 nvidia-smi --query-compute-apps=pid --format=csv,noheader -i 5").stdout();
    let xid = session.run("ssh gpu-002 sudo dmesg | grep Xid").stdout();
    assert!(xid.contains("): 94, pid=") && xid.contains(", name=python3, Contained: SM (0x1). RST: No, D-RST: No\n"), "{xid}");
    assert!(xid.contains(": 63, pid='<unknown>', name=<unknown>, Row Remapper: New row"), "{xid}");
    assert!(pid.trim().is_empty(), "the ended job holds no GPU: {pid}");
    // Contained: the GPU runs the job again without a reset.
    let resubmitted = session.run("sbatch ~/llama3-8b.sbatch").stdout();
    let again = resubmitted.trim().rsplit(' ').next().unwrap().to_string();
    session.run("sleep 300");
    let log = session.run(&format!("cat ~/slurm-{again}.out")).stdout();
    assert!(log.contains(" iteration ") && !log.contains("CUDA error"), "{}", &log[log.len().saturating_sub(900)..]);
}

#[test]
fn a_flapping_link_ends_the_job_across_it_and_reads_active_after() {
    let flap = |at: &str| format!("[[faults]]\nkind = \"hca-link-flap\"\nnode = \"gpu-002\"\nhca = \"mlx5_3\"\nat = \"{at}\"\nrepair = [\"replace-cable\"]\n");
    let (_, mut session) = lab(&format!("{}{}", flap("2m"), flap("50m")));
    let id = job_id(&mut session);
    session.run("sleep 300");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(log.contains(" NCCL WARN NET/IB: Got completion from peer ") && log.contains(" hca mlx5_3\n"), "{}", &log[log.len().saturating_sub(1500)..]);
    assert!(session.run("sacct -n -X -o State").stdout().contains("FAILED"));
    // The port trained again: only its counters and the kernel log remember.
    assert!(session.run("ssh gpu-002 ibstat mlx5_3").stdout().contains("\t\tState: Active\n"));
    let counters = session.run("ssh gpu-002 sudo perfquery -C mlx5_3 -P 1").stdout();
    assert!(counters.contains("\nLinkDownedCounter:...............1\n"), "{counters}");
    let kernel = session.run("ssh gpu-002 sudo dmesg | grep ibp").stdout();
    assert!(kernel.contains(": Link down\n") && kernel.ends_with(": Link up\n"), "{kernel}");
    // A new cable: the HCA's counters keep the flap and add the replug
    // until they are cleared; the flap still to come never happens.
    session.run("sudo scontrol update nodename=gpu-002 state=drain reason=flaps");
    assert_eq!(session.run("dctech replace-cable gpu-002 mlx5_3").status, 0);
    let counters = session.run("ssh gpu-002 sudo perfquery -C mlx5_3 -P 1").stdout();
    assert!(counters.contains("\nLinkDownedCounter:...............2\n"), "{counters}");
    let cleared = session.run("ssh gpu-002 sudo perfquery -C mlx5_3 -P 1 -R");
    assert_eq!((cleared.stdout().as_str(), cleared.status), ("", 0));
    session.run("sleep 3600");
    let counters = session.run("ssh gpu-002 sudo perfquery -C mlx5_3 -P 1").stdout();
    assert!(counters.contains("\nSymbolErrorCounter:..............0\n") && counters.contains("\nLinkDownedCounter:...............0\n"), "{counters}");
    // `-r` prints, then clears.
    assert!(session.run("ssh gpu-001 sudo perfquery -r").stdout().starts_with("# Port counters: "));
}

#[test]
fn a_job_sent_to_a_gpu_awaiting_a_reset_fails_in_its_setup() {
    let fault = "[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-002\"\ngpu = 3\nxid = 95\nat = \"2m\"\n";
    let (_, mut session) = lab(fault);
    session.run("sleep 900");
    let resubmitted = session.run("sbatch ~/llama3-8b.sbatch").stdout();
    let id = resubmitted.trim().rsplit(' ').next().unwrap().to_string();
    session.run("sleep 60");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(!log.contains("[before the start of training step]") && !log.contains("building GPT model"), "{log}");
    assert!(log.contains("[rank11]: Traceback (most recent call last):\n"), "{log}");
    assert!(log.contains("[rank11]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"), "{log}");
    assert!(log.ends_with("srun: error: gpu-002: task 11: Exited with exit code 1\n"), "{log}");
    // The other ranks wait in the setup's barrier until the watchdog ends them.
    session.run("sleep 660");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(log.contains("WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"), "{log}");
    assert!(log.ends_with("srun: error: gpu-001: tasks 0-7: Aborted (core dumped)\nsrun: error: gpu-002: tasks 8-10,12-15: Aborted (core dumped)\n"), "{log}");
    assert!(session.run(&format!("sacct -n -X -j {id} -o State")).stdout().contains("FAILED"));
}

#[test]
fn a_relaunch_waits_for_its_nodes_and_starts_when_they_are_free() {
    let (lab, mut session) = lab("");
    // The job still runs: the new one waits for the nodes it holds.
    let queued = session.run("sbatch ~/llama3-8b.sbatch").stdout();
    let id = queued.trim().rsplit(' ').next().unwrap().to_string();
    assert!(
        session.run("squeue").stdout().contains(&format!("{id:>18}       gpu llama3-8     user PD       0:00      2 (Resources)")),
        "{}",
        session.run("squeue").stdout()
    );
    // Drained, it waits on; resumed, with the old job cancelled, it starts.
    session.run("sudo scontrol update nodename=gpu-002 state=drain reason=x");
    session.run("scancel $(squeue -h | awk '$5 == \"R\" {print $1}')");
    assert!(session.run("squeue -h").stdout().contains(" PD "), "{}", session.run("squeue").stdout());
    session.run("sudo scontrol update nodename=gpu-002 state=resume");
    let queue = session.run("squeue -h").stdout();
    assert!(queue.contains(&format!("{id:>18}")) && queue.contains("  R "), "{queue}");
    session.run("sleep 300");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(log.contains("loading distributed checkpoint from /lustre/checkpoints/llama3-8b at iteration "), "{}", &log[..log.len().min(900)]);
    // The same on a restored session.
    let restored = Session::restore(lab.instantiate(0), session.snapshot());
    let mut restored = restored;
    assert_eq!(restored.run(&format!("cat ~/slurm-{id}.out; squeue; sacct")).stdout(), session.run(&format!("cat ~/slurm-{id}.out; squeue; sacct")).stdout());
}

#[test]
fn a_power_cap_left_low_slows_the_job_until_the_default_limit_is_back() {
    let cap = "[[faults]]\nkind = \"gpu-power-cap\"\nnode = \"gpu-002\"\ngpu = 3\nwatts = 350\nat = \"-30m\"\n";
    let (_, mut session) = lab(cap);
    let capped = mean(&step_times(&mut session, 5));
    let (_, mut healthy) = lab("");
    let baseline = mean(&step_times(&mut healthy, 5));
    assert!(capped > baseline * 1.25 && capped < baseline * 1.45, "{capped} against {baseline}");
    // The GPU runs at its limit with SW Power Cap active and its clock down; the others do not.
    let row = session.run("ssh gpu-002 nvidia-smi -i 3 --query-gpu=power.draw,power.limit,power.default_limit,clocks.sm,clocks_event_reasons.sw_power_cap --format=csv,noheader").stdout();
    let fields: Vec<&str> = row.trim().split(", ").collect();
    assert_eq!(&fields[1..], ["350.00 W", "700.00 W", "1455 MHz", "Active"], "{row}");
    assert!(fields[0].parse::<f64>().is_err() && fields[0].ends_with(" W") && fields[0].as_bytes()[0] == b'3', "{row}");
    // A plain user cannot change it; a limit outside the board's range is refused; root restores it.
    assert_eq!(session.run("ssh gpu-002 nvidia-smi -i 3 -pl 700").status, 4);
    let refused = session.run("ssh gpu-002 sudo nvidia-smi -i 3 -pl 900");
    assert_eq!(refused.status, 2);
    assert!(refused.stdout().starts_with("Provided power limit 900.00 W is not a valid power limit which should be between 200.00 W and 700.00 W"));
    let set = session.run("ssh gpu-002 sudo nvidia-smi -i 3 -pl 700");
    assert_eq!(set.stdout(), "Power limit for GPU 00000000:64:00.0 was set to 700.00 W from 350.00 W.\nAll done.\n");
    assert!(session.cluster.injected.iter().all(|injected| injected.repaired));
    session.run("sleep 120");
    let back = mean(&step_times(&mut session, 3));
    assert!((back / baseline - 1.0).abs() < 0.02, "{back} against {baseline}");
}

#[test]
fn cleared_counters_count_the_jobs_traffic_from_then_on() {
    let (_, mut session) = lab("");
    let data = |session: &mut Session| {
        let out = session.run("sudo perfquery -x -C mlx5_2").stdout();
        out.lines().find_map(|line| line.strip_prefix("PortXmitData:")).map(|v| v.trim_start_matches('.').parse::<u64>().unwrap()).unwrap()
    };
    assert!(data(&mut session) > 1_000_000_000, "half an hour of all-reduces");
    assert_eq!(session.run("sudo perfquery -x -C mlx5_2 -R").stdout(), "");
    assert!(data(&mut session) < 1_000_000, "just cleared");
    session.run("sleep 60");
    let minute = data(&mut session);
    assert!(minute > 1_000_000, "a minute of steps: {minute}");
    // A plain user cannot clear them: the UMAD port is root's.
    assert_eq!(session.run("perfquery -R").status, 255);
}

#[test]
fn a_driver_update_without_a_reboot_fails_new_jobs_until_the_node_boots_it() {
    // The update reaches gpu-002 while the job runs across it.
    let fault = "[[faults]]\nkind = \"driver-mismatch\"\nnode = \"gpu-002\"\ninstalled = \"570.172.08\"\nat = \"2m\"\n";
    let (_, mut session) = lab(fault);
    let running = job_id(&mut session);
    session.run("sleep 300");
    // The running ranks keep the libraries they loaded.
    assert!(session.run("squeue -h").stdout().contains(&running), "{}", session.run("squeue").stdout());
    let smi = session.run("ssh gpu-002 nvidia-smi");
    assert_eq!((smi.stdout().as_str(), smi.status), ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.172\n", 18));
    assert!(session.run("ssh gpu-002 cat /proc/driver/nvidia/version").stdout().contains("  570.158.01  "));
    assert_eq!(session.run("ssh gpu-002 cat /sys/module/nvidia/version").stdout(), "570.158.01\n");
    // apt remembers what changed, and when.
    let apt = session.run("ssh gpu-002 cat /var/log/apt/history.log").stdout();
    assert!(apt.starts_with("\nStart-Date: 2026-") && apt.contains("nvidia-fabricmanager-570:amd64 (570.158.01-1, 570.172.08-1)"), "{apt}");
    assert_eq!(session.run("cat /var/log/apt/history.log").stdout(), "");
    // Fabric Manager's new build refuses the old module, again at every restart.
    let restart = session.run("ssh gpu-002 sudo systemctl restart nvidia-fabricmanager");
    assert_eq!(restart.status, 1);
    let journal = session.run("ssh gpu-002 journalctl -u nvidia-fabricmanager").stdout();
    let refusal = "fabric manager NVIDIA GPU driver interface version 570.172.08 don't match with driver version 570.158.01. Please update with matching NVIDIA driver package.";
    assert_eq!(journal.matches(refusal).count(), 2, "{journal}");
    assert!(journal.ends_with("systemd[1]: Failed to start NVIDIA fabric manager service.\n"), "{journal}");
    // A new job fails as its ranks on gpu-002 start CUDA.
    session.run(&format!("scancel {running}"));
    let id = session.run("sbatch ~/llama3-8b.sbatch").stdout().trim().rsplit(' ').next().unwrap().to_string();
    session.run("sleep 60");
    let log = session.run(&format!("cat ~/slurm-{id}.out")).stdout();
    assert!(log.contains("[rank8]: RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination\n"), "{log}");
    assert!(log.ends_with("srun: error: gpu-002: tasks 8-15: Exited with exit code 1\n"), "{log}");
    // Booting loads the installed module: the node runs the new driver.
    session.run(&format!("scancel {id}; sudo scontrol reboot gpu-002; sleep 300"));
    let smi = session.run("ssh gpu-002 nvidia-smi").stdout();
    assert!(smi.contains("Driver Version: 570.172.08"), "{smi}");
    assert_eq!(session.run("ssh gpu-002 cat /sys/module/nvidia/version").stdout(), "570.172.08\n");
    assert_eq!(session.run("ssh gpu-002 systemctl is-active nvidia-fabricmanager").stdout(), "active\n");
    assert!(session.run("nvidia-smi").stdout().contains("Driver Version: 570.158.01"));
}

#[test]
fn checkpoints_are_on_the_shared_file_system_at_their_size() {
    let (_, mut session) = lab("");
    let dir = "/lustre/checkpoints/llama3-8b";
    // The log's last saved checkpoint is the one the tracker names.
    let log = session.run("cat ~/slurm-*.out").stdout();
    let saved: Vec<&str> =
        log.lines().filter_map(|line| line.split("successfully saved checkpoint from iteration ").nth(1)?.split_whitespace().next()).collect();
    let last = saved.last().expect("the job has saved a checkpoint").to_string();
    assert_eq!(session.run(&format!("cat {dir}/latest_checkpointed_iteration.txt")).stdout(), last);
    let listing = session.run(&format!("ls -1 {dir}")).stdout();
    assert!(listing.contains(&format!("iter_{:0>7}\n", last)), "{listing}");
    let iteration = format!("{dir}/iter_{:0>7}", last);
    // Two shards a rank (16 ranks), the common state and the metadata.
    let files = session.run(&format!("ls -1a {iteration}")).stdout();
    assert_eq!(files.lines().count(), 2 + 32 + 3, "{files}");
    assert!(files.contains("\n.metadata\n") && files.contains("__15_1.distcp\n") && files.contains("common.pt\n") && files.contains("metadata.json\n"));
    // 8,030,261,248 parameters at 14 bytes (BF16 weights, FP32 master
    // weights, Adam's two moments): 112.4 GB, 105 GiB as du -h prints it.
    assert_eq!(session.run(&format!("du -sh {iteration}")).stdout(), format!("105G\t{iteration}\n"));
    let bytes: u64 = session.run(&format!("du -sb {iteration}")).stdout().split('\t').next().unwrap().parse().unwrap();
    assert!(bytes.abs_diff(8_030_261_248 * 14) < 3_000_000, "{bytes}");
    let shard = session.run(&format!("cat {iteration}/__0_0.distcp"));
    assert_eq!((shard.status, shard.stderr()), (1, format!("cat: {iteration}/__0_0.distcp: tensor data is not emulated (try ls -l or du)\n")));
    // Every node sees the same files, and df counts them.
    let used =
        |session: &mut Session| -> String { session.run("df -h /lustre").stdout().lines().nth(1).unwrap().split_whitespace().nth(2).unwrap().to_string() };
    let before = used(&mut session);
    assert_eq!(session.run(&format!("ssh gpu-002 cat {dir}/latest_checkpointed_iteration.txt")).stdout(), last);
    // Past the next save: a new directory, and the tracker moves only once it is complete.
    session.run("sleep 1200");
    let after = session.run(&format!("cat {dir}/latest_checkpointed_iteration.txt")).stdout();
    assert!(after.parse::<u32>().unwrap() > last.parse::<u32>().unwrap(), "{last} -> {after}");
    assert_ne!(used(&mut session), before);
}

const SERVER: &str = "[[jobs]]\nname = \"chat\"\nkind = \"serving\"\nparams = \"8B\"\ntensor = 2\nnodes = [\"gpu-002\"]\nrequest_rate = 6.0\nprompt_tokens = 1000\noutput_tokens = 200\n";

fn serving(extra: &str) -> (Lab, Session) {
    let lab = load(&format!("{CLUSTER}{SERVER}{extra}")).expect("the serving lab loads");
    let session = Session::new(lab.instantiate(0), "gpu-001");
    (lab, session)
}

/// The stats lines' `Running` requests and generation throughput, the last `n`.
fn server_stats(session: &mut Session, n: usize) -> Vec<(f64, f64)> {
    let log = session.run("cat ~/slurm-*.out").stdout();
    let field = |line: &str, name: &str| -> f64 { line.split(name).nth(1).and_then(|rest| rest.split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(0.0) };
    let stats: Vec<(f64, f64)> =
        log.lines().filter(|line| line.contains("Engine 000:")).map(|line| (field(line, "Running: "), field(line, "Avg generation throughput: "))).collect();
    stats[stats.len().saturating_sub(n)..].to_vec()
}

#[test]
fn a_serving_job_is_checked_against_its_kind() {
    let problems = |job: &str| match load(&format!("{CLUSTER}{job}")) {
        Ok(_) => Vec::new(),
        Err(problems) => problems.iter().map(ToString::to_string).collect::<Vec<String>>(),
    };
    let on_two = problems(&SERVER.replace("nodes = [\"gpu-002\"]", "nodes = [\"gpu-001\", \"gpu-002\"]"));
    assert!(on_two.iter().any(|p| p.contains("a server runs on one node")), "{on_two:?}");
    let no_rate = problems(&SERVER.replace("request_rate = 6.0\n", ""));
    assert!(no_rate.iter().any(|p| p.contains("a serving job needs `request_rate`")), "{no_rate:?}");
    let batch = problems(&format!("{SERVER}global_batch = 16\n"));
    assert!(batch.iter().any(|p| p.contains("`global_batch` is for training and fine-tuning jobs")), "{batch:?}");
    let rate_on_training = problems(&format!("{JOB}request_rate = 3\n"));
    assert!(rate_on_training.iter().any(|p| p.contains("`request_rate` is for serving jobs")), "{rate_on_training:?}");
    let too_long = problems(&format!("{SERVER}seq_len = 1024\n"));
    assert!(too_long.iter().any(|p| p.contains("must fit in `seq_len` (1024)")), "{too_long:?}");
    assert!(problems(&SERVER.replace("kind = \"serving\"", "kind = \"inference\"")).iter().any(|p| p.contains("an inference server is `serving`")));
    assert!(problems(SERVER).is_empty());
}

#[test]
fn a_server_is_its_processes_its_memory_and_its_slurm_job() {
    let (_, mut session) = serving("");
    let apps = session.run("ssh gpu-002 nvidia-smi --query-compute-apps=process_name,used_memory --format=csv,noheader").stdout();
    assert_eq!(apps, "VLLM::Worker_TP0, 73399 MiB\nVLLM::Worker_TP1, 73399 MiB\n");
    let util = session.run("ssh gpu-002 nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0").stdout();
    let util: u32 = util.trim().parse().unwrap_or(0);
    assert!((90..=100).contains(&util), "a busy server's GPU: {util}%");
    assert!(session.run("squeue -h -o %j").stdout().starts_with("chat"));
    // Its API server and engine core hold no GPU but are the job's: scancel ends them, not kill.
    let killed = session.run("ssh gpu-002 pkill VLLM; ssh gpu-002 'kill $(pgrep vllm)'");
    assert_eq!(killed.stderr().matches("is a rank of a Slurm job").count(), 4, "{}", killed.stderr());
    assert!(session.run("squeue -h -o %j").stdout().starts_with("chat"));
    // Decode waits on memory: DRAM busier than the tensor cores.
    let dmon = session.run("ssh gpu-002 dcgmi dmon -e 1004,1005 -c 1 -i 0").stdout();
    let fields: Vec<f64> = dmon.lines().nth(2).unwrap_or("").split_whitespace().skip(2).filter_map(|v| v.parse().ok()).collect();
    assert!(fields.len() == 2 && fields[1] > 0.5 && fields[0] < fields[1], "{dmon}");
    assert!(session
        .run("cat ~/chat.sbatch")
        .stdout()
        .contains("vllm serve /lustre/models/Llama-3.1-8B-Instruct \\\n    --served-model-name Llama-3.1-8B-Instruct \\\n    --tensor-parallel-size 2 \\\n"));
}

#[test]
fn a_thermal_slowdown_raises_the_servers_time_between_tokens() {
    let (_, mut session) = serving("[[faults]]\nkind = \"gpu-thermal-slowdown\"\nnode = \"gpu-002\"\ngpu = 1\nat = \"2m\"\n");
    let before = server_stats(&mut session, 6);
    session.run("sleep 300");
    let after = server_stats(&mut session, 6);
    let running = |stats: &[(f64, f64)]| mean(&stats.iter().map(|(r, _)| *r).collect::<Vec<_>>());
    let tokens = |stats: &[(f64, f64)]| mean(&stats.iter().map(|(_, t)| *t).collect::<Vec<_>>());
    // The same load finished at a slower step: more requests in flight, the same tokens a second.
    assert!(running(&after) > running(&before) * 1.1, "{before:?} -> {after:?}");
    assert!((tokens(&after) / tokens(&before) - 1.0).abs() < 0.1, "{before:?} -> {after:?}");
}

#[test]
fn a_server_past_its_capacity_queues_its_requests() {
    let heavy = SERVER.replace("request_rate = 6.0", "request_rate = 60.0").replace("tensor = 2", "tensor = 1");
    let lab = load(&format!("{CLUSTER}{heavy}")).expect("the heavy lab loads");
    let mut session = Session::new(lab.instantiate(0), "gpu-001");
    let log = session.run("tail -1 ~/slurm-*.out").stdout();
    let waiting: f64 = log.split("Waiting: ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert!(waiting > 1_000.0, "{log}");
    let usage: f64 = log.split("GPU KV cache usage: ").nth(1).and_then(|rest| rest.split('%').next()).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert!(usage > 10.0, "{log}");
}

#[test]
fn a_restored_session_has_the_same_server_byte_for_byte() {
    let (lab, mut session) = serving("[[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-002\"\ngpu = 0\nat = \"3m\"\n");
    session.run("sleep 400");
    let read = |session: &mut Session| {
        session
            .run("cat ~/slurm-*.out; sacct; ssh gpu-002 nvidia-smi; curl -s mgmt-01:9090/api/v1/query --data-urlencode 'query=vllm:num_requests_running'")
            .stdout()
    };
    let live = read(&mut session);
    let mut restored = Session::restore(lab.instantiate(0), session.snapshot());
    assert_eq!(read(&mut restored), live);
}

#[test]
fn a_servers_script_sizes_it_and_its_slurm_gpus_bound_it() {
    let long = "[[jobs]]\nname = \"docs\"\nkind = \"serving\"\nparams = \"70B\"\ntensor = 2\nnodes = [\"gpu-001\"]\nseq_len = 32768\nrequest_rate = 1.5\nprompt_tokens = 3000\noutput_tokens = 400\n";
    let lab = load(&format!("{CLUSTER}{long}")).expect("the lab loads");
    let mut session = Session::new(lab.instantiate(0), "gpu-001");
    let last = |session: &mut Session| session.run("tail -1 ~/slurm-*.out").stdout();
    assert!(session.run("cat ~/slurm-*.out").stdout().contains("the estimated maximum model length is 20192."));
    // More of each GPU starts it, but its cache holds too few requests: the queue grows.
    session.run("sed -i 's/--gpu-memory-utilization 0.9/--gpu-memory-utilization 0.99/' ~/docs.sbatch; sbatch ~/docs.sbatch; sleep 600");
    let stats = last(&mut session);
    let waiting: f64 = stats.split("Waiting: ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert!(waiting > 100.0 && stats.contains("GPU KV cache usage: 9"), "{stats}");
    // Four workers on the two GPUs Slurm gave it: vLLM refuses.
    session.run("scancel -n docs; sed -i 's/--gpu-memory-utilization 0.99/--gpu-memory-utilization 0.9/; s/--tensor-parallel-size 2/--tensor-parallel-size 4/' ~/docs.sbatch; sbatch ~/docs.sbatch; sleep 60");
    assert!(
        session.run("cat ~/slurm-*.out").stdout().contains("ValueError: World size (4) is larger than the number of available GPUs (2) in this node."),
        "{}",
        last(&mut session)
    );
    // With the four GPUs asked for, it keeps up.
    session.run("sed -i 's/--gpus-per-node=2/--gpus-per-node=4/' ~/docs.sbatch; sbatch ~/docs.sbatch; sleep 400");
    let stats = last(&mut session);
    assert!(stats.contains("Waiting: 0 reqs"), "{stats}");
    let apps = session.run("nvidia-smi --query-compute-apps=process_name --format=csv,noheader").stdout();
    assert_eq!(apps, "VLLM::Worker_TP0\nVLLM::Worker_TP1\nVLLM::Worker_TP2\nVLLM::Worker_TP3\n");
    // The panel charts the server against its resized configuration's healthy pace.
    let html = clusterlab_engine::metrics::panel(&session.cluster);
    let caption = html.split("<figcaption>").nth(1).unwrap_or("").split("</figcaption>").next().unwrap_or("");
    assert!(caption.starts_with("Time between tokens (ms): ") && caption.contains("; baseline "), "{caption}");
}

#[test]
fn a_nodes_counters_only_grow_as_jobs_come_and_go() {
    let (_, mut session) = lab("");
    let read = |session: &mut Session| -> Vec<(String, f64)> {
        let page = session.run("curl -s localhost:9100/metrics; curl -s localhost:9400/metrics").stdout();
        page.lines()
            .filter(|line| {
                ["node_cpu_seconds_total{", "node_context_switches_total ", "node_intr_total ", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{"]
                    .iter()
                    .any(|prefix| line.starts_with(prefix))
            })
            .filter_map(|line| {
                let (series, value) = line.rsplit_once(' ')?;
                Some((series.to_string(), value.parse().ok()?))
            })
            .collect()
    };
    let mut before = read(&mut session);
    for line in ["sleep 60", "sudo nvidia-smi -i 0 -pl 350", "sleep 60", "scancel -n llama3-8b", "sleep 60", "sbatch ~/llama3-8b.sbatch", "sleep 300"] {
        session.run(line);
        let after = read(&mut session);
        assert_eq!(after.len(), before.len());
        for ((series, old), (_, new)) in before.iter().zip(&after) {
            assert!(new >= old, "{series} went from {old} to {new} after `{line}`");
        }
        before = after;
    }
    // Busy, the CPUs spend most of a job's time in user mode; idle, almost none.
    let user: f64 = before.iter().filter(|(s, _)| s.contains("mode=\"user\"")).map(|(_, v)| v).sum();
    assert!(user > 0.0);
}
