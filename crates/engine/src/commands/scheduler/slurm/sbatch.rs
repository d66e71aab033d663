//! `sbatch`: submits a batch job. A script the trainee can read (its
//! `#SBATCH` directives read before the command line's options, which
//! win), `--wrap="CMD"` or a `#!` script piped on standard input is placed
//! as srun places a step (reachable idle or allocated nodes of the one
//! partition, `-N`, `-w`) and run on the first node through the
//! invocation's runner, with `SLURM_JOB_ID`, `SLURM_JOB_NODELIST` and
//! `SLURM_NNODES` exported. Its output goes to `-o` (`%j`, `%N`, `%x`,
//! `%u` expanded; `slurm-%j.out` by default, in the directory it was
//! submitted from), its errors there too unless `-e` names another file;
//! what it changes in the cluster is returned. A lab's workload script
//! starts that training job instead. The job itself is
//! recorded (`Change::SubmitJob`): squeue shows it running for as long as
//! its script ran, sacct keeps it. When the nodes it needs are not
//! available it waits in the queue with Slurm's reason, its script kept
//! with the job, and starts at the first command the shell runs once they
//! are (`start_next_pending`, `Change::StartJob`). Job ids: `next_job_id`
//! (sbatch takes one second).

use super::{hostlist, PARTITION};
use crate::commands::{Call, Command, Example, Flag, Invocation, Output, Runner, Signature};
use crate::limits::MAX_SLURM_JOBS;
use crate::model::change::{Change, ServerFlags};
use crate::model::job::{Batch, Job};
use crate::model::node::SchedulerState;
use crate::model::time::EpochSeconds;
use crate::model::{Cluster, Node};

pub struct Sbatch;

static SIGNATURE: Signature = Signature {
    name: "sbatch",
    summary: "submit a batch job to Slurm",
    usage: "sbatch [-N NODES] [-w HOSTLIST] [-p PARTITION] [-J NAME] [-o FILE] [-e FILE] SCRIPT | --wrap=\"COMMAND\"",
    flags: &[
        Flag { short: None, long: Some("wrap"), value: Some("COMMAND"), help: "run COMMAND as the job's script" },
        Flag { short: Some('N'), long: Some("nodes"), value: Some("N"), help: "number of nodes" },
        Flag { short: Some('w'), long: Some("nodelist"), value: Some("HOSTLIST"), help: "run on these nodes" },
        Flag { short: Some('p'), long: Some("partition"), value: Some("NAME"), help: "partition" },
        Flag { short: Some('J'), long: Some("job-name"), value: Some("NAME"), help: "job name" },
        Flag {
            short: Some('o'),
            long: Some("output"),
            value: Some("FILE"),
            help: "where the job's output goes (%j job id, %N node, %x name, %u user); slurm-%j.out by default",
        },
        Flag { short: Some('e'), long: Some("error"), value: Some("FILE"), help: "where the job's errors go; with its output by default" },
    ],
    examples: &[Example { command: "sbatch --help", description: "the options sbatch takes (submitting is an action)" }],
};

/// The options that take a value.
const VALUED: &[&str] = &[
    "-N",
    "--nodes",
    "-w",
    "--nodelist",
    "-p",
    "--partition",
    "-J",
    "--job-name",
    "-o",
    "--output",
    "-e",
    "--error",
    "-t",
    "--time",
    "-n",
    "--ntasks",
    "--ntasks-per-node",
    "--gpus-per-node",
    "-A",
    "--account",
    "-c",
    "--cpus-per-task",
    "-G",
    "--gpus",
    "--gres",
    "--wrap",
    "--mem",
];

fn fail(message: &str) -> Output {
    Output::error(format!("sbatch: error: {message}\n"), 1)
}

