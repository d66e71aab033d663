//! `cat`: standard input to standard output, with GNU's numbering and
//! visibility options. File operands do not exist in a lab.

use super::{lines, read_inputs, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Cat;

static SIGNATURE: Signature = Signature {
    name: "cat",
    summary: "concatenate files and print on the standard output",
    usage: "cat [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('A'), long: Some("show-all"), value: None, help: "equivalent to -vET" },
        Flag { short: Some('b'), long: Some("number-nonblank"), value: None, help: "number nonempty output lines, overrides -n" },
        Flag { short: Some('e'), long: None, value: None, help: "equivalent to -vE" },
        Flag { short: Some('E'), long: Some("show-ends"), value: None, help: "display $ at end of each line" },
        Flag { short: Some('n'), long: Some("number"), value: None, help: "number all output lines" },
        Flag { short: Some('s'), long: Some("squeeze-blank"), value: None, help: "suppress repeated empty output lines" },
        Flag { short: Some('t'), long: None, value: None, help: "equivalent to -vT" },
        Flag { short: Some('T'), long: Some("show-tabs"), value: None, help: "display TAB characters as ^I" },
        Flag { short: Some('v'), long: Some("show-nonprinting"), value: None, help: "use ^ and M- notation, except for LFD and TAB" },
    ],
    examples: &[Example { command: "nvidia-smi -L | cat -n", description: "number the lines" }],
};

#[derive(Default)]
struct Show {
    number: bool,
    nonblank: bool,
    ends: bool,
    tabs: bool,
    nonprinting: bool,
    squeeze: bool,
}

fn visible(c: char, show: &Show) -> String {
    match c {
        '\t' if show.tabs => "^I".to_string(),
        '\t' => "\t".to_string(),
        c if show.nonprinting && (c as u32) < 32 => format!("^{}", char::from_u32(c as u32 + 64).unwrap_or('?')),
        '\x7f' if show.nonprinting => "^?".to_string(),
        c => c.to_string(),
    }
}

impl GnuTool for Cat {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut show = Show::default();
        for option in &parsed.options {
            let Opt::Flag(flag, _) = option else { continue };
            match flag.short {
                Some('A') => (show.nonprinting, show.ends, show.tabs) = (true, true, true),
                Some('b') => show.nonblank = true,
                Some('e') => (show.nonprinting, show.ends) = (true, true),
                Some('E') => show.ends = true,
                Some('n') => show.number = true,
                Some('s') => show.squeeze = true,
                Some('t') => (show.nonprinting, show.tabs) = (true, true),
                Some('T') => show.tabs = true,
                _ => show.nonprinting = true,
            }
        }
        let (text, stderr) = read_inputs("cat", &parsed.operands, invocation);
        let status = if stderr.is_empty() { 0 } else { 1 };
        let plain = !(show.number || show.nonblank || show.ends || show.tabs || show.nonprinting || show.squeeze);
        if plain {
            return Output { stdout: text, stderr, status, duration_ms: 0, ..Output::default() };
        }
        let mut out = String::new();
        let mut number = 0;
        let mut previous_blank = false;
        let ends_with_newline = text.ends_with('\n');
        let rows = lines(&text);
        for (index, line) in rows.iter().enumerate() {
            let blank = line.is_empty();
            if show.squeeze && blank && previous_blank {
                continue;
            }
            previous_blank = blank;
            if (show.nonblank && !blank) || (show.number && !show.nonblank) {
                number += 1;
                out.push_str(&format!("{number:>6}\t"));
            }
            for c in line.chars() {
                out.push_str(&visible(c, &show));
            }
            let last = index + 1 == rows.len();
            if !last || ends_with_newline {
                if show.ends {
                    out.push('$');
                }
                out.push('\n');
            }
        }
        Output { stdout: out, stderr, status, duration_ms: 0, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn passes_stdin_through() {
        assert_eq!(run_on_first_node("echo -n -e 'a\\nb' | cat").stdout, "a\nb");
        assert_eq!(run_on_first_node("echo -e 'a\\nb' | cat -n").stdout, "     1\ta\n     2\tb\n");
        assert_eq!(run_on_first_node("echo -e 'a\\tb' | cat -A").stdout, "a^Ib$\n");
        let out = run_on_first_node("cat nofile");
        assert_eq!((out.stderr.as_str(), out.status), ("cat: nofile: No such file or directory\n", 1));
    }
}
