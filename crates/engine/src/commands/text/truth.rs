//! `true` and `false`: bash's builtins, which ignore their arguments.

use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct True;
pub struct False;

static TRUE: Signature = Signature {
    name: "true",
    summary: "do nothing, successfully",
    usage: "true",
    flags: &[],
    examples: &[Example { command: "true && echo ok", description: "a command that always succeeds" }],
};

static FALSE: Signature = Signature {
    name: "false",
    summary: "do nothing, unsuccessfully",
    usage: "false",
    flags: &[],
    examples: &[Example { command: "false || echo failed", description: "a command that always fails" }],
};

impl Command for True {
    fn signature(&self) -> &'static Signature {
        &TRUE
    }

    fn run(&self, _invocation: &Invocation) -> Output {
        Output::default()
    }
}

impl Command for False {
    fn signature(&self) -> &'static Signature {
        &FALSE
    }

    fn run(&self, _invocation: &Invocation) -> Output {
        Output::error("", 1)
    }
}
