//! `lsblk` (util-linux 2.37): the node's block devices as a tree
//! (`model::storage`), libsmartcols' layout: each column as wide as its
//! widest cell, SIZE, RM and RO right-aligned, MAJ:MIN as `%3u:%-3u`, the
//! last column unpadded, children drawn with `├─`, `└─` and `│ `; sizes
//! in util-linux's one-letter units with one decimal (`1.7T`, `512M`).

use crate::commands::options::{gnu_complaint, scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::storage::{block_devices, BlockDevice};

pub struct Lsblk;

static SIGNATURE: Signature = Signature {
    name: "lsblk",
    summary: "list block devices",
    usage: "lsblk [options] [<device> ...]",
    flags: &[
        Flag { short: Some('b'), long: Some("bytes"), value: None, help: "print SIZE in bytes rather than in human readable format" },
        Flag { short: Some('d'), long: Some("nodeps"), value: None, help: "don't print slaves or holders" },
        Flag { short: Some('n'), long: Some("noheadings"), value: None, help: "don't print headings" },
        Flag { short: Some('o'), long: Some("output"), value: Some("<list>"), help: "output columns" },
    ],
    examples: &[
        Example { command: "lsblk", description: "the NVMe drives, their partitions and the RAID arrays on them" },
        Example { command: "lsblk -d -o NAME,SIZE,MODEL", description: "each drive's size and model" },
    ],
};

const DEFAULT_COLUMNS: &[&str] = &["NAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE", "MOUNTPOINTS"];
const KNOWN_COLUMNS: &[&str] = &["NAME", "KNAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE", "MOUNTPOINT", "MOUNTPOINTS", "MODEL"];

/// util-linux's `size_to_human_string` with one-letter suffixes: one
/// decimal, rounded, left out when it is 0.
pub fn human_size(bytes: u64) -> String {
    let mut exponent = 0;
    while exponent < 60 && bytes >> (exponent + 10) > 0 {
        exponent += 10;
    }
    let letters = ["B", "K", "M", "G", "T", "P", "E"];
    let letter = letters[exponent / 10];
    let mut whole = bytes >> exponent;
    let mut decimal = 0;
    if exponent > 0 {
        let remainder = bytes & ((1u64 << exponent) - 1);
        let thousandths = ((u128::from(remainder) * 1000) >> exponent) as u64;
        decimal = (thousandths + 50) / 100;
        if decimal == 10 {
            whole += 1;
            decimal = 0;
        }
    }
    if decimal > 0 {
        format!("{whole}.{decimal}{letter}")
    } else {
        format!("{whole}{letter}")
    }
}

/// The cell of `column` for `device`, its NAME drawn after `prefix`.
fn cell(column: &str, device: &BlockDevice, prefix: &str, bytes: bool) -> String {
    match column {
        "NAME" => format!("{prefix}{}", device.name),
        "KNAME" => device.name.clone(),
        "MAJ:MIN" => format!("{:>3}:{:<3}", device.major, device.minor),
        "RM" | "RO" => "0".into(),
        "SIZE" if bytes => device.bytes.to_string(),
        "SIZE" => human_size(device.bytes),
        "TYPE" => device.kind.into(),
        "MOUNTPOINT" | "MOUNTPOINTS" => device.mountpoint.into(),
        "MODEL" => device.model.into(),
        _ => String::new(),
    }
}

/// The rows of a device and, unless `nodeps`, what sits on it.
fn rows(device: &BlockDevice, columns: &[&str], lead: &str, branch: &str, nodeps: bool, bytes: bool, out: &mut Vec<Vec<String>>) {
    out.push(columns.iter().map(|column| cell(column, device, &format!("{lead}{branch}"), bytes)).collect());
    if nodeps {
        return;
    }
    let below = match branch {
        "├─" => format!("{lead}│ "),
        "└─" => format!("{lead}  "),
        _ => lead.to_string(),
    };
    for (index, child) in device.children.iter().enumerate() {
        let branch = if index + 1 == device.children.len() { "└─" } else { "├─" };
        rows(child, columns, &below, branch, nodeps, bytes, out);
    }
}

impl Command for Lsblk {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut bytes, mut nodeps, mut headings) = (false, false, true);
        let mut columns: Vec<String> = DEFAULT_COLUMNS.iter().map(|c| c.to_string()).collect();
        let mut wanted = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('b') => bytes = true,
                    Some('d') => nodeps = true,
                    Some('n') => headings = false,
                    Some('o') => {
                        let list = value.unwrap_or_default();
                        // `+LIST` adds to the default columns.
                        let (base, list) = match list.strip_prefix('+') {
                            Some(rest) => (columns.clone(), rest.to_string()),
                            None => (Vec::new(), list),
                        };
                        columns = base;
                        for name in list.split(',').filter(|name| !name.is_empty()) {
                            let upper = name.to_ascii_uppercase();
                            if !KNOWN_COLUMNS.contains(&upper.as_str()) {
                                return Output::error(format!("lsblk: unknown column: {name}\n"), 1);
                            }
                            columns.push(upper);
                        }
                    }
                    _ => {}
                },
                Arg::Positional(device) => wanted.push(device),
                other => return gnu_complaint("lsblk", &other, 1),
            }
        }
        let devices = block_devices();
        let mut chosen: Vec<&BlockDevice> = Vec::new();
        let mut missing = String::new();
        for name in &wanted {
            match devices.iter().find(|d| format!("/dev/{}", d.name) == *name) {
                Some(device) => chosen.push(device),
                None => missing += &format!("lsblk: {name}: not a block device\n"),
            }
        }
        if wanted.is_empty() {
            chosen = devices.iter().collect();
        }
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut table: Vec<Vec<String>> = Vec::new();
        for device in &chosen {
            rows(device, &columns, "", "", nodeps, bytes, &mut table);
        }
        let width = |index: usize| {
            let widest = table.iter().map(|row| row[index].chars().count()).max().unwrap_or(0);
            if headings {
                widest.max(columns[index].len())
            } else {
                widest
            }
        };
        let widths: Vec<usize> = (0..columns.len()).map(width).collect();
        let render = |cells: &[String]| -> String {
            let mut line = String::new();
            for (index, text) in cells.iter().enumerate() {
                let last = index + 1 == cells.len();
                let pad = widths[index].saturating_sub(text.chars().count());
                let right = matches!(columns[index], "RM" | "RO" | "SIZE");
                if right {
                    line += &" ".repeat(pad);
                }
                line += text;
                if !last {
                    if !right {
                        line += &" ".repeat(pad);
                    }
                    line.push(' ');
                }
            }
            line + "\n"
        };
        let mut out = String::new();
        if headings && !chosen.is_empty() {
            out += &render(&columns.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        }
        for row in &table {
            out += &render(row);
        }
        // None of the named devices found: util-linux's exit code 32.
        let status = if !wanted.is_empty() && chosen.is_empty() {
            32
        } else if missing.is_empty() {
            0
        } else {
            64
        };
        Output { stdout: out, stderr: missing, status, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::human_size;
    use crate::testing::run_on_first_node;

    #[test]
    fn sizes_round_to_one_decimal_as_util_linux_does() {
        assert_eq!(human_size(1_920_383_410_176), "1.7T");
        assert_eq!(human_size(512 << 20), "512M");
        assert_eq!(human_size(3_840_755_982_336), "3.5T");
        assert_eq!(human_size(1023), "1023B");
        // A decimal that rounds up to 10 carries into the number, not the unit.
        assert_eq!(human_size((1 << 30) - 1), "1024M");
    }

    #[test]
    fn the_tree_shows_the_mirror_and_the_stripe() {
        let out = run_on_first_node("lsblk").stdout;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "NAME        MAJ:MIN RM  SIZE RO TYPE  MOUNTPOINTS");
        assert_eq!(lines[1], "nvme0n1     259:0    0  1.7T  0 disk  ");
        assert_eq!(lines[2], "├─nvme0n1p1 259:1    0  512M  0 part  /boot/efi");
        assert_eq!(lines[3], "└─nvme0n1p2 259:2    0  1.7T  0 part  ");
        assert_eq!(lines[4], "  └─md0       9:0    0  1.7T  0 raid1 /");
        assert!(out.contains("\nnvme9n1     259:13   0  3.5T  0 disk  \n└─md1         9:1    0 27.9T  0 raid0 /raid\n"), "{out}");
        let drives = run_on_first_node("lsblk -d -o NAME,SIZE,MODEL").stdout;
        assert!(drives.starts_with("NAME    SIZE MODEL\nnvme0n1 1.7T SAMSUNG MZ1L21T9HCLS-00A07\n"), "{drives}");
        assert_eq!(drives.lines().count(), 11);
        let missing = run_on_first_node("lsblk /dev/sdz");
        assert_eq!((missing.status, missing.stderr.as_str()), (32, "lsblk: /dev/sdz: not a block device\n"));
        assert_eq!(run_on_first_node("lsblk -o NAME,COLOUR").stderr, "lsblk: unknown column: COLOUR\n");
    }
}
