//! `squeue`: the job queue, in Slurm's default layout (`%.18i %.9P %.8j
//! %.8u %.2t %.10M %.6D %R`) or `-l`'s (`%.18i %.9P %.8j %.8u %.8T %.10M
//! %.9l %.6D %R`): the jobs `sbatch` recorded that are pending or running
//! now, a pending one with its reason in parentheses. `-u`, `--me`, `-j`
//! and `-t` filter.

use super::format;
use super::{bad_option, field, hostlist, PARTITION};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::job::{squeue_time, Job, JobState};

pub struct Squeue;

static SIGNATURE: Signature = Signature {
    name: "squeue",
    summary: "view information about jobs in the Slurm queue",
    usage: "squeue [OPTIONS]",
    flags: &[
        Flag { short: Some('u'), long: Some("user"), value: Some("USER"), help: "jobs of these users" },
        Flag { short: None, long: Some("me"), value: None, help: "my jobs" },
        Flag { short: Some('p'), long: Some("partition"), value: Some("PARTITION"), help: "jobs in these partitions" },
        Flag { short: Some('t'), long: Some("states"), value: Some("STATES"), help: "jobs in these states" },
        Flag { short: Some('j'), long: Some("jobs"), value: Some("JOBIDS"), help: "these jobs" },
        Flag { short: Some('w'), long: Some("nodelist"), value: Some("HOSTLIST"), help: "jobs on these nodes" },
        Flag { short: Some('h'), long: Some("noheader"), value: None, help: "no header" },
        Flag { short: Some('l'), long: Some("long"), value: None, help: "long format, with the time limit" },
        Flag { short: Some('o'), long: Some("format"), value: Some("FORMAT"), help: "fields to show, e.g. \"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R\"" },
    ],
    examples: &[Example { command: "squeue", description: "every job in the queue" }, Example { command: "squeue -u $USER", description: "my jobs" }],
};

/// A job's limit in a partition without one (sinfo says `infinite` of the partition).
const JOB_TIME_LIMIT: &str = "UNLIMITED";

/// The fields `-o` knows, with their headers.
const FORMAT_FIELDS: &[(char, &str)] = &[
    ('a', "ACCOUNT"),
    ('A', "JOBID"),
    ('C', "CPUS"),
    ('D', "NODES"),
    ('i', "JOBID"),
    ('j', "NAME"),
    ('l', "TIME_LIMIT"),
    ('M', "TIME"),
    ('N', "NODELIST"),
    ('P', "PARTITION"),
    ('r', "REASON"),
    ('R', "NODELIST(REASON)"),
    ('S', "START_TIME"),
    ('t', "ST"),
    ('T', "STATE"),
    ('u', "USER"),
    ('V', "SUBMIT_TIME"),
];

const HEADER: &str = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n";
const LONG_HEADER: &str = "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n";

