//! `stat` and `file`: what a node's file is, from the file view's metadata
//! (`commands::files::Metadata`). `stat` prints coreutils 8.32's layout
//! (Ubuntu 22.04) or a `-c`/`--printf` format; `file` names the content as
//! file 5.41 does for the kinds a lab holds (text, empty, directories,
//! devices, scripts).

use super::{usage_error, Dialect, GnuTool, Opt, Parsed, COREUTILS};
use crate::commands::files::{Kind, Metadata, View};
use crate::commands::{Example, Flag, Invocation, Output, Signature};

pub struct Stat;
pub struct File;

static STAT: Signature = Signature {
    name: "stat",
    summary: "display file or file system status",
    usage: "stat [OPTION]... FILE...",
    flags: &[
        Flag { short: Some('L'), long: Some("dereference"), value: None, help: "follow links" },
        Flag {
            short: Some('c'),
            long: Some("format"),
            value: Some("FORMAT"),
            help: "use the specified FORMAT instead of the default; output a newline after each use of FORMAT",
        },
        Flag {
            short: None,
            long: Some("printf"),
            value: Some("FORMAT"),
            help: "like --format, but interpret backslash escapes, and do not output a mandatory trailing newline",
        },
        Flag { short: Some('t'), long: Some("terse"), value: None, help: "print the information in terse form" },
    ],
    examples: &[
        Example { command: "stat /var/log/syslog", description: "size, owner and times of the log" },
        Example { command: "stat -c '%n %s %y' ~/*.txt", description: "name, size and time of each saved output" },
    ],
};

static FILE: Signature = Signature {
    name: "file",
    summary: "determine file type",
    usage: "file [OPTION...] [FILE...]",
    flags: &[
        Flag { short: Some('b'), long: Some("brief"), value: None, help: "do not prepend filenames to output lines" },
        Flag { short: Some('L'), long: Some("dereference"), value: None, help: "follow symlinks" },
    ],
    examples: &[Example { command: "file /proc/driver/nvidia/version ~/*", description: "what kind of file each is" }],
};

/// The device each file system is on (major, minor): the root is an NVMe
/// partition, the kernel's are anonymous.
fn device(meta: &Metadata) -> (u32, u32) {
    if meta.path.starts_with("/proc") {
        (0, 21)
    } else if meta.path.starts_with("/sys") {
        (0, 22)
    } else if meta.path.starts_with("/dev") {
        (0, 5)
    } else {
        (259, 2)
    }
}

fn blocks(meta: &Metadata) -> u64 {
    if meta.kernel || meta.kind == Kind::CharDevice {
        0
    } else {
        meta.size.div_ceil(4096) * 8
    }
}

/// One `%` directive's value.
fn directive(view: &View, meta: &Metadata, name: &str, letter: char) -> Option<String> {
    let (major, minor) = device(meta);
    let dev = (major << 8) | minor;
    Some(match letter {
        'n' => name.to_string(),
        'N' => format!("'{name}'"),
        's' => meta.size.to_string(),
        'b' => blocks(meta).to_string(),
        'B' => "512".to_string(),
        'o' => (if meta.path.starts_with("/proc") { 1024 } else { 4096 }).to_string(),
        'F' => meta.type_name().to_string(),
        'a' => format!("{:o}", meta.mode),
        'A' => meta.mode_string(),
        'f' => format!(
            "{:x}",
            meta.mode
                | if meta.kind == Kind::Directory {
                    0o40000
                } else if meta.kind == Kind::CharDevice {
                    0o20000
                } else {
                    0o100000
                }
        ),
        'u' => meta.uid().to_string(),
        'U' => meta.owner.to_string(),
        'g' => meta.gid().to_string(),
        'G' => meta.group.to_string(),
        'i' => meta.inode.to_string(),
        'h' => view.links(meta).to_string(),
        'd' => dev.to_string(),
        'D' => format!("{dev:x}"),
        // Hexadecimal, as stat prints them.
        't' => format!("{:x}", meta.device.map_or(0, |(major, _)| major)),
        'T' => format!("{:x}", meta.device.map_or(0, |(_, minor)| minor)),
        'x' | 'y' | 'z' => View::full_time(meta.modified),
        'X' | 'Y' | 'Z' => meta.modified.to_string(),
        'w' => {
            if meta.kernel {
                "-".to_string()
            } else {
                View::full_time(meta.modified)
            }
        }
        'W' => {
            if meta.kernel {
                "0".to_string()
            } else {
                meta.modified.to_string()
            }
        }
        '%' => "%".to_string(),
        _ => return None,
    })
}

