//! Slurm's jobs: what `sbatch` submitted, as the controller records it.
//! A job is a change in the cluster's history (`Change::SubmitJob`), so it
//! survives in the session snapshot; its state at any instant follows from
//! the record and the clock: pending while the nodes it needs are not
//! available, running from its start for as long as its script ran, then
//! completed or failed by its exit code.

use serde::{Deserialize, Serialize};

use super::time::EpochSeconds;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub id: i64,
    pub name: String,
    pub user: String,
    /// How many nodes it asked for.
    pub nodes: usize,
    /// The nodes it ran on; empty while it waits.
    pub nodelist: Vec<String>,
    pub submitted: EpochSeconds,
    /// When it started; None: it waits in the queue for `reason`.
    pub started: Option<EpochSeconds>,
    /// Why it waits, as squeue prints it (`ReqNodeNotAvail, UnavailableNodes:gpu-002`).
    pub reason: String,
    /// How long its script ran, in seconds, and its exit status.
    pub runtime: i64,
    pub exit_code: i32,
    /// `scancel` ended it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// It is the lab's workload of that name, waiting for its nodes: it
    /// starts as that workload once they are free (`Cluster::start_waiting_jobs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub workload: bool,
    /// A trainee's batch job waiting for nodes: what it runs once they are
    /// free (the shell's scheduler starts it, `Change::StartJob`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<Batch>,
    /// `scontrol hold`: it waits, whatever is free, for this reason
    /// (`JobHeldUser`, or `JobHeldAdmin` when root held it) until released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// A step of a job: one `srun` inside it, as sacct lists it (`JOBID.0`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The program it ran.
    pub name: String,
    pub nodelist: Vec<String>,
    pub started: EpochSeconds,
    pub runtime: i64,
    pub exit_code: i32,
}

/// What a waiting batch job runs when it starts, as sbatch took it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub script: String,
    /// Where it was submitted from, with that shell's environment (Slurm
    /// exports it to the job) and working directory.
    pub host: String,
    pub env: std::collections::BTreeMap<String, String>,
    /// `-o` and `-e` as given (`%j` and the rest expanded when it starts).
    pub output: Option<String>,
    pub error: Option<String>,
    /// `-w`: the nodes it must run on.
    pub required: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl JobState {
    /// squeue's compact state (`%t`).
    pub fn compact(self) -> &'static str {
        match self {
            JobState::Pending => "PD",
            JobState::Running => "R",
            JobState::Completed => "CD",
            JobState::Failed => "F",
            JobState::Cancelled => "CA",
        }
    }

    /// The long form (`%T`, sacct's State).
    pub fn long(self) -> &'static str {
        match self {
            JobState::Pending => "PENDING",
            JobState::Running => "RUNNING",
            JobState::Completed => "COMPLETED",
            JobState::Failed => "FAILED",
            JobState::Cancelled => "CANCELLED",
        }
    }
}

impl Job {
    /// Why it waits, as squeue shows it: its hold, else the scheduler's reason.
    pub fn waits_for(&self) -> &str {
        self.held.as_deref().unwrap_or(&self.reason)
    }

    pub fn state_at(&self, now: EpochSeconds) -> JobState {
        match self.started {
            None => JobState::Pending,
            Some(start) if now < start.saturating_add(self.runtime) => JobState::Running,
            Some(_) if self.cancelled => JobState::Cancelled,
            Some(_) if self.exit_code == 0 => JobState::Completed,
            Some(_) => JobState::Failed,
        }
    }

    /// When it ended, if it has by `now`.
    pub fn ended_at(&self, now: EpochSeconds) -> Option<EpochSeconds> {
        let end = self.started?.saturating_add(self.runtime);
        (end <= now).then_some(end)
    }

    /// Seconds it has run by `now`.
    pub fn elapsed_at(&self, now: EpochSeconds) -> i64 {
        self.started.map_or(0, |start| (self.ended_at(now).unwrap_or(now) - start).max(0))
    }
}

/// Slurm's elapsed time: `M:SS` under an hour, `H:MM:SS` under a day,
/// `D-HH:MM:SS` beyond (squeue's TIME).
pub fn squeue_time(seconds: i64) -> String {
    let s = seconds.max(0);
    let (days, hours, minutes, secs) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (days, hours) {
        (0, 0) => format!("{minutes}:{secs:02}"),
        (0, _) => format!("{hours}:{minutes:02}:{secs:02}"),
        _ => format!("{days}-{hours:02}:{minutes:02}:{secs:02}"),
    }
}

/// sacct's Elapsed: always `HH:MM:SS`, with `D-` past a day.
pub fn sacct_elapsed(seconds: i64) -> String {
    let s = seconds.max(0);
    let (days, hours, minutes, secs) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:{secs:02}")
    } else {
        format!("{hours:02}:{minutes:02}:{secs:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_follow_the_clock_and_times_read_as_slurms() {
        let job = Job {
            id: 1,
            name: "wrap".into(),
            user: "user".into(),
            nodes: 1,
            nodelist: vec!["gpu-001".into()],
            submitted: 100,
            started: Some(101),
            reason: String::new(),
            runtime: 60,
            exit_code: 0,
            cancelled: false,
            workload: false,
            batch: None,
            held: None,
        };
        assert_eq!(job.state_at(120), JobState::Running);
        assert_eq!(job.state_at(161), JobState::Completed);
        assert_eq!(Job { exit_code: 1, ..job.clone() }.state_at(161), JobState::Failed);
        assert_eq!(Job { started: None, ..job.clone() }.state_at(161), JobState::Pending);
        assert_eq!(job.elapsed_at(120), 19);
        assert_eq!(job.elapsed_at(9_999), 60);
        assert_eq!([squeue_time(5), squeue_time(3_725), squeue_time(90_061)], ["0:05", "1:02:05", "1-01:01:01"]);
        assert_eq!([sacct_elapsed(5), sacct_elapsed(90_061)], ["00:00:05", "1-01:01:01"]);
    }
}
