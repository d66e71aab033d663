//! The engine's bounds, in one place. Everything a trainee or an author
//! controls is bounded here, so that no input can hang the page or exhaust
//! its memory; where a real tool has its own limit and message, the tool
//! uses that instead.

/// How deep command lines may run each other: `ssh` running `pdsh` running
/// `watch` running `sudo env srun ...`; shell functions calling functions
/// and compound commands inside them count too, so the stack stays bounded. Real systems have no single limit
/// here; a simulation in a browser tab needs one.
pub const MAX_NESTED_COMMANDS: u32 = 32;

/// How deep the shell's own syntax may nest in one line: compound commands
/// inside each other, `$(...)` inside `$(...)`. Below
/// [`MAX_NESTED_COMMANDS`], so that every line that parses can run.
pub const MAX_SHELL_DEPTH: usize = 24;

/// How many commands one command line may run (loops included), and how
/// many bytes its expansions may build altogether; past either the line
/// stops with a message. A runaway `while true` ends here natively; in the
/// browser the worker's real-time watchdog usually ends it first.
pub const MAX_SHELL_COMMANDS: u64 = 100_000;
pub const MAX_SHELL_WORK_BYTES: u64 = 256 << 20;

/// The longest value one expansion (a variable, a word, a command
/// substitution) may have.
pub const MAX_WORD_BYTES: usize = 1 << 20;

/// How many words one brace expansion may make (`{1..99999999}` is refused, never built).
pub const MAX_BRACE_WORDS: usize = 65_536;

/// What one command line may print, in bytes; the rest is dropped with a
/// notice on standard error.
pub const MAX_OUTPUT_BYTES: usize = 8 << 20;

/// The longest command line the shell reads, in bytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Background jobs one shell may have at once: past this bash's `fork`
/// fails, as it does at a process limit.
pub const MAX_JOBS: usize = 1024;

/// Executions one command line records for grading (a loop may run a
/// program many more times; past this the rest run unrecorded).
pub const MAX_EXECUTIONS_PER_LINE: usize = 1024;

/// Shells one lab may have open at once (terminal tabs): enough for a
/// server and a client, a monitor and a spare.
pub const MAX_SHELLS: usize = 4;

/// How many names one hostlist may expand to, and how many bytes they may
/// take together (`gpu-[1-99999999]` is refused, never built).
pub const MAX_HOSTLIST_NAMES: usize = 65_536;
pub const MAX_HOSTLIST_BYTES: usize = 4 << 20;

/// The most tasks a launcher (`srun`, `mpirun`) starts for one step.
pub const MAX_TASKS: u64 = 65_536;

/// How deep the languages tools read may nest: awk programs (parentheses,
/// blocks, unary operators), regular expressions (groups) and find's
/// expressions (`(` and `!`).
pub const MAX_SYNTAX_DEPTH: usize = 50;

/// The most steps one awk program runs, and the most bytes of strings it
/// builds; past either, it stops with a message.
pub const MAX_AWK_STEPS: u64 = 5_000_000;
pub const MAX_AWK_WORK_BYTES: u64 = 256 << 20;

/// Commands one sed script may execute (`:a;ba` loops forever in GNU sed).
pub const MAX_SED_STEPS: u64 = 5_000_000;

/// Entries one `find` may visit.
pub const MAX_FIND_VISITS: usize = 100_000;

/// Differences `diff` searches a shortest edit script for; past them the
/// differing middle is shown as one change.
pub const MAX_DIFF_EDITS: usize = 2_000;

/// Thread steps one tool's regular-expression matching may take (matching
/// is linear in text times pattern, and both may be large).
pub const MAX_REGEX_STEPS: u64 = 5_000_000;

/// Lab files: their size, and how many faults, questions and values of a
/// variable one lab may have (nodes: `lab::MAX_NODES`). Past these, `check` reports the problem at its
/// place in the file.
pub const MAX_LAB_BYTES: usize = 1 << 20;
pub const MAX_FAULTS: usize = 256;
pub const MAX_QUESTIONS: usize = 256;
pub const MAX_VAR_VALUES: u64 = 100_000;
/// How many NVLinks a fault may name (no GPU has more than 18 today).
pub const MAX_NVLINKS: u32 = 64;

/// How deep lab Markdown may nest (quotes, lists, emphasis); deeper text is
/// flattened into the deepest container.
pub const MAX_MARKDOWN_DEPTH: usize = 24;

/// The message for a command that would nest deeper than
/// [`MAX_NESTED_COMMANDS`]; status 126, as for a command that cannot run.
pub fn nesting_error(program: &str) -> String {
    format!("{program}: cannot start another nested command: this simulated cluster runs command lines inside each other at most {MAX_NESTED_COMMANDS} deep\n")
}

/// The notice after output cut at [`MAX_OUTPUT_BYTES`].
pub fn output_cut_notice() -> String {
    format!("clusterlab: output limit reached ({} MiB per command line); the rest was not shown\n", MAX_OUTPUT_BYTES >> 20)
}

/// Cuts `text` to at most `limit` bytes, at a character boundary. True
/// when something was cut.
pub fn truncate_to(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    true
}

/// A lab shared as a link (`#/shared/...`) carries at most this many
/// characters after `#/shared/`: every browser opens links this long and
/// mail and chat tools pass them whole; it holds a lab file of about 25 KB
/// (the labs in labs/ take 1,600 to 2,000). Longer ones are refused before
/// they are decoded; larger labs travel as files.
pub const MAX_SHARED_LINK_CHARS: usize = 16_000;

/// Jobs Slurm keeps for one lab (`sbatch` past them is refused with
/// Slurm's job-submit-limit error): each is a record in the history.
pub const MAX_SLURM_JOBS: usize = 10_000;
/// Batch jobs that may wait in the queue at once: each keeps its script
/// and environment in the saved session until it starts.
pub const MAX_PENDING_BATCH_JOBS: usize = 64;

/// Workloads a lab may declare, and the iterations one may train for: the
/// job log is walked step by step, so its length is bounded.
pub const MAX_WORKLOADS: usize = 16;
/// Pods the cluster holds at once, the lab's and the trainee's: each
/// change reschedules the pending ones over every node, so their number is
/// bounded, as a namespace's ResourceQuota on `pods` bounds it (kubectl
/// apply answers with the quota's refusal).
pub const MAX_PODS: usize = 64;
/// Runs of the lab's jobs in one session, relaunches included (each is
/// walked when its log is read).
pub const MAX_WORKLOAD_RUNS: usize = 64;
/// Checkpoints of one job kept on the shared file system: the newest, as
/// a cluster's cleanup keeps them (every file of each is listed by `ls`
/// and walked by `du` and `find`).
pub const MAX_CHECKPOINTS_KEPT: usize = 32;
/// States of the cluster a monitor's history keeps (one before each fault
/// and change): past these, the oldest but the first merge into the next.
pub const MAX_ERAS_KEPT: usize = 64;
pub const MAX_TRAIN_ITERATIONS: u32 = 200_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        let mut text = "aé".to_string();
        assert!(truncate_to(&mut text, 2));
        assert_eq!(text, "a");
        let mut short = "abc".to_string();
        assert!(!truncate_to(&mut short, 3));
    }
}
