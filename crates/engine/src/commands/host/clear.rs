//! `clear`: the terminal escape sequences ncurses' clear writes for xterm.

use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct Clear;

static SIGNATURE: Signature = Signature {
    name: "clear",
    summary: "clear the terminal screen",
    usage: "clear",
    flags: &[],
    examples: &[Example { command: "clear", description: "clear the screen (Ctrl-L does the same)" }],
};

/// Cursor home, erase the screen, erase the scrollback.
pub const CLEAR_SEQUENCE: &str = "\x1b[H\x1b[2J\x1b[3J";

impl Command for Clear {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        match invocation.args().first() {
            None => Output::ok(CLEAR_SEQUENCE),
            Some(arg) => Output::error(format!("{}Usage: clear [options]\n", crate::commands::options::unknown("clear", arg)), 1),
        }
    }
}
