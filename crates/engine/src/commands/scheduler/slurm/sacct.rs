//! `sacct`: job accounting, from the jobs `sbatch` recorded: the default
//! fields `JobID` (left-justified, 12 wide), `JobName`, `Partition`,
//! `Account`, `AllocCPUS`, `State` (10, right-justified) and `ExitCode`
//! (8), each followed by a space, over a line of dashes; a value too long
//! for its column is cut with a `+` at its end, as sacct does. A job that
//! ran has its `.batch` and `.extern` steps below it, then the steps its
//! `srun`s ran, `.0` on (`Change::JobStep`; `-X`: the jobs only). Without `-a` or `-u`, the user's own jobs. `-o/--format` takes
//! `Field[%WIDTH]` items (width 10 when not given, 12 for JobID, 8 for
//! ExitCode, 19 for times); an unknown field is Slurm's error. `-p`/`-P`
//! print `|`-separated values; `-n` drops the header. The account is the
//! lab's one, `default`.

use super::{bad_option, hostlist, timestamp, PARTITION};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::job::{sacct_elapsed, Job, JobState};

pub struct Sacct;

static SIGNATURE: Signature = Signature {
    name: "sacct",
    summary: "show accounting data for finished and running Slurm jobs",
    usage: "sacct [-a] [-X] [-j JOBIDS] [-S TIME] [-E TIME] [-s STATES] [-N HOSTLIST] [-o FIELDS] [-n] [-p|-P]",
    flags: &[
        Flag { short: Some('a'), long: Some("allusers"), value: None, help: "jobs of every user" },
        Flag { short: Some('X'), long: Some("allocations"), value: None, help: "jobs only, not their steps" },
        Flag { short: Some('j'), long: Some("jobs"), value: Some("JOBIDS"), help: "these jobs" },
        Flag { short: Some('u'), long: Some("user"), value: Some("USERS"), help: "jobs of these users" },
        Flag { short: Some('S'), long: Some("starttime"), value: Some("TIME"), help: "jobs since TIME" },
        Flag { short: Some('E'), long: Some("endtime"), value: Some("TIME"), help: "jobs before TIME" },
        Flag { short: Some('s'), long: Some("state"), value: Some("STATES"), help: "jobs in these states" },
        Flag { short: Some('N'), long: Some("nodelist"), value: Some("HOSTLIST"), help: "jobs that ran on these nodes" },
        Flag { short: Some('o'), long: Some("format"), value: Some("FIELDS"), help: "fields to show, e.g. JobID,State,NodeList%20" },
        Flag { short: Some('n'), long: Some("noheader"), value: None, help: "no header" },
        Flag { short: Some('p'), long: Some("parsable"), value: None, help: "fields separated by |, with a trailing |" },
        Flag { short: Some('P'), long: Some("parsable2"), value: None, help: "fields separated by |" },
    ],
    examples: &[Example { command: "sacct -a -X", description: "every user's jobs today" }],
};

const DEFAULT: &str = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";

impl Command for Sacct {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut format, mut header, mut parsable) = (DEFAULT.to_string(), true, None);
        let (mut all_users, mut users, mut ids, mut jobs_only) = (false, None::<Vec<String>>, None::<Vec<String>>, false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('o') => format = value.unwrap_or_default(),
                    Some('n') => header = false,
                    Some('p') => parsable = Some("|"),
                    Some('P') => parsable = Some(""),
                    Some('a') => all_users = true,
                    Some('X') => jobs_only = true,
                    Some('u') => users = value.map(|v| v.split(',').map(str::to_string).collect()),
                    Some('j') => ids = value.map(|v| v.split(',').map(str::to_string).collect()),
                    _ => {}
                },
                Arg::Unknown(flag) => return bad_option("sacct", &flag),
                Arg::MissingValue(flag) => return bad_option("sacct", &format!("-{}", flag.short.unwrap_or('?'))),
                Arg::Positional(_) => {}
            }
        }
        let mut columns: Vec<(String, usize)> = Vec::new();
        for item in format.split(',').filter(|f| !f.is_empty()) {
            let (name, width) = item.split_once('%').unwrap_or((item, ""));
            let Some((canonical, default)) = known_field(name) else {
                return Output::error(format!("sacct: error: Invalid field requested: \"{name}\"\n"), 1);
            };
            columns.push((canonical.to_string(), width.parse::<usize>().unwrap_or(default)));
        }
        if columns.is_empty() {
            return Output::error("sacct: error: No fields specified\n", 1);
        }
        let me = invocation.env.get("USER").cloned().unwrap_or_default();
        let users = if all_users { None } else { Some(users.unwrap_or_else(|| vec![me])) };
        let cluster = invocation.cluster;
        let cpus = cluster.preset.host.cpus() as usize;
        let mut rows: Vec<Vec<String>> = Vec::new();
        for job in &cluster.slurm_jobs() {
            if users.as_ref().is_some_and(|users| !users.contains(&job.user)) || ids.as_ref().is_some_and(|ids| !ids.contains(&job.id.to_string())) {
                continue;
            }
            rows.push(columns.iter().map(|(name, _)| value(job, None, name, cluster.now, cpus)).collect());
            if !jobs_only && job.started.is_some() {
                for step in ["batch", "extern"] {
                    rows.push(columns.iter().map(|(name, _)| value(job, Some(step), name, cluster.now, cpus)).collect());
                }
                // Its srun steps, numbered from 0, each read as a job of its own.
                for (number, step) in cluster.job_steps(job.id).into_iter().enumerate() {
                    let ran = Job {
                        name: step.name.clone(),
                        nodes: step.nodelist.len(),
                        nodelist: step.nodelist.clone(),
                        started: Some(step.started),
                        runtime: step.runtime,
                        exit_code: step.exit_code,
                        ..job.clone()
                    };
                    let number = number.to_string();
                    rows.push(columns.iter().map(|(name, _)| value(&ran, Some(&number), name, cluster.now, cpus)).collect());
                }
            }
        }
        let mut out = String::new();
        if let Some(end) = parsable {
            let mut line = |cells: Vec<String>| out += &format!("{}{end}\n", cells.join("|"));
            if header {
                line(columns.iter().map(|(name, _)| name.clone()).collect());
            }
            for row in rows {
                line(row);
            }
            return Output::ok(out);
        }
        let cell = |text: &str, width: usize, at: usize| -> String {
            let text = if text.chars().count() > width { text.chars().take(width.saturating_sub(1)).collect::<String>() + "+" } else { text.to_string() };
            let left = columns[at].0.eq_ignore_ascii_case("jobid");
            if left {
                format!("{text:<width$}")
            } else {
                format!("{text:>width$}")
            }
        };
        if header {
            let names: Vec<String> = columns.iter().enumerate().map(|(at, (name, width))| cell(name, *width, at)).collect();
            let dashes: Vec<String> = columns.iter().map(|(_, width)| "-".repeat(*width)).collect();
            out += &format!("{} \n{} \n", names.join(" "), dashes.join(" "));
        }
        for row in rows {
            let cells: Vec<String> = row.iter().enumerate().map(|(at, text)| cell(text, columns[at].1, at)).collect();
            out += &format!("{} \n", cells.join(" "));
        }
        Output::ok(out)
    }
}

