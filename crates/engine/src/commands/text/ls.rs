//! `ls`: the node's files (written and generated, see `commands::files`),
//! in GNU's columns on a terminal (80 wide, or `COLUMNS`) or with `-C`, one
//! per line with `-1` or into a pipe or file, with `-a` the dot entries, and with `-l` the long listing
//! (mode, links, owner, size, time from the file view's metadata, the same
//! `stat` shows), sorted by time with `-t`, reversed with `-r`.

use super::{Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::files::{Metadata, View};
use crate::commands::{Example, Flag, Invocation, Output, Signature};
use crate::model::time::civil;

pub struct Ls;

static SIGNATURE: Signature = Signature {
    name: "ls",
    summary: "list directory contents",
    usage: "ls [OPTION]... [FILE]...",
    flags: &[
        Flag { short: Some('1'), long: None, value: None, help: "list one file per line" },
        Flag { short: Some('C'), long: None, value: None, help: "list entries by columns" },
        Flag { short: Some('a'), long: Some("all"), value: None, help: "do not ignore entries starting with ." },
        Flag { short: Some('d'), long: Some("directory"), value: None, help: "list directories themselves, not their contents" },
        Flag { short: Some('F'), long: Some("classify"), value: None, help: "append indicator (/ for directories) to entries" },
        Flag { short: Some('l'), long: None, value: None, help: "use a long listing format" },
        Flag { short: Some('h'), long: Some("human-readable"), value: None, help: "with -l, print sizes like 1K 234M 2G etc." },
        Flag { short: Some('t'), long: None, value: None, help: "sort by time, newest first" },
        Flag { short: Some('r'), long: Some("reverse"), value: None, help: "reverse order while sorting" },
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
        let widths: Vec<usize> = (0..columns).map(|c| lengths[c * rows..((c + 1) * rows).min(names.len())].iter().max().copied().unwrap_or(0)).collect();
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

/// `Mar  9 08:41`, or `Mar  9  2025` for a time over six months from now.
fn long_time(at: i64, now: i64) -> String {
    let c = civil(at);
    let month = crate::commands::host::journalctl::MONTHS.get(c.month as usize - 1).copied().unwrap_or("Jan");
    if (now - at).abs() > 182 * 86_400 {
        format!("{month} {:>2}  {}", c.day, c.year)
    } else {
        format!("{month} {:>2} {:02}:{:02}", c.day, c.hour, c.minute)
    }
}

/// The `-l` lines of entries (name shown, metadata), columns aligned as GNU does.
/// A device shows `MAJOR, MINOR` where a file shows its size, each number
/// aligned across the listing.
fn long_listing(entries: &[(String, Metadata)], view: &View, human_sizes: bool, now: i64) -> String {
    let devices = entries.iter().filter_map(|(_, meta)| meta.device);
    let major_w = devices.clone().map(|(major, _)| major.to_string().len()).max().unwrap_or(0);
    let minor_w = devices.map(|(_, minor)| minor.to_string().len()).max().unwrap_or(0);
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|(name, meta)| {
            let size = match meta.device {
                Some((major, minor)) => format!("{major:>major_w$}, {minor:>minor_w$}"),
                None if human_sizes => crate::commands::host::df::human_bytes(meta.size),
                None => meta.size.to_string(),
            };
            [
                meta.mode_string(),
                view.links(meta).to_string(),
                meta.owner.to_string(),
                meta.group.to_string(),
                size,
                format!("{} {name}", long_time(meta.modified, now)),
            ]
        })
        .collect();
    let width = |column: usize| rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0);
    let (links_w, owner_w, group_w, size_w) = (width(1), width(2), width(3), width(4));
    rows.iter().map(|row| format!("{} {:>links_w$} {:<owner_w$} {:<group_w$} {:>size_w$} {}\n", row[0], row[1], row[2], row[3], row[4], row[5])).collect()
}

impl GnuTool for Ls {
    const SIGNATURE: &'static Signature = &SIGNATURE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let has = |letter: char| parsed.options.iter().any(|option| matches!(option, Opt::Flag(flag, _) if flag.short == Some(letter)));
        let (all, directory, classify) = (has('a'), has('d'), has('F'));
        // Columns on a terminal, one name per line elsewhere; the last of -1 and -C wins.
        let one = parsed
            .options
            .iter()
            .rev()
            .find_map(|option| match option {
                Opt::Flag(flag, _) if flag.short == Some('1') => Some(true),
                Opt::Flag(flag, _) if flag.short == Some('C') => Some(false),
                _ => None,
            })
            .unwrap_or(!invocation.to_terminal);
        let (long, human_sizes, by_time, reverse) = (has('l'), has('h'), has('t'), has('r'));
        let width = invocation.env.get("COLUMNS").and_then(|c| c.parse::<usize>().ok()).filter(|w| *w > 0).unwrap_or(80);
        let view = View::for_command(invocation);
        let operands = if parsed.operands.is_empty() { vec![".".to_string()] } else { parsed.operands.clone() };
        let (mut out, mut errors, mut status) = (String::new(), String::new(), 0);
        let now = invocation.cluster.now;
        // Each entry: the name shown and where it is.
        let layout = |entries: Vec<(String, String)>| -> String {
            let mut entries: Vec<(String, Metadata)> = entries.into_iter().filter_map(|(name, path)| view.metadata(&path).map(|meta| (name, meta))).collect();
            if by_time {
                crate::sort::sort_by_key(&mut entries, |(_, meta)| std::cmp::Reverse(meta.modified));
            }
            if reverse {
                entries.reverse();
            }
            if long {
                return long_listing(&entries, &view, human_sizes, now);
            }
            let names: Vec<String> = entries.into_iter().map(|(name, _)| name).collect();
            if one {
                names.iter().map(|n| format!("{n}\n")).collect()
            } else {
                columns(&names, width)
            }
        };
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for operand in &operands {
            match view.kind(operand) {
                None => {
                    errors.push_str(&format!("ls: cannot access '{operand}': {}\n", view.missing_reason(operand)));
                    status = 2;
                }
                Some(true) if !directory => dirs.push(operand.clone()),
                Some(is_dir) => files.push((if classify && is_dir { format!("{operand}/") } else { operand.clone() }, operand.clone())),
            }
        }
        // Operands are listed in name order, files first, as GNU ls does.
        crate::sort::sort_by(&mut files, |a, b| a.1.cmp(&b.1));
        crate::sort::sort_by(&mut dirs, |a, b| a.cmp(b));
        out.push_str(&layout(files.clone()));
        let headers = operands.len() > 1;
        for (at, dir) in dirs.iter().enumerate() {
            if headers {
                if at > 0 || !files.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{dir}:\n"));
            }
            if !view.listable(dir) {
                errors.push_str(&format!("ls: cannot open directory '{dir}': Permission denied\n"));
                status = 2;
                continue;
            }
            let base = dir.trim_end_matches('/');
            let mut names: Vec<(String, String)> = if all { vec![(".".into(), dir.clone()), ("..".into(), format!("{base}/.."))] } else { Vec::new() };
            for (name, is_dir) in view.list(dir).unwrap_or_default() {
                if name.starts_with('.') && !all {
                    continue;
                }
                let path = format!("{base}/{name}");
                names.push((if classify && is_dir { format!("{name}/") } else { name }, path));
            }
            if long {
                // 1K blocks, as GNU counts them.
                let total: u64 =
                    names.iter().filter_map(|(_, path)| view.metadata(path)).filter(|meta| !meta.kernel).map(|meta| meta.size.div_ceil(4096) * 4).sum();
                out.push_str(&format!("total {total}\n"));
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
        assert_eq!(out.stdout, "counters\ngids\nhw_counters\nlid\nlink_layer\nphys_state\nrate\nsm_lid\nstate\n");
        let mut shell = session();
        assert_eq!(shell.run("ls").stdout(), "");
        assert_eq!(shell.run("echo x > b.txt; echo y > a.txt; ls; ls -F /home").stdout(), "a.txt  b.txt\nuser/\n");
        let missing = shell.run("ls /nope");
        assert_eq!((missing.stderr().as_str(), missing.status), ("ls: cannot access '/nope': No such file or directory\n", 2));
    }

    #[test]
    fn long_listing_agrees_with_stat() {
        let mut shell = session();
        shell.run("echo hello > notes.txt; seq 2000 > numbers.txt");
        let listing = shell.run("ls -l").stdout();
        let lines: Vec<&str> = listing.lines().collect();
        assert_eq!(lines[0], "total 16");
        assert!(lines[1].starts_with("-rw-rw-r-- 1 user user    6 Mar  9 ") && lines[1].ends_with(" notes.txt"), "{listing}");
        assert!(lines[2].starts_with("-rw-rw-r-- 1 user user 8893 Mar  9 "), "{listing}");
        assert_eq!(shell.run("stat -c %s numbers.txt").stdout(), "8893\n");
        assert!(shell.run("ls -lh numbers.txt").stdout().starts_with("-rw-rw-r-- 1 user user 8.7K "));
        let sys = shell.run("ls -l /sys/class/infiniband/mlx5_0/ports/1/rate").stdout();
        assert!(sys.starts_with("-r--r--r-- 1 root root 4096 "), "{sys}");
        assert_eq!(shell.run("ls -ld /tmp").stdout().split(' ').next(), Some("drwxrwxrwt"));
    }

    #[test]
    fn devices_show_their_numbers() {
        let out = run_on_first_node("ls -l /dev/nvidia0 /dev/nvidiactl /dev/null /dev/infiniband/umad0").stdout;
        let sizes: Vec<&str> = out.lines().map(|line| &line[line.find("root root ").map_or(0, |at| at + 10)..][..8]).collect();
        assert_eq!(sizes, ["231,   0", "  1,   3", "195,   0", "195, 255"], "{out}");
        assert!(out.starts_with("crw------- 1 root root 231,   0 "), "{out}");
        assert_eq!(run_on_first_node("ls /dev/nvidia* | wc -l").stdout, "12\n");
        assert!(run_on_first_node("stat /dev/nvidiactl").stdout.contains("Device type: c3,ff"));
    }

    #[test]
    fn one_name_per_line_unless_writing_to_the_terminal() {
        let mut shell = session();
        let eight = "mlx5_0\nmlx5_1\nmlx5_2\nmlx5_3\nmlx5_4\nmlx5_5\nmlx5_6\nmlx5_7\n";
        assert_eq!(shell.run("ls /sys/class/infiniband | wc -l").stdout(), "8\n");
        assert_eq!(shell.run("ls /sys/class/infiniband > list; cat list").stdout(), eight);
        assert_eq!(shell.run("ssh gpu-002 ls /sys/class/infiniband").stdout(), eight, "a remote command has no terminal");
        assert_eq!(shell.run("ls -C /sys/class/infiniband | cat").stdout(), "mlx5_0  mlx5_1  mlx5_2  mlx5_3  mlx5_4  mlx5_5  mlx5_6  mlx5_7\n");
        assert_eq!(shell.run("ls -1 -C /sys/class/infiniband | wc -l; ls -C -1 /sys/class/infiniband | wc -l").stdout(), "1\n8\n", "the last wins");
    }

    #[test]
    fn many_names_fill_columns_top_to_bottom() {
        let names: Vec<String> = (0..30).map(|i| format!("file-{i:02}.log")).collect();
        let text = super::columns(&names, 80);
        assert_eq!(text.lines().next(), Some("file-00.log  file-05.log  file-10.log  file-15.log  file-20.log  file-25.log"));
        assert_eq!(text.lines().count(), 5);
    }
}