impl Command for Sbatch {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let cluster = invocation.cluster;
        let given = invocation.args();
        // A script's directives come first, so that the command line's options win.
        let operand = first_operand(given);
        let mut script_file = None;
        let mut args: Vec<String> = Vec::new();
        if let Some(file) = operand.and_then(|at| given.get(at)) {
            let view = crate::commands::files::View::for_command(invocation);
            let path = view.resolve(file);
            if cluster.workload_specs.iter().any(|spec| spec.script_path() == path) {
                return launch(invocation, file);
            }
            let Ok(text) = view.read(&path) else {
                return fail(&format!("Unable to open file {file}"));
            };
            args.extend(directives(&text));
            script_file = Some(text.into_owned());
        }
        args.extend(given[..operand.unwrap_or(given.len())].iter().cloned());
        let args = &args[..];
        let (mut wrap, mut nodes, mut list, mut at, mut job_name) = (None, 1usize, None, 0, None);
        let (mut output_file, mut error_file) = (None::<String>, None::<String>);
        while let Some(arg) = args.get(at).filter(|a| a.starts_with('-') && a.len() > 1) {
            at += 1;
            if arg == "--help" || arg == "-h" {
                return Output::ok(crate::commands::help::describe(&SIGNATURE));
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ if !arg.starts_with("--") && arg.len() > 2 => (&arg[..2], Some(arg[2..].to_string())),
                _ => (arg.as_str(), None),
            };
            if !VALUED.contains(&name) {
                if ["--exclusive", "-Q", "--quiet", "-v", "--parsable", "-W", "--wait"].contains(&name) {
                    continue;
                }
                return super::bad_option("sbatch", name);
            }
            let Some(value) = inline.or_else(|| args.get(at).cloned().inspect(|_| at += 1)) else {
                let (short, long) = match name.strip_prefix("--") {
                    Some(long) => (None, Some(long)),
                    None => (name.chars().nth(1), None),
                };
                let complaint = crate::commands::options::requires_argument("sbatch", short, long);
                return Output::error(format!("{complaint}Try \"sbatch --help\" for more information\n"), 1);
            };
            match name {
                "--wrap" => wrap = Some(value),
                "-J" | "--job-name" => job_name = Some(value),
                "-N" | "--nodes" => match value.split('-').next().and_then(|v| v.parse::<usize>().ok()).filter(|n| *n > 0) {
                    Some(n) => nodes = n,
                    None => return fail(&format!("Invalid numeric value \"{value}\" for --nodes.")),
                },
                "-w" | "--nodelist" => list = Some(value),
                "-o" | "--output" => output_file = Some(value),
                "-e" | "--error" => error_file = Some(value),
                "-p" | "--partition" if value != PARTITION => return fail("Batch job submission failed: Invalid partition name specified"),
                _ => {}
            }
        }
        // Slurm names a job after its script: `wrap`, or `sbatch` for one read from standard input.
        let name = job_name.clone().unwrap_or_else(|| if wrap.is_some() { "wrap" } else { "sbatch" }.to_string());
        // A script file names the job after itself.
        let name = match (&script_file, operand.and_then(|at| given.get(at))) {
            (Some(_), Some(file)) if job_name.is_none() => file.rsplit('/').next().unwrap_or(file).to_string(),
            _ => name,
        };
        let checked = match (wrap, script_file) {
            (Some(command), _) => Ok(command),
            (None, Some(text)) => check_script(&text),
            (None, None) => check_script(invocation.stdin),
        };
        let script = match checked {
            Ok(script) => script,
            Err(output) => return output,
        };
        let mut required: Vec<String> = Vec::new();
        if let Some(list) = &list {
            let Some(names) = hostlist::expand(list) else { return fail("Batch job submission failed: Invalid node name specified") };
            if names.iter().any(|name| cluster.node(name).is_none()) {
                return fail("Batch job submission failed: Invalid node name specified");
            }
            nodes = nodes.max(names.len());
            required = names;
        }
        if nodes > cluster.nodes.len() {
            return fail("Batch job submission failed: Node count specification invalid");
        }
        if cluster.slurm_jobs().len() >= MAX_SLURM_JOBS {
            return fail(SUBMIT_LIMIT);
        }
        let id = super::next_job_id(cluster);
        let mut out = Output { stdout: format!("Submitted batch job {id}\n"), duration_ms: 1000, ..Output::default() };
        let user = crate::commands::user(invocation.env).to_string();
        let batch = Batch { script, host: invocation.node.hostname.clone(), env: invocation.env.clone(), output: output_file, error: error_file, required };
        let mut job = Job {
            id,
            name,
            user,
            nodes,
            nodelist: Vec::new(),
            submitted: cluster.now,
            started: None,
            reason: String::new(),
            runtime: 0,
            exit_code: 0,
            cancelled: false,
            workload: false,
            batch: None,
            held: None,
        };
        match place(cluster, nodes, &batch.required) {
            // It starts as sbatch returns.
            Ok(chosen) => out.changes = run(invocation.runner, cluster, &mut job, &batch, &chosen, cluster.now + 1),
            Err(_) if cluster.pending_batch_jobs().len() >= crate::limits::MAX_PENDING_BATCH_JOBS => return fail(SUBMIT_LIMIT),
            Err(reason) => {
                job.reason = reason;
                job.batch = Some(batch);
            }
        }
        out.changes.push(Change::SubmitJob { node: invocation.node.hostname.clone(), job });
        out
    }
}