/// A field sacct knows, as its header spells it, and its default width.
fn known_field(name: &str) -> Option<(&'static str, usize)> {
    const FIELDS: [(&str, usize); 14] = [
        ("JobID", 12),
        ("JobName", 10),
        ("Partition", 10),
        ("Account", 10),
        ("AllocCPUS", 10),
        ("State", 10),
        ("ExitCode", 8),
        ("NodeList", 15),
        ("NNodes", 8),
        ("Elapsed", 10),
        ("Start", 19),
        ("End", 19),
        ("Submit", 19),
        ("User", 9),
    ];
    FIELDS.iter().find(|(field, _)| field.eq_ignore_ascii_case(name)).copied()
}

/// One field of a job (`step` None) or of one of its steps.
fn value(job: &Job, step: Option<&str>, name: &str, now: i64, cpus: usize) -> String {
    let state = job.state_at(now);
    let nodes: Vec<&str> = job.nodelist.iter().map(String::as_str).collect();
    let ran = job.started.is_some();
    let time = |at: Option<i64>| at.map_or_else(|| "Unknown".to_string(), timestamp);
    match name.to_ascii_lowercase().as_str() {
        "jobid" => step.map_or_else(|| job.id.to_string(), |step| format!("{}.{step}", job.id)),
        // A numbered step is named after its program; batch and extern after themselves.
        "jobname" => step.filter(|step| step.parse::<u32>().is_err()).unwrap_or(&job.name).to_string(),
        "partition" => {
            if step.is_some() {
                String::new()
            } else {
                PARTITION.to_string()
            }
        }
        "account" => "default".to_string(),
        "alloccpus" => match step {
            Some("batch") => cpus.to_string(),
            _ if ran => (cpus * job.nodelist.len()).to_string(),
            _ => "0".to_string(),
        },
        // The extern step holds the allocation: it ends with the job, always clean.
        "state" if step == Some("extern") && state != JobState::Running => "COMPLETED".to_string(),
        // sacct names who cancelled a job, by uid (the trainee is 1000).
        "state" if state == JobState::Cancelled && step.is_none() => "CANCELLED by 1000".to_string(),
        "state" => state.long().to_string(),
        "exitcode" if step == Some("extern") => "0:0".to_string(),
        // A cancelled job ended on SIGTERM (15).
        "exitcode" if state == JobState::Cancelled => "0:15".to_string(),
        "exitcode" => format!("{}:0", if state == JobState::Running { 0 } else { job.exit_code }),
        "nodelist" => match step {
            Some("batch") => nodes.first().map_or_else(String::new, |host| host.to_string()),
            _ if ran => hostlist::compress(&nodes),
            _ => "None assigned".to_string(),
        },
        "nnodes" => {
            if step == Some("batch") {
                "1".to_string()
            } else {
                job.nodes.to_string()
            }
        }
        "elapsed" => sacct_elapsed(job.elapsed_at(now)),
        "start" => time(job.started),
        "end" => time(job.ended_at(now)),
        "submit" => timestamp(job.submitted),
        "user" => {
            if step.is_some() {
                String::new()
            } else {
                job.user.clone()
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn prints_the_header_of_an_empty_history() {
        assert_eq!(
            run_on_first_node("sacct").stdout,
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        );
        assert_eq!(run_on_first_node("sacct -P -o JobID,State").stdout, "JobID|State\n");
        assert_eq!(run_on_first_node("sacct -n").stdout, "");
        assert_eq!(run_on_first_node("sacct --bogus").status, 1);
        assert_eq!(run_on_first_node("sacct -o JobID,NodeList%20").stdout.lines().next(), Some("JobID                    NodeList "));
    }
}