impl Command for Squeue {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut header, mut long, mut format) = (true, false, None);
        let (mut users, mut ids, mut states): (Option<Vec<String>>, Option<Vec<String>>, Option<Vec<String>>) = (None, None, None);
        let list = |value: Option<String>| value.map(|v| v.split(',').map(|item| item.trim().to_string()).collect::<Vec<_>>());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match (flag.short, flag.long) {
                    (Some('h'), _) => header = false,
                    (Some('l'), _) => long = true,
                    (Some('o'), _) => format = value,
                    (Some('u'), _) => users = list(value),
                    (Some('j'), _) => ids = list(value),
                    (Some('t'), _) => states = list(value),
                    (_, Some("me")) => users = Some(vec![invocation.env.get("USER").cloned().unwrap_or_default()]),
                    _ => {}
                },
                Arg::Unknown(flag) => return bad_option("squeue", &flag),
                Arg::MissingValue(flag) => {
                    let complaint = crate::commands::options::requires_argument("squeue", flag.short, flag.long);
                    return Output::error(format!("{complaint}Try \"squeue --help\" for more information\n"), 1);
                }
                Arg::Positional(_) => {}
            }
        }
        let now = invocation.cluster.now;
        let wanted = |job: &Job| {
            let state = job.state_at(now);
            matches!(state, JobState::Pending | JobState::Running)
                && users.as_ref().is_none_or(|users| users.contains(&job.user))
                && ids.as_ref().is_none_or(|ids| ids.contains(&job.id.to_string()))
                && states.as_ref().is_none_or(|states| states.iter().any(|s| s.eq_ignore_ascii_case(state.compact()) || s.eq_ignore_ascii_case(state.long())))
        };
        let cpus = invocation.cluster.preset.host.cpus() as usize;
        let jobs: Vec<Job> = invocation.cluster.slurm_jobs().into_iter().filter(|job| wanted(job)).collect();
        if let Some(format) = format {
            let parts = match format::parse(&format, FORMAT_FIELDS, "job") {
                Ok(parts) => parts,
                Err(message) => return Output::error(format!("squeue: error: {message}\n"), 1),
            };
            let mut out = if header { format::header(&parts, FORMAT_FIELDS) } else { String::new() };
            for job in &jobs {
                out += &format::render(&parts, |kind| cell(kind, job, now, cpus));
            }
            return Output::ok(out);
        }
        let mut out = String::new();
        if header {
            if long {
                // `-l` starts with the time of the query.
                out = format!("{}\n{LONG_HEADER}", crate::model::time::ctime(now));
            } else {
                out = HEADER.to_string();
            }
        }
        for job in jobs {
            let state = job.state_at(now);
            let where_ = cell('R', &job, now, cpus);
            let (id, part, name, user) = (format!("{:>18}", job.id), field(PARTITION, 9, true), field(&job.name, 8, true), field(&job.user, 8, true));
            let time = format!("{:>10}", squeue_time(job.elapsed_at(now)));
            out += &if long {
                format!("{id} {part} {name} {user} {} {time} {} {:>6} {where_}\n", field(state.long(), 8, true), field(JOB_TIME_LIMIT, 9, true), job.nodes)
            } else {
                format!("{id} {part} {name} {user} {:>2} {time} {:>6} {where_}\n", state.compact(), job.nodes)
            };
        }
        Output::ok(out)
    }
}

/// One job's value of an `-o` field.
fn cell(kind: char, job: &Job, now: crate::model::time::EpochSeconds, cpus_per_node: usize) -> String {
    let state = job.state_at(now);
    let nodes = || hostlist::compress(&job.nodelist.iter().map(String::as_str).collect::<Vec<_>>());
    match kind {
        'a' => "default".to_string(),
        'A' | 'i' => job.id.to_string(),
        // Jobs hold whole nodes (`--exclusive`).
        'C' => (job.nodes * cpus_per_node).to_string(),
        'D' => job.nodes.to_string(),
        'j' => job.name.clone(),
        'l' => JOB_TIME_LIMIT.to_string(),
        'M' => squeue_time(job.elapsed_at(now)),
        'N' => nodes(),
        'P' => PARTITION.to_string(),
        'r' => {
            if state == JobState::Pending {
                job.waits_for().to_string()
            } else {
                "None".to_string()
            }
        }
        'R' if state == JobState::Pending => format!("({})", job.waits_for()),
        'R' => nodes(),
        'S' => job.started.map_or("N/A".to_string(), super::timestamp),
        't' => state.compact().to_string(),
        'T' => state.long().to_string(),
        'u' => job.user.clone(),
        'V' => super::timestamp(job.submitted),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn empty_queue_is_the_header() {
        let out = run_on_first_node("squeue");
        assert_eq!(out.stdout, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n");
        assert_eq!(run_on_first_node("squeue -h").stdout, "");
        assert_eq!(run_on_first_node("squeue -Z").status, 1);
        assert_eq!(run_on_first_node("squeue -o '%i %T'").stdout, "JOBID STATE\n");
        assert_eq!(run_on_first_node("squeue -o '%k'").stderr, "squeue: error: Invalid job format specification: k\n");
    }

    #[test]
    fn formats_name_their_fields() {
        let mut shell = crate::testing::session();
        let id = shell.run("sbatch --wrap='sleep 600'").stdout().trim().rsplit(' ').next().expect("an id").to_string();
        assert_eq!(shell.run("squeue -h -o '%i %T %D %N %j'").stdout(), format!("{id} RUNNING 1 gpu-001 wrap\n"));
    }
}