/// A format with `%` directives (and, for `--printf`, backslash escapes).
fn format(view: &View, meta: &Metadata, name: &str, format: &str, escapes: bool) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' => {
                // Flags and width, as printf reads them: `%-10s`.
                let mut spec = String::new();
                while let Some(&d) = chars.peek() {
                    if d == '-' || d == '0' || d.is_ascii_digit() || d == '.' {
                        spec.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                let Some(letter) = chars.next() else {
                    out.push('%');
                    out.push_str(&spec);
                    break;
                };
                match directive(view, meta, name, letter) {
                    Some(value) => out.push_str(&pad(&value, &spec)),
                    None => {
                        out.push('?');
                    }
                }
            }
            '\\' if escapes => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            c => out.push(c),
        }
    }
    out
}

fn pad(value: &str, spec: &str) -> String {
    let left = spec.starts_with('-');
    let width: usize = spec.trim_start_matches(['-', '0']).split('.').next().unwrap_or("").parse().unwrap_or(0);
    let zero = spec.starts_with('0') && value.chars().all(|c| c.is_ascii_digit());
    let len = value.chars().count();
    if len >= width {
        return value.to_string();
    }
    let fill = width - len;
    if left {
        format!("{value}{}", " ".repeat(fill))
    } else if zero {
        format!("{}{value}", "0".repeat(fill))
    } else {
        format!("{}{value}", " ".repeat(fill))
    }
}

/// coreutils 8.32's default layout.
fn default_layout(meta: &Metadata) -> &'static str {
    match meta.kind {
        Kind::CharDevice => "  File: %n\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\nDevice: %Dh/%dd\tInode: %-11i Links: %-5h Device type: %t,%T\nAccess: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z\n Birth: %w\n",
        _ => "  File: %n\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\nDevice: %Dh/%dd\tInode: %-11i Links: %h\nAccess: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z\n Birth: %w\n",
    }
}

impl GnuTool for Stat {
    const SIGNATURE: &'static Signature = &STAT;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let (mut custom, mut escapes, mut terse) = (None::<String>, false, false);
        for option in &parsed.options {
            let Opt::Flag(flag, value) = option else { continue };
            match (flag.short, flag.long) {
                (Some('c'), _) => custom = value.as_ref().map(|v| format!("{v}\n")),
                (_, Some("printf")) => {
                    custom = value.clone();
                    escapes = true;
                }
                (Some('t'), _) => terse = true,
                _ => {}
            }
        }
        if parsed.operands.is_empty() {
            return usage_error("stat", &COREUTILS, "missing operand");
        }
        let view = View::for_command(invocation);
        let mut output = Output::default();
        for operand in &parsed.operands {
            let Some(meta) = view.metadata(operand) else {
                output.stderr.push_str(&format!("stat: cannot stat '{operand}': {}\n", view.missing_reason(operand)));
                output.status = 1;
                continue;
            };
            let layout = match (&custom, terse) {
                (Some(layout), _) => layout.as_str(),
                (None, true) => "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o\n",
                (None, false) => default_layout(&meta),
            };
            output.stdout.push_str(&format(&view, &meta, operand, layout, escapes));
        }
        output
    }
}

