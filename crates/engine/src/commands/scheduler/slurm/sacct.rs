//! `sacct`: job accounting. The model keeps no job history (squeue's queue
//! is empty, and `sbatch --wrap` jobs are not recorded), so sacct prints its
//! header and nothing else: the default fields `JobID` (left-justified, 12
//! wide), `JobName`, `Partition`, `Account`, `AllocCPUS`, `State` (10,
//! right-justified) and `ExitCode` (8), each followed by a space, over a
//! line of dashes. `-o/--format` takes `Field[%WIDTH]` items (width 10 when
//! not given, 12 for JobID, 8 for ExitCode); `-p`/`-P` print `|`-separated
//! headers; `-n` prints nothing.

use super::bad_option;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

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
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('o') => format = value.unwrap_or_default(),
                    Some('n') => header = false,
                    Some('p') => parsable = Some("|"),
                    Some('P') => parsable = Some(""),
                    _ => {}
                },
                Arg::Unknown(flag) => return bad_option("sacct", &flag),
                Arg::MissingValue(flag) => return bad_option("sacct", &format!("-{}", flag.short.unwrap_or('?'))),
                Arg::Positional(_) => {}
            }
        }
        if !header {
            return Output::default();
        }
        let mut names = Vec::new();
        let mut dashes = Vec::new();
        let mut count = 0;
        for item in format.split(',').filter(|f| !f.is_empty()) {
            count += 1;
            let (name, width) = item.split_once('%').unwrap_or((item, ""));
            let id = name.eq_ignore_ascii_case("jobid");
            let width = width.parse::<usize>().unwrap_or(if id { 12 } else if name.eq_ignore_ascii_case("exitcode") { 8 } else { 10 });
            if parsable.is_some() {
                names.push(name.to_string());
                continue;
            }
            names.push(super::field(name, width, !id));
            dashes.push("-".repeat(width));
        }
        if count == 0 {
            return Output::error("sacct: error: No fields specified\n", 1);
        }
        Output::ok(match parsable {
            Some(end) => format!("{}{end}\n", names.join("|")),
            None => format!("{} \n{} \n", names.join(" "), dashes.join(" ")),
        })
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
