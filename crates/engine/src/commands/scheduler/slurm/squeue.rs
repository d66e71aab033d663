//! `squeue`: the job queue. The model has no jobs, so it is the header in
//! Slurm's default layout (`%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R`).

use super::bad_option;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

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
    ],
    examples: &[
        Example { command: "squeue", description: "every job in the queue" },
        Example { command: "squeue -u $USER", description: "my jobs" },
    ],
};

const HEADER: &str = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n";
const LONG_HEADER: &str =
    "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n";

impl Command for Squeue {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut header, mut long) = (true, false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('h') => header = false,
                    Some('l') => long = true,
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
        if !header {
            return Output::default();
        }
        if long {
            // `-l` starts with the time of the query.
            let now = crate::model::time::ctime(invocation.cluster.now);
            return Output::ok(format!("{now}\n{LONG_HEADER}"));
        }
        Output::ok(HEADER)
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
    }
}
