//! `du`: GNU coreutils' disk usage of a node's files (`commands::files`),
//! each directory after its contents with the total below it, `-a` every
//! file too, `-s` the operands alone, `-d N` down to a depth, `-c` a grand
//! total; sizes in 1K blocks, `-m`, `-h` (as `df` and `ls` print them),
//! `--apparent-size` or `-b` (bytes). A file takes whole 4 KiB blocks, a
//! directory one; kernel file systems (`/proc`, `/sys`, `/dev`) take none.
//! Entries come in name order (a real file system's order is the
//! directory's). The walk visits at most `MAX_VISITS` entries.

use super::{quote, usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::files::{Kind, Metadata, View};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Du;

static SIGNATURE: Signature = Signature {
    name: "du",
    summary: "estimate file space usage",
    usage: "du [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('a'), long: Some("all"), value: None, help: "write counts for all files, not just directories" },
        Flag { short: None, long: Some("apparent-size"), value: None, help: "print apparent sizes rather than disk usage" },
        Flag { short: Some('b'), long: Some("bytes"), value: None, help: "equivalent to '--apparent-size --block-size=1'" },
        Flag { short: Some('c'), long: Some("total"), value: None, help: "produce a grand total" },
        Flag {
            short: Some('d'),
            long: Some("max-depth"),
            value: Some("N"),
            help: "print the total for a directory only if it is N or fewer levels below the command line argument",
        },
        Flag { short: Some('h'), long: Some("human-readable"), value: None, help: "print sizes in human readable format (e.g., 1K 234M 2G)" },
        Flag { short: Some('k'), long: None, value: None, help: "like --block-size=1K" },
        Flag { short: Some('m'), long: None, value: None, help: "like --block-size=1M" },
        Flag { short: Some('s'), long: Some("summarize"), value: None, help: "display only a total for each argument" },
    ],
    examples: &[
        Example { command: "du -sh /lustre/checkpoints/*", description: "the space each job's checkpoints take" },
        Example { command: "du -h -d 1 /lustre/checkpoints/llama3-8b", description: "one checkpoint's size, and the job's total" },
    ],
};

const MAX_VISITS: usize = crate::limits::MAX_FIND_VISITS;

/// How sizes are counted and printed.
#[derive(Clone, Copy)]
struct Units {
    apparent: bool,
    /// Bytes per printed unit (1, 1 KiB, 1 MiB); None: human-readable.
    block: Option<u64>,
}

impl Units {
    /// What a file or directory itself takes.
    fn usage(&self, meta: &Metadata) -> u64 {
        if meta.kernel {
            return 0;
        }
        match meta.kind {
            Kind::CharDevice => 0,
            Kind::Directory => 4096,
            Kind::File if self.apparent => meta.size,
            Kind::File => meta.size.div_ceil(4096) * 4096,
        }
    }

    fn show(&self, bytes: u64) -> String {
        match self.block {
            None => crate::commands::host::df::human_bytes(bytes),
            Some(block) => bytes.div_ceil(block).to_string(),
        }
    }
}

struct Walk<'a> {
    view: &'a View<'a>,
    units: Units,
    all: bool,
    max_depth: Option<usize>,
    visits: usize,
    out: String,
    /// The directories it could not read, as du says so.
    refused: String,
}

impl Walk<'_> {
    /// Prints what `path` holds, deepest first, and returns its total.
    fn visit(&mut self, path: &str, shown: &str, depth: usize) -> Result<u64, ()> {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return Err(());
        }
        let Some(meta) = self.view.metadata(path) else { return Ok(0) };
        let mut total = self.units.usage(&meta);
        let is_dir = meta.kind == Kind::Directory;
        if is_dir && !self.view.listable(path) {
            self.refused.push_str(&format!("du: cannot read directory '{shown}': Permission denied\n"));
        } else if is_dir {
            let base = shown.trim_end_matches('/');
            let base = if base.is_empty() { "" } else { base };
            let full = path.trim_end_matches('/');
            for (name, _) in self.view.list(path).unwrap_or_default() {
                total += self.visit(&format!("{full}/{name}"), &format!("{base}/{name}"), depth + 1)?;
            }
        }
        if (is_dir || self.all || depth == 0) && self.max_depth.is_none_or(|max| depth <= max) {
            self.out.push_str(&format!("{}\t{shown}\n", self.units.show(total)));
        }
        Ok(total)
    }
}

