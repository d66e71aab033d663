//! `echo`: bash's builtin, with `-n`, `-e` and `-E`.

use crate::commands::text::escapes::{expand_backslashes, Escape};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Echo;

static SIGNATURE: Signature = Signature {
    name: "echo",
    summary: "display a line of text",
    usage: "echo [-neE] [arg ...]",
    flags: &[
        Flag { short: Some('n'), long: None, value: None, help: "do not append a newline" },
        Flag { short: Some('e'), long: None, value: None, help: "interpret backslash escapes" },
        Flag { short: Some('E'), long: None, value: None, help: "do not interpret backslash escapes (the default)" },
    ],
    examples: &[
        Example { command: "echo $HOSTNAME", description: "print a variable" },
        Example { command: "echo -e 'a\\tb'", description: "print with a tab" },
    ],
};

impl Command for Echo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let mut newline = true;
        let mut escapes = false;
        let mut first_word = 0;
        // Like bash, only leading words made solely of n, e and E are options.
        for arg in args {
            let letters = arg.strip_prefix('-').unwrap_or("");
            if letters.is_empty() || !letters.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
                break;
            }
            for letter in letters.chars() {
                match letter {
                    'n' => newline = false,
                    'e' => escapes = true,
                    _ => escapes = false,
                }
            }
            first_word += 1;
        }
        let mut text = args[first_word..].join(" ");
        if escapes {
            let (expanded, stop) = expand_escapes(&text);
            text = expanded;
            if stop {
                return Output::ok(text);
            }
        }
        if newline {
            text.push('\n');
        }
        Output::ok(text)
    }
}

/// Interprets `echo -e` escapes. Returns the text and whether `\c` cut it short.
fn expand_escapes(text: &str) -> (String, bool) {
    expand_backslashes(text, |escaped| {
        Escape::Char(match escaped {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\x07',
            'b' => '\x08',
            'e' | 'E' => '\x1b',
            'f' => '\x0c',
            'v' => '\x0b',
            '\\' => '\\',
            'c' => return Escape::Stop,
            _ => return Escape::Unknown,
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn echo_behaves_like_bash() {
        assert_eq!(run_on_first_node("echo hello   world").stdout, "hello world\n");
        assert_eq!(run_on_first_node("echo -n hi").stdout, "hi");
        assert_eq!(run_on_first_node("echo -e 'a\\tb'").stdout, "a\tb\n");
        assert_eq!(run_on_first_node("echo 'a\\tb'").stdout, "a\\tb\n");
        assert_eq!(run_on_first_node("echo -x").stdout, "-x\n");
        assert_eq!(run_on_first_node("echo -e 'stop\\chere'").stdout, "stop");
        assert_eq!(run_on_first_node("echo").stdout, "\n");
    }
}
