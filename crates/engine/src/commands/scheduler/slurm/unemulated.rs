//! Slurm client commands installed on every node that the lab does not
//! emulate: `salloc` (an interactive allocation would need a shell of its
//! own) and `sstat` (live step statistics). They say so and point to what
//! does the work here, instead of bash's "command not found".

use crate::commands::{Command, Invocation, Output, Signature};

pub struct Salloc;
pub struct Sstat;

static SALLOC: Signature = Signature {
    name: "salloc",
    summary: "obtain a Slurm job allocation (not emulated: use srun or sbatch)",
    usage: "salloc [OPTIONS] [COMMAND]",
    flags: &[],
    examples: &[],
};

static SSTAT: Signature = Signature {
    name: "sstat",
    summary: "statistics of a running job's steps (not emulated: use sacct)",
    usage: "sstat [OPTIONS] -j JOBID",
    flags: &[],
    examples: &[],
};

impl Command for Salloc {
    fn signature(&self) -> &'static Signature {
        &SALLOC
    }

    fn run(&self, _: &Invocation) -> Output {
        Output::error("salloc: interactive allocations are not emulated; try srun (e.g. srun -N1 --gpus=8 nvidia-smi) or sbatch\n", 1)
    }
}

impl Command for Sstat {
    fn signature(&self) -> &'static Signature {
        &SSTAT
    }

    fn run(&self, _: &Invocation) -> Output {
        Output::error("sstat: step statistics are not emulated; try sacct -j JOBID for each step's state, exit code and elapsed time\n", 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn they_say_what_to_use_instead() {
        let out = run_on_first_node("salloc -N1");
        assert_eq!(out.status, 1);
        assert!(out.stderr.starts_with("salloc: interactive allocations are not emulated; try srun"), "{}", out.stderr);
        assert!(run_on_first_node("sstat -j 1").stderr.contains("try sacct -j JOBID"));
        assert_eq!(run_on_first_node("which salloc sstat").stdout, "/usr/bin/salloc\n/usr/bin/sstat\n");
    }
}