impl GnuTool for Du {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let (mut all, mut total, mut summarize) = (false, false, false);
        let mut units = Units { apparent: false, block: Some(1024) };
        let mut max_depth = None;
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            match (flag.short, flag.long) {
                (Some('a'), _) => all = true,
                (_, Some("apparent-size")) => units.apparent = true,
                (Some('b'), _) => units = Units { apparent: true, block: Some(1) },
                (Some('c'), _) => total = true,
                (Some('d'), _) => {
                    let value = value.clone().unwrap_or_default();
                    match value.parse::<usize>() {
                        Ok(depth) => max_depth = Some(depth),
                        Err(_) => return usage_error("du", &COREUTILS, &format!("invalid maximum depth {}", quote(&value))),
                    }
                }
                (Some('h'), _) => units.block = None,
                (Some('k'), _) => units.block = Some(1024),
                (Some('m'), _) => units.block = Some(1 << 20),
                (Some('s'), _) => summarize = true,
                _ => {}
            }
        }
        if summarize && all {
            return usage_error("du", &COREUTILS, "cannot both summarize and show all entries");
        }
        if summarize {
            match max_depth {
                Some(depth) if depth != 0 => return usage_error("du", &COREUTILS, &format!("warning: summarizing conflicts with --max-depth={depth}")),
                _ => max_depth = Some(0),
            }
        }
        let view = View::for_command(invocation);
        let operands = if parsed.operands.is_empty() { vec![".".to_string()] } else { parsed.operands.clone() };
        let mut walk = Walk { view: &view, units, all, max_depth, visits: 0, out: String::new(), refused: String::new() };
        let (mut errors, mut status, mut grand) = (String::new(), 0, 0u64);
        for operand in &operands {
            if view.kind(operand).is_none() {
                errors.push_str(&format!("du: cannot access '{operand}': {}\n", view.missing_reason(operand)));
                status = 1;
                continue;
            }
            match walk.visit(&view.resolve(operand), operand, 0) {
                Ok(size) => grand = grand.saturating_add(size),
                Err(()) => {
                    errors.push_str(&format!("du: stopped after {MAX_VISITS} entries (the emulator's limit)\n"));
                    status = 1;
                    break;
                }
            }
        }
        if total {
            walk.out.push_str(&format!("{}\ttotal\n", units.show(grand)));
        }
        if !walk.refused.is_empty() {
            errors.insert_str(0, &walk.refused);
            status = 1;
        }
        Output { stdout: walk.out, stderr: errors, status, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn counts_blocks_deepest_first_as_gnu_du_does() {
        let mut shell = session();
        shell.run("printf '%5000s' x > /tmp/a && printf 'hi' > /tmp/b");
        // 4 KiB a directory, whole 4 KiB blocks a file: 4 + 8 + 4.
        assert_eq!(shell.run("du /tmp").stdout(), "16\t/tmp\n");
        assert_eq!(shell.run("du -a /tmp/").stdout(), "8\t/tmp/a\n4\t/tmp/b\n16\t/tmp/\n");
        assert_eq!(shell.run("cd /tmp && du -a").stdout(), "8\t./a\n4\t./b\n16\t.\n");
        assert_eq!(shell.run("du -sb /tmp/a /tmp/b").stdout(), "5000\t/tmp/a\n2\t/tmp/b\n");
        assert_eq!(shell.run("du --apparent-size -k /tmp/a").stdout(), "5\t/tmp/a\n");
        assert_eq!(shell.run("du -sc /tmp /tmp/a").stdout(), "16\t/tmp\n8\t/tmp/a\n24\ttotal\n");
        assert_eq!(shell.run("du -d 0 -h /tmp").stdout(), "16K\t/tmp\n");
        let missing = shell.run("du nope");
        assert_eq!((missing.stderr(), missing.status), ("du: cannot access 'nope': No such file or directory\n".to_string(), 1));
        assert_eq!(shell.run("du -sa /tmp").status, 1);
        assert!(shell.run("du -d x /tmp").stderr().starts_with("du: invalid maximum depth \u{2018}x\u{2019}\nTry 'du --help'"));
        assert_eq!(shell.run("du -s /proc").stdout(), "0\t/proc\n");
    }
}
