//! Background jobs (`cmd &`, `jobs`, `wait`, `kill %N`) and history
//! expansion (`!!`).
//!
//! Simulated commands finish the moment they start, except servers: a
//! background command whose output makes a node listen (a perftest server)
//! keeps running until its listener goes away. Finished jobs are reported
//! before the next command's output, as bash reports them before the next
//! prompt.

use serde::{Deserialize, Serialize};

use super::interp::{Input, Interp};
use super::parse::Pipeline;
use super::session::Interactive;
use super::{Stream, Transcript};
use crate::commands::Output;
use crate::limits::{MAX_JOBS, MAX_LINE_BYTES};
use crate::model::change::Change;
use crate::model::Cluster;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobState {
    Running,
    Done(i32),
    Terminated,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub id: usize,
    pub pid: u32,
    pub text: String,
    /// The node and port of the server this job runs, while it listens.
    pub listening: Option<(String, u16)>,
    pub state: JobState,
}

impl JobState {
    fn label(&self) -> String {
        match self {
            JobState::Running => "Running".to_string(),
            JobState::Done(0) => "Done".to_string(),
            JobState::Done(status) => format!("Exit {status}"),
            JobState::Terminated => "Terminated".to_string(),
        }
    }
}

/// `[1]+  Running                 cmd &`, as bash lists a job.
fn describe(job: &Job, marker: char) -> String {
    let suffix = if job.state == JobState::Running { " &" } else { "" };
    format!("[{}]{marker}  {:<24}{}{suffix}\n", job.id, job.state.label(), job.text)
}

fn marker(position: usize, count: usize) -> char {
    match count - position {
        1 => '+',
        2 => '-',
        _ => ' ',
    }
}

/// Runs a pipeline as a background job of the interactive shell: `[1] 4243`,
/// then whatever it prints goes straight to the terminal.
pub(super) fn start_job(interp: &mut Interp, pipeline: &Pipeline, transcript: &mut Transcript) {
    let (id, pid) = match interp.session.as_deref() {
        Some(session) if session.jobs.len() >= MAX_JOBS => {
            // As bash answers at the process limit.
            transcript
                .push(Stream::Stderr, "-bash: fork: retry: Resource temporarily unavailable\n-bash: fork: Resource temporarily unavailable\n".to_string());
            return;
        }
        Some(session) => {
            // Jobs are kept in the order they started: the last has the highest id.
            let id = session.jobs.last().map_or(0, |job| job.id) + 1;
            (id, 4243 + 611 * (session.history.len() as u32 % 9000) + (id % 100_000) as u32)
        }
        None => return,
    };
    let text = pipeline.text.clone();
    transcript.push(Stream::Stderr, format!("[{id}] {pid}\n"));
    let changes_before = interp.changes.len();
    let status = interp.run_pipeline(pipeline, &mut Input::default(), transcript);
    let listening = interp.changes[changes_before..].iter().find_map(|change| match change {
        Change::Listen { node, listener } => Some((node.clone(), listener.port)),
        _ => None,
    });
    let state = if listening.is_some() { JobState::Running } else { JobState::Done(status) };
    if let Some(session) = interp.session.as_deref_mut() {
        session.jobs.push(Job { id, pid, text, listening, state });
    }
}

/// Marks servers whose listener is gone as done.
fn refresh_jobs(cluster: &Cluster, session: &mut Interactive) {
    for job in &mut session.jobs {
        if let (JobState::Running, Some((node, port))) = (&job.state, &job.listening) {
            let still_listening = cluster.node(node).is_some_and(|node| node.listeners.iter().any(|listener| listener.port == *port));
            if !still_listening {
                job.state = JobState::Done(0);
            }
        }
    }
}

/// `jobs`: every job; finished ones are then forgotten.
pub(super) fn list_jobs(cluster: &Cluster, session: &mut Interactive) -> Output {
    refresh_jobs(cluster, session);
    let count = session.jobs.len();
    let listing: String = session.jobs.iter().enumerate().map(|(at, job)| describe(job, marker(at, count))).collect();
    session.jobs.retain(|job| job.state == JobState::Running);
    Output::ok(listing)
}

/// `kill %N` or `kill PID`: ends a job (a server stops listening).
pub(super) fn kill_job(session: Option<&mut Interactive>, target: &str) -> Output {
    let not_found = || match target.strip_prefix('%') {
        Some(_) => Output::error(format!("-bash: kill: {target}: no such job\n"), 1),
        None => Output::error(format!("-bash: kill: ({target}) - No such process\n"), 1),
    };
    let Some(session) = session else {
        return not_found();
    };
    let found = match target.strip_prefix('%') {
        Some(id) => session.jobs.iter().position(|job| id.parse() == Ok(job.id)),
        None => session.jobs.iter().position(|job| target.parse() == Ok(job.pid)),
    };
    let Some(at) = found.filter(|at| session.jobs[*at].state == JobState::Running) else {
        return not_found();
    };
    let job = &mut session.jobs[at];
    job.state = JobState::Terminated;
    let mut output = Output::default();
    if let Some((node, port)) = job.listening.clone() {
        output.changes.push(Change::StopListening { node, port });
    }
    output
}

/// The notices bash prints before the next prompt for jobs that ended.
pub(super) fn report_finished(cluster: &Cluster, session: &mut Interactive, notices: &mut Transcript) {
    refresh_jobs(cluster, session);
    let count = session.jobs.len();
    for (at, job) in session.jobs.iter().enumerate() {
        if job.state != JobState::Running {
            notices.push(Stream::Stderr, describe(job, marker(at, count)));
        }
    }
    session.jobs.retain(|job| job.state == JobState::Running);
}

