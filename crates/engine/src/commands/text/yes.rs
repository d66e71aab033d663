//! `yes`: its arguments (or `y`) forever. Here "forever" ends at the line's
//! output limit, as a pipe's reader closing it would end the real one.

use super::{Dialect, GnuTool, Parsed, COREUTILS};
use crate::commands::{Example, Invocation, Output, Signature};
use crate::limits::MAX_OUTPUT_BYTES;

pub struct Yes;

static SIGNATURE: Signature = Signature {
    name: "yes",
    summary: "output a string repeatedly until killed",
    usage: "yes [STRING]...",
    flags: &[],
    examples: &[Example { command: "yes | head -3", description: "three lines of y" }],
};

impl GnuTool for Yes {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, _invocation: &Invocation) -> Output {
        let line = if parsed.operands.is_empty() { "y".to_string() } else { parsed.operands.join(" ") } + "\n";
        let count = (MAX_OUTPUT_BYTES / line.len()).max(1);
        Output::ok(line.repeat(count))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn repeats_until_the_reader_stops() {
        assert_eq!(run_on_first_node("yes | head -2").stdout, "y\ny\n");
        assert_eq!(run_on_first_node("yes ok go | head -1").stdout, "ok go\n");
    }
}