/// Slurm's refusal past the jobs one lab may hold.
const SUBMIT_LIMIT: &str = "Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

/// Where a job of `nodes` nodes (`required` among them) runs now, as srun
/// places a step: nodes that answer and are idle or allocated, in the
/// partition's order. Otherwise the reason squeue gives while it waits.
fn place(cluster: &Cluster, nodes: usize, required: &[String]) -> Result<Vec<String>, String> {
    let usable = |n: &Node| crate::model::service::in_slurm_service(n, cluster.now);
    let unavailable: Vec<&str> = required.iter().filter(|name| !cluster.node(name).is_some_and(usable)).map(String::as_str).collect();
    if !unavailable.is_empty() {
        return Err(format!("ReqNodeNotAvail, UnavailableNodes:{}", hostlist::compress(&unavailable)));
    }
    let mut chosen = required.to_vec();
    for node in cluster.nodes.iter().map(AsRef::as_ref).filter(|n| usable(n)) {
        if chosen.len() < nodes && !chosen.contains(&node.hostname) {
            chosen.push(node.hostname.clone());
        }
    }
    if chosen.len() < nodes {
        return Err("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions".to_string());
    }
    Ok(chosen)
}

/// Runs batch job `job` from `start` on `chosen` (its script on the first
/// node, with Slurm's variables), records how it ran, and writes its
/// output files where it was submitted from: the changes it made.
fn run(runner: &dyn Runner, cluster: &Cluster, job: &mut Job, batch: &Batch, chosen: &[String], start: EpochSeconds) -> Vec<Change> {
    let mut env = batch.env.clone();
    env.insert("SLURM_JOB_ID".into(), job.id.to_string());
    env.insert("SLURM_JOB_NODELIST".into(), hostlist::compress(chosen));
    env.insert("SLURM_NNODES".into(), chosen.len().to_string());
    let ran = runner.run_line(Call { cluster, host: &chosen[0], env: Some(&env), stdin: "" }, &batch.script);
    // It runs as long as its script did.
    job.started = Some(start);
    job.runtime = (ran.duration_ms.div_ceil(1000) as i64).max(1);
    job.exit_code = ran.status;
    job.nodelist = chosen.to_vec();
    let mut changes = ran.changes;
    // Written where it was submitted from: the home directory every node shares.
    let expand = |pattern: &str| expand_pattern(pattern, job.id, &chosen[0], &job.name, &job.user);
    let cwd = batch.env.get("PWD").map_or("/", String::as_str);
    let view = crate::commands::files::View::new(cluster, &batch.host, cwd);
    let output_path = view.resolve(&expand(batch.output.as_deref().unwrap_or("slurm-%j.out")));
    let mut files: Vec<(String, String)> = vec![(output_path, ran.stdout)];
    match batch.error.as_deref().map(|pattern| view.resolve(&expand(pattern))) {
        Some(error_path) if error_path != files[0].0 => files.push((error_path, ran.stderr)),
        _ => files[0].1.push_str(&ran.stderr),
    }
    for (path, mut text) in files {
        if view.check_writable(&path).is_ok() {
            crate::limits::truncate_to(&mut text, crate::commands::files::MAX_FILE_BYTES);
            changes.push(Change::WriteFile { node: batch.host.clone(), path, text, append: false });
        }
    }
    changes
}