/// History expansion as bash does it on an interactive line (outside single
/// quotes): `!!`, `!N`, `!-N`, `!prefix`, and `^old^new` at the start.
/// `Ok(None)` when there is nothing to expand.
pub fn expand_history(line: &str, history: &[String]) -> Result<Option<String>, String> {
    let too_long = || format!("-bash: line too long after history expansion (this simulation reads at most {MAX_LINE_BYTES} bytes)\n");
    if let Some(rest) = line.strip_prefix('^') {
        // `^old^new^`: the previous line with its first `old` replaced.
        let mut parts = rest.splitn(3, '^');
        let (old, new) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let tail = parts.next().unwrap_or("");
        let previous = history.last().ok_or_else(|| format!("-bash: :s^{old}^{new}: substitution failed\n"))?;
        if old.is_empty() || !previous.contains(old) {
            return Err(format!("-bash: :s^{old}^{new}: substitution failed\n"));
        }
        let expanded = format!("{}{tail}", previous.replacen(old, new, 1));
        return if expanded.len() > MAX_LINE_BYTES { Err(too_long()) } else { Ok(Some(expanded)) };
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut in_single = false;
    let mut changed = false;
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c == '\'' {
            in_single = !in_single;
        }
        let next = chars.get(at + 1).copied();
        let starts_event = c == '!' && !in_single && next.is_some_and(|n| !matches!(n, ' ' | '\t' | '\n' | '=' | '('));
        if !starts_event {
            out.push(c);
            at += 1;
            continue;
        }
        // The event designator: `!`, a number, `-N`, or a prefix.
        let (event, used) = match next {
            Some('!') => ("!".to_string(), 2),
            Some(_) => {
                let word: String =
                    chars[at + 1..].iter().take_while(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '"' | '\'' | '(' | ')' | '<' | '>')).collect();
                let len = word.chars().count();
                (word, len + 1)
            }
            None => unreachable!("checked above"),
        };
        let not_found = || format!("-bash: !{event}: event not found\n");
        let found = if event == "!" {
            history.last()
        } else if let Some(back) = event.strip_prefix('-').and_then(|n| n.parse::<usize>().ok()) {
            history.len().checked_sub(back).and_then(|index| history.get(index))
        } else if let Ok(number) = event.parse::<usize>() {
            number.checked_sub(1).and_then(|index| history.get(index))
        } else {
            history.iter().rev().find(|line| line.starts_with(event.as_str()))
        };
        let previous = found.ok_or_else(not_found)?;
        if out.len() + previous.len() > MAX_LINE_BYTES {
            return Err(too_long());
        }
        out.push_str(previous);
        changed = true;
        at += used;
    }
    Ok(changed.then_some(out))
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn background_jobs_report_when_done() {
        let mut shell = session();
        let started = shell.run("hostname &");
        assert!(started.stderr().starts_with("[1] "));
        assert_eq!(started.stdout(), "gpu-001\n");
        let next = shell.run("echo next");
        assert_eq!(next.text(), "[1]+  Done                    hostname\nnext\n");
        assert_eq!(shell.run("jobs").text(), "");
    }

    #[test]
    fn a_listening_job_runs_until_its_listener_goes() {
        let mut shell = session();
        // A perftest server waits for its client as a background job.
        let started = shell.run("ib_write_bw -d mlx5_0 &");
        assert!(started.stderr().starts_with("[1] "), "{}", started.text());
        assert_eq!(shell.run("jobs").stdout(), "[1]+  Running                 ib_write_bw -d mlx5_0 &\n");
        assert_eq!(shell.run("kill %1").status, 0);
        assert!(shell.cluster.nodes[0].listeners.is_empty());
        assert_eq!(shell.run("true").stderr(), "[1]+  Terminated              ib_write_bw -d mlx5_0\n");
        assert_eq!(shell.run("kill %1").stderr(), "-bash: kill: %1: no such job\n");
    }

    #[test]
    fn bang_bang_repeats_the_last_command() {
        let mut shell = session();
        assert_eq!(shell.run("!!").stderr(), "-bash: !!: event not found\n");
        shell.run("hostname");
        assert_eq!(shell.run("!! -s").text(), "hostname -s\ngpu-001\n");
        assert_eq!(shell.run("echo '!!'").stdout(), "!!\n");
        assert_eq!(shell.history().last().map(String::as_str), Some("echo '!!'"));
    }

    #[test]
    fn history_events_by_number_offset_prefix_and_substitution() {
        let mut shell = session();
        shell.run("hostname");
        shell.run("echo one");
        assert_eq!(shell.run("!-2").text(), "hostname\ngpu-001\n");
        assert_eq!(shell.run("!ech").text(), "echo one\none\n");
        assert_eq!(shell.run("!1").text(), "hostname\ngpu-001\n");
        assert_eq!(shell.run("^gpu^x").stderr(), "-bash: :s^gpu^x: substitution failed\n");
        shell.run("echo gpu-001");
        assert_eq!(shell.run("^001^002").text(), "echo gpu-002\ngpu-002\n");
        assert_eq!(shell.run("!nosuch").stderr(), "-bash: !nosuch: event not found\n");
        assert_eq!(shell.run("echo hi!").stdout(), "hi!\n");
        shell.run("history -c");
        assert_eq!(shell.run("history").stdout(), "    1  history\n");
    }
}
