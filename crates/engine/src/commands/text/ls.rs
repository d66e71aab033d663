//! `ls`: the node's files (written and generated, see `commands::files`),
//! in GNU's columns (as on a terminal 80 wide, or `COLUMNS`), one per line
//! with `-1`, and with `-a` the dot entries.

use super::{Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::files::View;
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Ls;

static SIGNATURE: Signature = Signature {
    name: "ls",
    summary: "list directory contents",
    usage: "ls [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('1'), long: None, value: None, help: "list one file per line" },
        Flag { short: Some('a'), long: Some("all"), value: None, help: "do not ignore entries starting with ." },
        Flag { short: Some('d'), long: Some("directory"), value: None, help: "list directories themselves, not their contents" },
        Flag { short: Some('F'), long: Some("classify"), value: None, help: "append indicator (/ for directories) to entries" },
    ],
    examples: &[
        Example { command: "ls /sys/class/infiniband", description: "the node's RDMA devices" },
        Example { command: "ls -1 /proc/driver/nvidia/gpus", description: "one GPU bus address per line" },
    ],
};

/// GNU's layout for a terminal: as many columns as fit, filled top to bottom.
fn columns(names: &[String], width: usize) -> String {
    if names.is_empty() {
        return String::new();
    }
    let lengths: Vec<usize> = names.iter().map(|name| name.chars().count()).collect();
    for columns in (1..=names.len()).rev() {
        let rows = names.len().div_ceil(columns);
        let columns = names.len().div_ceil(rows);
        let widths: Vec<usize> =
            (0..columns).map(|c| lengths[c * rows..((c + 1) * rows).min(names.len())].iter().max().copied().unwrap_or(0)).collect();
        let total: usize = widths.iter().map(|w| w + 2).sum::<usize>() - 2;
        if total <= width || columns == 1 {
            let mut out = String::new();
            for row in 0..rows {
                let mut line = String::new();
                for (column, width) in widths.iter().enumerate() {
                    let Some(name) = names.get(column * rows + row) else { break };
                    if column + 1 < columns && names.get((column + 1) * rows + row).is_some() {
                        line.push_str(&format!("{name:<w$}", w = width + 2));
                    } else {
                        line.push_str(name);
                    }
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
            return out;
        }
    }
    String::new()
}

impl GnuTool for Ls {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let has = |letter: char| parsed.options.iter().any(|option| matches!(option, Opt::Flag(flag, _) if flag.short == Some(letter)));
        let (one, all, directory, classify) = (has('1'), has('a'), has('d'), has('F'));
        let width = invocation.env.get("COLUMNS").and_then(|c| c.parse::<usize>().ok()).filter(|w| *w > 0).unwrap_or(80);
        let cwd = invocation.env.get("PWD").map_or("/", String::as_str);
        let view = View::of(invocation.cluster, invocation.node, cwd);
        let operands = if parsed.operands.is_empty() { vec![".".to_string()] } else { parsed.operands.clone() };
        let (mut out, mut errors, mut status) = (String::new(), String::new(), 0);
        let layout = |names: Vec<String>| if one { names.iter().map(|n| format!("{n}\n")).collect() } else { columns(&names, width) };
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for operand in &operands {
            match view.kind(operand) {
                None => {
                    errors.push_str(&format!("ls: cannot access '{operand}': No such file or directory\n"));
                    status = 2;
                }
                Some(true) if !directory => dirs.push(operand.clone()),
                Some(is_dir) => files.push(if classify && is_dir { format!("{operand}/") } else { operand.clone() }),
            }
        }
        out.push_str(&layout(files.clone()));
        let headers = operands.len() > 1;
        for (at, dir) in dirs.iter().enumerate() {
            if headers {
                if at > 0 || !files.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{dir}:\n"));
            }
            let mut names: Vec<String> = if all { vec![".".into(), "..".into()] } else { Vec::new() };
            for (name, is_dir) in view.list(dir).unwrap_or_default() {
                if name.starts_with('.') && !all {
                    continue;
                }
                names.push(if classify && is_dir { format!("{name}/") } else { name });
            }
            out.push_str(&layout(names));
        }
        Output { stdout: out, stderr: errors, status, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn lists_generated_and_written_files() {
        let out = run_on_first_node("ls /sys/class/infiniband");
        assert_eq!(out.stdout, "mlx5_0  mlx5_1  mlx5_2  mlx5_3  mlx5_4  mlx5_5  mlx5_6  mlx5_7\n");
        let out = run_on_first_node("ls -1 /sys/class/infiniband/mlx5_0/ports/1");
        assert_eq!(out.stdout, "counters\nlid\nlink_layer\nphys_state\nrate\nsm_lid\nstate\n");
        let mut shell = session();
        assert_eq!(shell.run("ls").stdout(), "");
        assert_eq!(shell.run("echo x > b.txt; echo y > a.txt; ls; ls -F /home").stdout(), "a.txt  b.txt\nuser/\n");
        let missing = shell.run("ls /nope");
        assert_eq!((missing.stderr().as_str(), missing.status), ("ls: cannot access '/nope': No such file or directory\n", 2));
    }

    #[test]
    fn many_names_fill_columns_top_to_bottom() {
        let names: Vec<String> = (0..30).map(|i| format!("file-{i:02}.log")).collect();
        let text = super::columns(&names, 80);
        assert_eq!(text.lines().next(), Some("file-00.log  file-05.log  file-10.log  file-15.log  file-20.log  file-25.log"));
        assert_eq!(text.lines().count(), 5);
    }
}