/// Slurm's scheduler, run as the clock reaches each command: the oldest
/// waiting batch job whose nodes are free now starts (a later one may pass
/// an earlier one that still waits, as backfill lets it). The changes it
/// made, its start first; None when every job still waits.
pub fn start_next_pending(runner: &dyn Runner, cluster: &Cluster) -> Option<Vec<Change>> {
    for waiting in cluster.pending_batch_jobs() {
        let Some(batch) = &waiting.batch else { continue };
        let Ok(chosen) = place(cluster, waiting.nodes, &batch.required) else { continue };
        let mut job = waiting.clone();
        let ran = run(runner, cluster, &mut job, batch, &chosen, cluster.now);
        let started = Change::StartJob { node: batch.host.clone(), job: job.id, nodelist: job.nodelist, runtime: job.runtime, exit_code: job.exit_code };
        return Some(std::iter::once(started).chain(ran).collect());
    }
    None
}

/// Where the script operand is: the first word that is no option nor an
/// option's value.
fn first_operand(args: &[String]) -> Option<usize> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.starts_with('-') || arg.len() == 1 {
            return Some(at);
        }
        at += if VALUED.contains(&arg.as_str()) { 2 } else { 1 };
    }
    None
}

/// The options of a script's `#SBATCH` lines, read until its first command.
fn directives(script: &str) -> Vec<String> {
    let mut options = Vec::new();
    for line in script.lines().skip(1).map(str::trim) {
        if let Some(rest) = line.strip_prefix("#SBATCH") {
            options.extend(rest.split_whitespace().take_while(|word| !word.starts_with('#')).map(str::to_string));
        } else if !line.is_empty() && !line.starts_with('#') {
            break;
        }
    }
    options
}

/// A batch script as sbatch accepts it: not empty, and starting with `#!`.
fn check_script(text: &str) -> Result<String, Output> {
    if text.trim().is_empty() {
        return Err(fail("Batch script is empty!"));
    }
    if !text.starts_with("#!") {
        return Err(fail("This does not look like a batch script.  The first\nsbatch: error: line must start with #! followed by the path to an interpreter.\nsbatch: error: For instance: #!/bin/sh"));
    }
    Ok(text.to_string())
}

/// `-o`'s pattern with Slurm's replacements: `%j` the job id, `%N` the
/// first node, `%x` the job name, `%u` the user, `%%` a percent sign.
fn expand_pattern(pattern: &str, id: i64, node: &str, name: &str, user: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('j') => out += &id.to_string(),
            Some('N') => out += node,
            Some('x') => out += name,
            Some('u') => out += user,
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// A whole-number Megatron argument in a batch script (`--tensor-model-parallel-size 4`),
/// within what Megatron accepts here.
fn megatron_argument(script: &str, name: &str) -> Option<u32> {
    script_argument(script, name, 128)
}

/// A share in a batch script (`--gpu-memory-utilization 0.95`), in
/// thousandths, from 0.001 to 1.
fn share_argument(script: &str, name: &str) -> Option<u32> {
    let share: f64 = script_value(script, name)?.parse().ok()?;
    (share > 0.0 && share <= 1.0).then(|| (share * 1000.0).round().max(1.0) as u32)
}

/// A whole-number argument in a batch script (`--name 4` or `--name=4`),
/// the last one given, from 1 to `most`.
fn script_argument(script: &str, name: &str, most: u32) -> Option<u32> {
    script_value(script, name)?.parse::<u32>().ok().filter(|n| (1..=most).contains(n))
}

/// The value of the last `--name VALUE` or `--name=VALUE` in a batch script.
fn script_value<'s>(script: &'s str, name: &str) -> Option<&'s str> {
    let words: Vec<&str> = script.split(|c: char| c.is_whitespace() || c == '\\').filter(|w| !w.is_empty()).collect();
    let at = words.iter().rposition(|word| *word == name || word.strip_prefix(name).is_some_and(|rest| rest.starts_with('=')))?;
    words[at].split_once('=').map(|(_, v)| v).or_else(|| words.get(at + 1).copied())
}

