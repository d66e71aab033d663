//! `diff`: GNU diffutils' line comparison of two files (`-` is standard
//! input; `<(...)` gives a command's output as a file), in the normal,
//! unified (`-u`, `-U N`) and brief (`-q`) forms, ignoring case or blanks
//! on request (`-i -b -w -B`). Statuses: 0 same, 1 different, 2 trouble.
//!
//! The edit script comes from Myers' O(ND) algorithm after the common head
//! and tail are set aside; past `MAX_EDITS` differences the middle is shown
//! as one change, so no input can make it slow.

use super::{read_file, Dialect, GnuTool, Opt, Parsed};
use crate::commands::files::View;
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Diff;

static SIGNATURE: Signature = Signature {
    name: "diff",
    summary: "compare files line by line",
    usage: "diff [OPTION]... FILES",
    flags: &[
        Flag { short: Some('q'), long: Some("brief"), value: None, help: "report only when files differ" },
        Flag { short: Some('s'), long: Some("report-identical-files"), value: None, help: "report when two files are the same" },
        Flag { short: Some('u'), long: None, value: None, help: "output 3 lines of unified context" },
        Flag { short: Some('U'), long: Some("unified"), value: Some("NUM"), help: "output NUM (default 3) lines of unified context" },
        Flag { short: Some('i'), long: Some("ignore-case"), value: None, help: "ignore case differences in file contents" },
        Flag { short: Some('b'), long: Some("ignore-space-change"), value: None, help: "ignore changes in the amount of white space" },
        Flag { short: Some('w'), long: Some("ignore-all-space"), value: None, help: "ignore all white space" },
        Flag { short: Some('B'), long: Some("ignore-blank-lines"), value: None, help: "ignore changes where lines are all blank" },
        Flag { short: Some('a'), long: Some("text"), value: None, help: "treat all files as text" },
    ],
    examples: &[
        Example { command: "diff <(nvidia-smi -q) <(ssh gpu-002 nvidia-smi -q)", description: "what differs between two nodes' GPU reports" },
        Example { command: "diff -u before.txt after.txt", description: "a unified diff of two saved outputs" },
    ],
};

const DIALECT: Dialect = Dialect { usage_status: 2, usage_line: None, numeric_option: false, optional_values: &[] };

const MAX_EDITS: usize = crate::limits::MAX_DIFF_EDITS;

#[derive(Clone, Copy, Default)]
struct Options {
    brief: bool,
    report_identical: bool,
    context: Option<usize>,
    ignore_case: bool,
    space_change: bool,
    all_space: bool,
    blank_lines: bool,
}

impl Options {
    /// The form of a line that is compared.
    fn key(&self, line: &str) -> String {
        let mut key: String = if self.all_space {
            line.chars().filter(|c| !c.is_whitespace()).collect()
        } else if self.space_change {
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            line.to_string()
        };
        if self.ignore_case {
            key = key.to_lowercase();
        }
        key
    }
}

/// A run of changed lines: old[old_start..old_end] became new[new_start..new_end].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hunk {
    old_start: usize,
    old_end: usize,
    new_start: usize,
    new_end: usize,
}

/// The changed runs between `a` and `b`, in order.
fn hunks(a: &[String], b: &[String]) -> Vec<Hunk> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    // Too many differences to search: the middle is one change.
    let kept = myers(a_mid, b_mid).unwrap_or_default();
    // `kept` pairs the lines that stay, in order; between them are changes.
    let mut result = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (x, y) in kept.into_iter().chain(std::iter::once((a_mid.len(), b_mid.len()))) {
        if x > i || y > j {
            result.push(Hunk { old_start: head + i, old_end: head + x, new_start: head + j, new_end: head + y });
        }
        i = x + 1;
        j = y + 1;
    }
    result
}