/// What `file` says of one file.
fn describe(view: &View, meta: &Metadata) -> String {
    match meta.kind {
        Kind::Directory if meta.mode & 0o1000 != 0 => "sticky, directory".to_string(),
        Kind::Directory => "directory".to_string(),
        Kind::CharDevice => "character special (1/3)".to_string(),
        // procfs files report size 0, and file reads no further.
        Kind::File if meta.size == 0 => "empty".to_string(),
        Kind::File => {
            let text = view.read(&meta.path).unwrap_or_default();
            let ascii = text.is_ascii();
            let mut kind = String::new();
            if let Some(first) = text.lines().next().filter(|line| line.starts_with("#!")) {
                let interpreter = first.trim_start_matches("#!").split_whitespace().map(|word| word.rsplit('/').next().unwrap_or(word)).collect::<Vec<_>>();
                let program = if interpreter.first() == Some(&"env") { interpreter.get(1) } else { interpreter.first() };
                kind = match program.copied() {
                    Some("bash") => "Bourne-Again shell script, ".to_string(),
                    Some("sh") => "POSIX shell script, ".to_string(),
                    Some(name) if name.starts_with("python") => "Python script, ".to_string(),
                    _ => String::new(),
                };
            }
            kind += if ascii { "ASCII text" } else { "Unicode text, UTF-8 text" };
            let longest = text.lines().map(|line| line.chars().count()).max().unwrap_or(0);
            if longest > 300 {
                kind += &format!(", with very long lines ({longest})");
            }
            if !text.ends_with('\n') {
                kind += ", with no line terminators";
            }
            kind
        }
    }
}

impl GnuTool for File {
    const SIGNATURE: &'static Signature = &FILE;
    const DIALECT: &'static Dialect = &COREUTILS;

    fn run_parsed(&self, parsed: Parsed<'static>, invocation: &Invocation) -> Output {
        let brief = parsed.options.iter().any(|option| matches!(option, Opt::Flag(flag, _) if flag.short == Some('b')));
        if parsed.operands.is_empty() {
            return Output::error("Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]\n            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]\n            <file> ...\n       file -C [-m <magicfiles>]\n       file [--help]\n", 1);
        }
        let view = View::for_command(invocation);
        // Names are padded to the longest, plus the colon and a space.
        let width = parsed.operands.iter().map(|name| name.chars().count()).max().unwrap_or(0) + 1;
        let mut out = String::new();
        for operand in &parsed.operands {
            let what = match view.metadata(operand) {
                Some(meta) => describe(&view, &meta),
                None => format!("cannot open `{operand}' (No such file or directory)"),
            };
            if brief {
                out += &format!("{what}\n");
            } else {
                out += &format!("{:<width$} {what}\n", format!("{operand}:"));
            }
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn stat_and_file_describe_the_node_s_files() {
        let mut shell = session();
        let out = shell.run("echo hello > notes.txt; stat notes.txt").stdout();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "  File: notes.txt");
        assert_eq!(lines[1], "  Size: 6         \tBlocks: 8          IO Block: 4096   regular file");
        assert!(lines[2].starts_with("Device: 10302h/66306d\tInode: "), "{}", lines[2]);
        assert_eq!(lines[3], "Access: (0664/-rw-rw-r--)  Uid: ( 1000/    user)   Gid: ( 1000/    user)");
        assert_eq!(shell.run("stat -c '%n %s %F %a %U' /etc/hostname /tmp").stdout(), "/etc/hostname 8 regular file 644 root\n/tmp 4096 directory 1777 root\n");
        let proc = shell.run("stat -c '%s %F %w' /proc/driver/nvidia/version").stdout();
        assert_eq!(proc, "0 regular empty file -\n");
        let missing = shell.run("stat nope");
        assert_eq!((missing.stderr().as_str(), missing.status), ("stat: cannot stat 'nope': No such file or directory\n", 1));
        let file = shell.run("file notes.txt /tmp /dev/null /proc/driver/nvidia/version /nope").stdout();
        assert_eq!(
            file,
            "notes.txt:                   ASCII text\n/tmp:                        sticky, directory\n/dev/null:                   character special (1/3)\n/proc/driver/nvidia/version: empty\n/nope:                       cannot open `/nope' (No such file or directory)\n"
        );
        shell.run("printf '#!/bin/bash\\necho hi\\n' > check.sh");
        assert_eq!(shell.run("file -b check.sh").stdout(), "Bourne-Again shell script, ASCII text\n");
    }
}
