//! `wc`: count lines, words and bytes of standard input (GNU layout).

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};

pub struct Wc;

static SIGNATURE: Signature = Signature {
    name: "wc",
    summary: "print newline, word, and byte counts",
    usage: "wc [OPTION]...",
    flags: &[
        Flag { short: Some('l'), long: Some("lines"), value: None, help: "print the newline counts" },
        Flag { short: Some('w'), long: Some("words"), value: None, help: "print the word counts" },
        Flag { short: Some('c'), long: Some("bytes"), value: None, help: "print the byte counts" },
    ],
    examples: &[Example { command: "nvidia-smi -L | wc -l", description: "count the GPUs" }],
};

impl Command for Wc {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut lines, mut words, mut bytes) = (false, false, false);
        let mut files: Vec<String> = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('l') => lines = true,
                    Some('w') => words = true,
                    _ => bytes = true,
                },
                Arg::Unknown(flag) => {
                    return Output::error(crate::commands::options::unknown("wc", &flag) + "Try 'wc --help' for more information.\n", 1);
                }
                Arg::Positional(file) => files.push(file),
                Arg::MissingValue(_) => {}
            }
        }
        if !(lines || words || bytes) {
            (lines, words, bytes) = (true, true, true);
        }
        let count = |text: &str| -> Vec<usize> {
            [(lines, text.matches('\n').count()), (words, text.split_whitespace().count()), (bytes, text.len())]
                .into_iter()
                .filter_map(|(wanted, count)| wanted.then_some(count))
                .collect()
        };
        if files.is_empty() {
            let counts = count(invocation.stdin);
            // GNU wc pads to a common width only when it prints several counts.
            let width = if counts.len() == 1 { 1 } else { 7 };
            let fields: Vec<String> = counts.iter().map(|n| format!("{n:>width$}")).collect();
            return Output::ok(format!("{}\n", fields.join(" ")));
        }
        // Files: one line each, then a total for several; the width is that
        // of the files' total size, or none for one count of one file.
        let mut out = Output::default();
        let mut rows: Vec<(Vec<usize>, String)> = Vec::new();
        let mut size = 0;
        for file in &files {
            match super::read_file(invocation, file) {
                Ok(text) => {
                    size += text.len();
                    rows.push((count(&text), file.clone()));
                }
                Err(reason) => {
                    out.stderr += &format!("wc: {file}: {reason}\n");
                    out.status = 1;
                }
            }
        }
        let columns = [lines, words, bytes].iter().filter(|wanted| **wanted).count();
        let mut total = vec![0usize; columns];
        for (counts, _) in &rows {
            for (sum, n) in total.iter_mut().zip(counts) {
                *sum += n;
            }
        }
        if files.len() > 1 {
            rows.push((total, "total".to_string()));
        }
        let width = if columns == 1 && files.len() == 1 { 1 } else { size.max(1).to_string().len() };
        for (counts, name) in rows {
            let fields: Vec<String> = counts.iter().map(|n| format!("{n:>width$}")).collect();
            out.stdout += &format!("{} {name}\n", fields.join(" "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn counts_standard_input() {
        assert_eq!(run_on_first_node("nvidia-smi -L | wc -l").stdout, "8\n");
        assert_eq!(run_on_first_node("echo a b | wc").stdout, "      1       2       4\n");
        assert_eq!(run_on_first_node("echo a b | wc -w").stdout, "2\n");
        assert_eq!(run_on_first_node("wc -z").status, 1);
    }
}
