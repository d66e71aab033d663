//! Helpers shared by the engine's unit tests.

use crate::commands::Output;
use crate::{load, Lab, Session};

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

pub fn session() -> Session {
    let lab = lab();
    let host = lab.first_host().to_string();
    Session::new(lab.instantiate(1), &host)
}

/// Runs one line on the first node of a fresh two-node lab.
pub fn run_on_first_node(line: &str) -> Output {
    let transcript = session().run(line);
    Output {
        stdout: transcript.stdout(),
        stderr: transcript.stderr(),
        status: transcript.status,
        duration_ms: transcript.duration_ms,
        ..Output::default()
    }
}