/// `sbatch SCRIPT` for a script the lab provides: the workload starts, on
/// its nodes, when they are free; otherwise the script cannot be opened, as
/// for any file the simulation does not have.
fn launch(invocation: &Invocation, file: &str) -> Output {
    let cluster = invocation.cluster;
    // The shell has expanded `~`; a relative path is from the working directory.
    let path = crate::commands::files::View::for_command(invocation).resolve(file);
    let Some(spec) = cluster.workload_specs.iter().find(|spec| spec.script_path() == path) else {
        return fail(&format!("Unable to open file {file}"));
    };
    if cluster.workloads.len() >= crate::limits::MAX_WORKLOAD_RUNS || cluster.slurm_jobs().len() >= MAX_SLURM_JOBS {
        return fail(SUBMIT_LIMIT);
    }
    let usable =
        |host: &String| cluster.node(host).is_some_and(|n| crate::model::service::slurmd_responds(n, cluster.now) && n.scheduler == SchedulerState::Idle);
    let busy = cluster.workloads.iter().any(|w| w.running_at(cluster.now) && w.spec.nodes.iter().any(|n| spec.nodes.contains(n)));
    let id = super::next_job_id(cluster);
    let mut out = Output { stdout: format!("Submitted batch job {id}\n"), duration_ms: 1000, ..Output::default() };
    // The script as it is now: the trainee may have changed its parallelism.
    let text = crate::commands::files::View::for_command(invocation).read(&path).map(|text| text.into_owned()).unwrap_or_default();
    let (node, name) = (invocation.node.hostname.clone(), spec.name.clone());
    if let Some(load) = spec.load {
        // A server's limits are vLLM's flags; its GPUs, what Slurm gives it.
        let tensor = script_argument(&text, "--tensor-parallel-size", 64).unwrap_or(spec.tensor);
        let max_model_len = script_argument(&text, "--max-model-len", 131_072).unwrap_or(spec.seq_len);
        let max_num_seqs = script_argument(&text, "--max-num-seqs", 4_096).unwrap_or(load.max_num_seqs);
        let gpus = script_argument(&text, "--gpus-per-node", 64).unwrap_or(spec.gpus_per_node);
        let memory_permille = share_argument(&text, "--gpu-memory-utilization").unwrap_or(load.memory_permille);
        let flags = ServerFlags { max_model_len, max_num_seqs, memory_permille, gpus };
        let now = ServerFlags { max_model_len: spec.seq_len, max_num_seqs: load.max_num_seqs, memory_permille: load.memory_permille, gpus: spec.gpus_per_node };
        if (tensor, flags) != (spec.tensor, now) {
            out.changes.push(Change::ConfigureWorkload { node, name, tensor, pipeline: 1, serving: Some(flags) });
        }
    } else {
        let (tensor, pipeline) = (megatron_argument(&text, "--tensor-model-parallel-size"), megatron_argument(&text, "--pipeline-model-parallel-size"));
        let (tensor, pipeline) = (tensor.unwrap_or(spec.tensor), pipeline.unwrap_or(spec.pipeline));
        if (tensor, pipeline) != (spec.tensor, spec.pipeline) {
            out.changes.push(Change::ConfigureWorkload { node, name, tensor, pipeline, serving: None });
        }
    }
    if spec.nodes.iter().all(usable) && !busy {
        out.changes.push(Change::LaunchWorkload { node: invocation.node.hostname.clone(), name: spec.name.clone(), job: id });
        return out;
    }
    // It waits in the queue, and starts as the workload once its nodes are free.
    let unavailable: Vec<&str> = spec.nodes.iter().filter(|n| !usable(n)).map(String::as_str).collect();
    let reason =
        if unavailable.is_empty() { "Resources".to_string() } else { format!("ReqNodeNotAvail, UnavailableNodes:{}", hostlist::compress(&unavailable)) };
    let job = Job {
        id,
        name: spec.name.clone(),
        user: crate::model::node::USER.to_string(),
        nodes: spec.nodes.len(),
        nodelist: Vec::new(),
        submitted: cluster.now,
        started: None,
        reason,
        runtime: 0,
        exit_code: 0,
        cancelled: false,
        workload: true,
        batch: None,
        held: None,
    };
    out.changes.push(Change::SubmitJob { node: invocation.node.hostname.clone(), job });
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn submits_wrapped_commands() {
        let mut shell = session();
        let first = shell.run("sbatch --wrap=hostname").stdout();
        assert!(first.starts_with("Submitted batch job "));
        assert_ne!(shell.run("sbatch --wrap hostname").stdout(), first, "ids grow");
        assert_eq!(shell.run("sbatch -w gpu-002 --wrap='sudo scontrol update NodeName=$SLURM_JOB_NODELIST State=DRAIN Reason=x'").status, 0);
        assert!(shell.run("sinfo").stdout().contains("drain gpu-002"));
        assert_eq!(run_on_first_node("sbatch job.sh").stderr, "sbatch: error: Unable to open file job.sh\n");
        assert_eq!(run_on_first_node("sbatch").stderr, "sbatch: error: Batch script is empty!\n");
        assert_eq!(run_on_first_node("sbatch -p cpu --wrap=x").status, 1);
        assert_eq!(run_on_first_node("sbatch -w gpu-009 --wrap=x").status, 1);
        assert_eq!(run_on_first_node("sbatch -N 3 --wrap=x").status, 1);
        assert_eq!(run_on_first_node("sbatch --bogus").status, 1);
        assert_eq!(run_on_first_node("sbatch --wrap").status, 1);
        assert_eq!(run_on_first_node("echo hostname | sbatch").status, 1);
    }

    #[test]
    fn a_users_script_runs_with_its_directives_and_writes_its_output_file() {
        let mut shell = session();
        shell.run("printf '#%s/bin/bash\\n#SBATCH -N 2\\n#SBATCH -J nccl -o %%x-%%j.out\\nsrun -N2 hostname\\necho $SLURM_NNODES >&2\\n' '!' > ~/nccl.sbatch");
        let submitted = shell.run("sbatch ~/nccl.sbatch").stdout();
        let id = submitted.trim().strip_prefix("Submitted batch job ").expect("a job id");
        assert_eq!(shell.run(&format!("cat nccl-{id}.out")).stdout(), "gpu-001\ngpu-002\n2\n");
        // sacct keeps its step, after the batch and extern ones.
        let steps = shell.run(&format!("sacct -j {id} -n -o JobID,JobName,State,NodeList%20")).stdout();
        let rows: Vec<Vec<&str>> = steps.lines().map(|line| line.split_whitespace().collect()).collect();
        assert_eq!(rows.len(), 4, "{steps}");
        assert_eq!(rows[3], [format!("{id}.0").as_str(), "hostname", "COMPLETED", "gpu-[001-002]"], "{steps}");
        // The command line wins over the directives; -e splits the errors off.
        let id = shell.run("sbatch -N 1 -o one.out -e one.err ~/nccl.sbatch").stdout().trim().rsplit(' ').next().expect("an id").to_string();
        assert!(!id.is_empty());
        assert_eq!(shell.run("cat one.err").stdout(), "1\n");
        assert_eq!(shell.run("sbatch --wrap=hostname -o wrapped.out; cat wrapped.out").stdout().lines().last(), Some("gpu-001"));
        shell.run("echo hostname > plain.sh");
        assert!(shell.run("sbatch plain.sh").stderr().contains("This does not look like a batch script"));
    }

    #[test]
    fn a_waiting_job_starts_when_its_node_returns_and_writes_its_output() {
        let mut shell = session();
        shell.run("sudo scontrol update nodename=gpu-002 state=drain reason=maintenance");
        let id = shell.run("sbatch -w gpu-002 -o out-%j.txt --wrap='hostname; echo $SLURM_JOB_NODELIST'").stdout();
        let id = id.trim().rsplit(' ').next().expect("an id").to_string();
        assert_eq!(shell.run("squeue -h -o '%i %t %R'").stdout(), format!("{id} PD (ReqNodeNotAvail, UnavailableNodes:gpu-002)\n"));
        assert_eq!(shell.run(&format!("cat out-{id}.txt")).status, 1, "nothing ran yet");
        // Still waiting after a while: nothing frees a drained node on its own.
        shell.run("sleep 600");
        assert!(shell.run("squeue -h -o %t").stdout().starts_with("PD"));
        shell.run("sudo scontrol update nodename=gpu-002 state=resume; sleep 5");
        assert_eq!(shell.run(&format!("cat out-{id}.txt")).stdout(), "gpu-002\ngpu-002\n");
        let started = shell.run(&format!("sacct -j {id} -X -n -o State,NodeList")).stdout();
        assert!(started.contains("COMPLETED") && started.contains("gpu-002"), "{started}");
        // The saved session gives the same record and file.
        let mut restored = crate::testing::reloaded(&shell);
        assert_eq!(restored.run(&format!("cat out-{id}.txt")).stdout(), "gpu-002\ngpu-002\n");
        assert!(restored.run(&format!("sacct -j {id} -X -n -o State")).stdout().contains("COMPLETED"));
    }

    #[test]
    fn a_held_job_waits_until_it_is_released() {
        let mut shell = session();
        shell.run("sudo scontrol update nodename=gpu-002 state=drain reason=maintenance");
        let id = shell.run("sbatch -w gpu-002 --wrap=hostname -o held.out").stdout().trim().rsplit(' ').next().expect("an id").to_string();
        assert_eq!(shell.run(&format!("scontrol hold {id}")).status, 0);
        assert_eq!(shell.run("squeue -h -o %R").stdout(), "(JobHeldUser)\n");
        shell.run("sudo scontrol update nodename=gpu-002 state=resume; sleep 60");
        assert_eq!(shell.run("cat held.out").status, 1, "a held job does not start");
        assert_eq!(shell.run(&format!("scontrol release {id}")).status, 0);
        assert_eq!(shell.run("cat held.out").stdout(), "gpu-002\n");
        assert_eq!(shell.run(&format!("scontrol hold {id}")).stderr(), "slurm_suspend error: Job is no longer pending execution\n");
        assert_eq!(shell.run("scontrol hold 1").stderr(), "slurm_suspend error: Invalid job id specified\n");
    }

    #[test]
    fn a_job_waits_for_a_node_that_boots() {
        let mut shell = session();
        shell.run("ssh gpu-002 sudo reboot");
        shell.run("sudo scontrol update nodename=gpu-002 state=resume");
        let out = shell.run("sbatch -w gpu-002 --wrap=hostname -o booted.out");
        assert_eq!(out.status, 0);
        assert!(shell.run("squeue -h -o %t").stdout().starts_with("PD"));
        shell.run("sleep 300");
        assert_eq!(shell.run("cat booted.out").stdout(), "gpu-002\n");
    }

    #[test]
    fn a_job_that_does_not_fit_fails_until_its_script_splits_the_model() {
        let lab = format!(
            "{}\n[[jobs]]\nname = \"big\"\nparams = \"70B\"\ntensor = 4\nglobal_batch = 32\nseq_len = 2048\nstart = \"launch\"\n",
            crate::testing::TWO_NODE_LAB
        );
        let mut shell = crate::testing::shell(crate::load(&lab).expect("the lab is valid").instantiate(1));
        // Each run's own log: `sbatch` names its job.
        let mut run = |line: &str, wait: u32| {
            let submitted = shell.run(line).stdout();
            let id = submitted.trim().rsplit(' ').next().unwrap_or_default().to_string();
            shell.run(&format!("sleep {wait}"));
            shell.run(&format!("cat ~/slurm-{id}.out")).stdout()
        };
        let log = run("sbatch ~/big.sbatch", 200);
        assert!(log.contains("number of parameters on (tensor, pipeline) model parallel rank (0, 0): 17638426624\n"), "{log}");
        assert!(log.contains("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "), "{log}");
        assert!(log.contains(". GPU 0 has a total capacity of 79.11 GiB of which "), "{log}");
        assert!(
            log.ends_with("srun: error: gpu-001: tasks 0-7: Exited with exit code 1\nsrun: error: gpu-002: tasks 8-15: Exited with exit code 1\n"),
            "{log}"
        );
        // A split Megatron refuses fails at once with its assertion.
        let log = run("sed -i 's/--tensor-model-parallel-size 4/--tensor-model-parallel-size 3/' ~/big.sbatch; sbatch ~/big.sbatch", 30);
        assert!(log.starts_with("[rank0]: Traceback (most recent call last):\n"), "{log}");
        assert!(log.contains("[rank0]: AssertionError: world size (16) is not divisible by total_model_size (total_model_size=3)\n"), "{log}");
        // Sixteen-way model parallelism fits: the job steps and holds most of each GPU.
        let log = run("sed -i 's/--tensor-model-parallel-size 3/--tensor-model-parallel-size 8/; s/--pipeline-model-parallel-size 1/--pipeline-model-parallel-size 2/' ~/big.sbatch; sbatch ~/big.sbatch", 300);
        assert!(log.contains(" iteration ") && !log.contains("Error"), "{log}");
        let used = shell.run("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0").stdout();
        assert!(used.trim().parse::<u64>().is_ok_and(|mib| (75_000..81_000).contains(&mib)), "{used}");
    }
}
