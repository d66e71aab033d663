//! Helpers shared by the engine's unit tests.

use crate::commands::Output;
use crate::model::Cluster;
use crate::{load, Lab, Session};

/// The interactive shell, for tests of commands (which never name the shell).
pub type Shell = Session;

pub const TWO_NODE_LAB: &str = r#"
[lab]
id = "test-lab"
title = "Test"
summary = "A two-node HGX H100 lab for tests."

[cluster]
preset = "hgx-h100"
nodes = ["gpu-001", "gpu-002"]
"#;

pub fn lab() -> Lab {
    load(TWO_NODE_LAB).expect("the test lab is valid")
}

/// The test lab's cluster as a trainee with seed 1 starts it.
pub fn cluster() -> Cluster {
    lab().instantiate(1)
}

/// A shell on gpu-001 over `cluster`.
pub fn shell(cluster: Cluster) -> Shell {
    Session::new(cluster, "gpu-001")
}

pub fn session() -> Session {
    let lab = lab();
    let host = lab.first_host().to_string();
    Session::new(lab.instantiate(1), &host)
}

/// `shell`'s session saved and restored over the test lab's fresh cluster,
/// as the page reloads it.
pub fn reloaded(shell: &Shell) -> Shell {
    Session::restore(cluster(), shell.snapshot())
}

/// The two-node lab over RoCE (eight Ethernet rails), with `faults` (TOML
/// `[[faults]]` tables) injected.
pub fn roce_session(faults: &str) -> Session {
    let text = format!("{}fabric = \"roce\"\n{faults}", TWO_NODE_LAB);
    let lab = load(&text).expect("the RoCE test lab is valid");
    Session::new(lab.instantiate(1), "gpu-001")
}

/// Runs one line on the first node of a fresh two-node lab.
pub fn run_on_first_node(line: &str) -> Output {
    let transcript = session().run(line);
    Output { stdout: transcript.stdout(), stderr: transcript.stderr(), status: transcript.status, duration_ms: transcript.duration_ms, ..Output::default() }
}
