//! `scancel`: ends jobs. A workload's processes leave its GPUs and its log
//! gets slurmstepd's `CANCELLED` lines; a batch job's record ends. Jobs are
//! named by id or selected with `-u` and `-n`; silent when it works, as
//! scancel is, with its error for an id it does not know or a job that has
//! already ended.

use super::bad_option;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::job::JobState;

pub struct Scancel;

static SIGNATURE: Signature = Signature {
    name: "scancel",
    summary: "signal or cancel Slurm jobs",
    usage: "scancel [OPTIONS] [JOBID...]",
    flags: &[
        Flag { short: Some('u'), long: Some("user"), value: Some("USER"), help: "the jobs of this user" },
        Flag { short: Some('n'), long: Some("name"), value: Some("NAME"), help: "the jobs with this name" },
        Flag { short: Some('s'), long: Some("signal"), value: Some("SIGNAL"), help: "the signal to send (the job ends either way here)" },
        Flag { short: Some('v'), long: Some("verbose"), value: None, help: "say what is done" },
    ],
    examples: &[
        Example { command: "scancel 41234", description: "cancel job 41234" },
        Example { command: "scancel -u $USER", description: "cancel all my jobs" },
    ],
};

impl Command for Scancel {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut user, mut name, mut ids) = (None, None, Vec::new());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('u') => user = value,
                    Some('n') => name = value,
                    _ => {}
                },
                Arg::Unknown(flag) => return bad_option("scancel", &flag),
                Arg::MissingValue(flag) => {
                    let complaint = crate::commands::options::requires_argument("scancel", flag.short, flag.long);
                    return Output::error(format!("{complaint}Try \"scancel --help\" for more information\n"), 1);
                }
                Arg::Positional(id) => ids.push(id),
            }
        }
        if ids.is_empty() && user.is_none() && name.is_none() {
            return Output::error("scancel: error: No job identification provided\n", 1);
        }
        let cluster = invocation.cluster;
        let jobs = cluster.slurm_jobs();
        let mut out = Output { duration_ms: 200, ..Output::default() };
        let cancel = |id: i64, out: &mut Output| out.changes.push(Change::CancelJob { node: invocation.node.hostname.clone(), job: id });
        for text in &ids {
            // A step (`41234.0`) is cancelled with its job here.
            let Some(id) = text.split('.').next().and_then(|id| id.parse::<i64>().ok()).filter(|id| *id > 0) else {
                out.stderr += &format!("scancel: error: Invalid job id {text}\n");
                out.status = 1;
                continue;
            };
            match jobs.iter().find(|job| job.id == id).map(|job| job.state_at(cluster.now)) {
                None => {
                    out.stderr += &format!("scancel: error: Kill job error on job id {id}: Invalid job id specified\n");
                    out.status = 1;
                }
                Some(JobState::Running | JobState::Pending) => cancel(id, &mut out),
                Some(_) => {
                    out.stderr += &format!("scancel: error: Kill job error on job id {id}: Job/step already completing or completed\n");
                    out.status = 1;
                }
            }
        }
        if ids.is_empty() {
            for job in &jobs {
                let chosen = user.as_ref().is_none_or(|u| *u == job.user) && name.as_ref().is_none_or(|n| *n == job.name);
                if chosen && matches!(job.state_at(cluster.now), JobState::Running | JobState::Pending) {
                    cancel(job.id, &mut out);
                }
            }
        }
        out
    }
}