/// The pairs (i, j) of lines a[i] == b[j] a shortest edit script keeps,
/// or None when it needs more than MAX_EDITS edits.
fn myers(a: &[String], b: &[String]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_EDITS) as isize;
    let offset = max + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'search: for d in 0..=max {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let down = k == -d || (k != d && v[(offset + k - 1) as usize] < v[(offset + k + 1) as usize]);
            let mut x = if down { v[(offset + k + 1) as usize] } else { v[(offset + k - 1) as usize] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(offset + k) as usize] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
            k += 2;
        }
    }
    let d_end = found?;
    // Walk back through the trace: each round ends in a diagonal run of kept lines.
    let mut kept = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..=d_end).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let down = k == -d || (k != d && v[(offset + k - 1) as usize] < v[(offset + k + 1) as usize]);
        let prev_k = if down { k + 1 } else { k - 1 };
        let prev_x = v[(offset + prev_k) as usize];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y && x > 0 && y > 0 {
            x -= 1;
            y -= 1;
            kept.push((x as usize, y as usize));
        }
        if d > 0 {
            x = prev_x;
            y = prev_y;
        }
    }
    kept.reverse();
    Some(kept)
}

/// `3`, or `3,5`: a range of 1-based line numbers as the normal format writes it.
fn range(start: usize, end: usize) -> String {
    if end <= start + 1 {
        format!("{}", if end > start { end } else { start })
    } else {
        format!("{},{end}", start + 1)
    }
}

/// `-l,s`: a unified hunk's range, without `,1`.
fn unified_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

struct File {
    name: String,
    lines: Vec<String>,
    /// Whether the last line ends without a newline.
    unterminated: bool,
    modified: i64,
}

fn line_out(prefix: &str, file: &File, index: usize, out: &mut String) {
    out.push_str(prefix);
    out.push_str(&file.lines[index]);
    out.push('\n');
    if file.unterminated && index + 1 == file.lines.len() {
        out.push_str("\\ No newline at end of file\n");
    }
}

fn normal(old: &File, new: &File, hunks: &[Hunk]) -> String {
    let mut out = String::new();
    for h in hunks {
        let (deleted, added) = (h.old_end > h.old_start, h.new_end > h.new_start);
        let letter = match (deleted, added) {
            (true, true) => 'c',
            (true, false) => 'd',
            _ => 'a',
        };
        let left = if deleted { range(h.old_start, h.old_end) } else { h.old_start.to_string() };
        let right = if added { range(h.new_start, h.new_end) } else { h.new_start.to_string() };
        out += &format!("{left}{letter}{right}\n");
        for i in h.old_start..h.old_end {
            line_out("< ", old, i, &mut out);
        }
        if deleted && added {
            out.push_str("---\n");
        }
        for j in h.new_start..h.new_end {
            line_out("> ", new, j, &mut out);
        }
    }
    out
}

fn unified(old: &File, new: &File, hunks: &[Hunk], context: usize) -> String {
    let mut out = format!("--- {}\t{}\n+++ {}\t{}\n", old.name, View::full_time(old.modified), new.name, View::full_time(new.modified));
    // Hunks closer than twice the context share one block.
    let mut groups: Vec<Vec<Hunk>> = Vec::new();
    for h in hunks {
        match groups.last_mut() {
            Some(group) if h.old_start - group.last().map_or(0, |l| l.old_end) <= 2 * context => group.push(*h),
            _ => groups.push(vec![*h]),
        }
    }
    for group in groups {
        let (first, last) = (group[0], group[group.len() - 1]);
        let old_from = first.old_start.saturating_sub(context);
        let new_from = first.new_start.saturating_sub(context);
        let old_to = (last.old_end + context).min(old.lines.len());
        let new_to = (last.new_end + context).min(new.lines.len());
        out += &format!("@@ -{} +{} @@\n", unified_range(old_from, old_to - old_from), unified_range(new_from, new_to - new_from));
        let mut i = old_from;
        for h in &group {
            while i < h.old_start {
                line_out(" ", old, i, &mut out);
                i += 1;
            }
            for i in h.old_start..h.old_end {
                line_out("-", old, i, &mut out);
            }
            for j in h.new_start..h.new_end {
                line_out("+", new, j, &mut out);
            }
            i = h.old_end;
        }
        while i < old_to {
            line_out(" ", old, i, &mut out);
            i += 1;
        }
    }
    out
}

impl GnuTool for Diff {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &DIALECT;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let mut options = Options::default();
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            match flag.short {
                Some('q') => options.brief = true,
                Some('s') => options.report_identical = true,
                Some('u') => options.context = Some(options.context.unwrap_or(3)),
                Some('U') => match value.as_deref().unwrap_or("").parse::<usize>() {
                    Ok(lines) => options.context = Some(lines.min(1 << 20)),
                    Err(_) => {
                        return Output::error(
                            format!("diff: invalid context length '{}'\ndiff: Try 'diff --help' for more information.\n", value.as_deref().unwrap_or("")),
                            2,
                        )
                    }
                },
                Some('i') => options.ignore_case = true,
                Some('b') => options.space_change = true,
                Some('w') => options.all_space = true,
                Some('B') => options.blank_lines = true,
                _ => {}
            }
        }
        let operands = &parsed.operands;
        match operands.len() {
            0 => return Output::error("diff: missing operand after 'diff'\ndiff: Try 'diff --help' for more information.\n", 2),
            1 => return Output::error(format!("diff: missing operand after '{}'\ndiff: Try 'diff --help' for more information.\n", operands[0]), 2),
            2 => {}
            _ => return Output::error(format!("diff: extra operand '{}'\ndiff: Try 'diff --help' for more information.\n", operands[2]), 2),
        }
        let view = View::for_command(invocation);
        let mut files = Vec::new();
        for operand in operands {
            let text = if operand == "-" { Ok(std::borrow::Cow::Borrowed(invocation.stdin)) } else { read_file(invocation, operand) };
            match text {
                Ok(text) => files.push(File {
                    name: operand.clone(),
                    lines: super::lines(&text).into_iter().map(str::to_string).collect(),
                    unterminated: !text.is_empty() && !text.ends_with('\n'),
                    modified: if operand == "-" { invocation.cluster.now } else { view.modified(operand) },
                }),
                Err(reason) => return Output::error(format!("diff: {operand}: {reason}\n"), 2),
            }
        }
        let (old, new) = (&files[0], &files[1]);
        let keys = |file: &File| -> Vec<String> {
            let mut keys: Vec<String> = file.lines.iter().map(|line| options.key(line)).collect();
            // The missing newline is a difference of its own.
            if file.unterminated {
                if let Some(last) = keys.last_mut() {
                    last.push('\0');
                }
            }
            keys
        };
        let mut changes = hunks(&keys(old), &keys(new));
        if options.blank_lines {
            changes.retain(|h| {
                let blank = |file: &File, from: usize, to: usize| file.lines[from..to].iter().all(|line| line.trim().is_empty());
                !(blank(old, h.old_start, h.old_end) && blank(new, h.new_start, h.new_end))
            });
        }
        if changes.is_empty() {
            if options.report_identical {
                return Output::ok(format!("Files {} and {} are identical\n", old.name, new.name));
            }
            return Output::default();
        }
        let text = if options.brief {
            format!("Files {} and {} differ\n", old.name, new.name)
        } else if let Some(context) = options.context {
            unified(old, new, &changes, context)
        } else {
            normal(old, new, &changes)
        };
        Output { stdout: text, status: 1, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::hunks;
    use crate::testing::session;

    fn lines(text: &str) -> Vec<String> {
        text.chars().map(|c| c.to_string()).collect()
    }

    #[test]
    fn finds_a_shortest_script() {
        let h = hunks(&lines("abcabba"), &lines("cbabac"));
        let edits: usize = h.iter().map(|h| (h.old_end - h.old_start) + (h.new_end - h.new_start)).sum();
        assert_eq!(edits, 5);
        assert!(hunks(&lines("same"), &lines("same")).is_empty());
        assert_eq!(hunks(&lines(""), &lines("ab")).len(), 1);
    }

    #[test]
    fn compares_two_nodes_through_process_substitution() {
        let mut shell = session();
        let out = shell.run("diff <(ssh gpu-001 hostname) <(ssh gpu-002 hostname)");
        assert_eq!((out.stdout().as_str(), out.status), ("1c1\n< gpu-001\n---\n> gpu-002\n", 1));
        assert_eq!(shell.run("diff <(nvidia-smi -L) <(nvidia-smi -L)").status, 0);
        // The substitution's file is gone once the command ends.
        assert_eq!(shell.run("cat /dev/fd/63").status, 1);
        let missing = shell.run("diff a b");
        assert_eq!((missing.stderr().as_str(), missing.status), ("diff: a: No such file or directory\n", 2));
    }
}
