//! `nvidia-smi nvlink`: `-s`/`--status` (link speeds) and `-e`/`--errorcounters`
//! (FACTS.md §5). Per-link lines start with a TAB and a space.

use super::{invalid_arguments, list_line, reachable, select, EXIT_NOT_FOUND};
use crate::commands::options::{scan, Arg};
use crate::commands::{Flag, Invocation, Output, Signature};
use crate::model::Gpu;

/// The subcommand's own flags (scanned after the `nvlink` word).
static NVLINK: Signature = Signature {
    name: "nvidia-smi nvlink",
    summary: "NVLink status and error counters",
    usage: "nvidia-smi nvlink [options]",
    flags: &[
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Display help information." },
        Flag { short: Some('i'), long: Some("id"), value: Some("ID"), help: "Display NVLink info for a single GPU." },
        Flag { short: Some('l'), long: Some("link"), value: Some("LINK"), help: "Limit the output to one link." },
        Flag { short: Some('s'), long: Some("status"), value: None, help: "Display link state (active/inactive) and speed." },
        Flag { short: Some('e'), long: Some("errorcounters"), value: None, help: "Display error counters." },
    ],
    examples: &[],
};

enum Report {
    Status,
    Errors,
    Help,
}

pub fn run(invocation: &Invocation) -> Output {
    let args = invocation.args().get(1..).unwrap_or(&[]);
    let mut report = None;
    let mut ids = None;
    let mut only_link: Option<usize> = None;
    for arg in scan(&NVLINK, args) {
        match arg {
            Arg::Flag(flag, value) => match (flag.long, value) {
                (Some("help"), _) => report = Some(Report::Help),
                (Some("status"), _) => report = Some(Report::Status),
                (Some("errorcounters"), _) => report = Some(Report::Errors),
                (Some("id"), value) => ids = value,
                (Some("link"), Some(link)) => match link.trim().parse() {
                    Ok(link) => only_link = Some(link),
                    Err(_) => return invalid_arguments(),
                },
                _ => return invalid_arguments(),
            },
            Arg::Positional(_) | Arg::Unknown(_) | Arg::MissingValue(_) => return invalid_arguments(),
        }
    }
    // A bare `nvidia-smi nvlink` prints its help, as the real subcommand does.
    let report = report.unwrap_or(Report::Help);
    if matches!(report, Report::Help) {
        return Output::ok(help());
    }
    let Some(selected) = select(invocation.node, ids.as_deref()) else {
        return Output::ok("No devices were found\n").with_status(EXIT_NOT_FOUND);
    };
    let (gpus, stderr) = reachable(&selected);
    let mut out = String::new();
    for gpu in gpus {
        out += &list_line(gpu);
        out += &match report {
            Report::Errors => error_counters(gpu, only_link),
            _ => status(gpu, only_link),
        };
    }
    Output { stdout: out, stderr, status: 0, duration_ms: 120, ..Output::default() }
}

fn links(gpu: &Gpu, only: Option<usize>) -> impl Iterator<Item = (usize, &crate::model::gpu::NvLink)> {
    gpu.nvlinks.iter().enumerate().filter(move |(at, _)| only.is_none_or(|only| only == *at))
}

fn status(gpu: &Gpu, only: Option<usize>) -> String {
    links(gpu, only)
        .map(|(at, link)| {
            if link.active {
                // `{}` prints 25.0 as `25` and 26.562 as `26.562`, as the tool does.
                format!("\t Link {at}: {} GB/s\n", link.gbytes_per_sec)
            } else {
                format!("\t Link {at}: <inactive>\n")
            }
        })
        .collect()
}

fn error_counters(gpu: &Gpu, only: Option<usize>) -> String {
    let blocks: Vec<String> = links(gpu, only)
        .map(|(at, link)| {
            format!(
                "\t Link {at}: Replay Errors: {}\n\t Link {at}: Recovery Errors: {}\n\t Link {at}: CRC Errors: {}\n",
                link.replay_errors, link.recovery_errors, link.crc_errors
            )
        })
        .collect();
    blocks.join("\n")
}

fn help() -> String {
    let mut out = String::from("\n    nvlink -- Display NvLink information.\n\n    Usage: nvidia-smi nvlink [options]\n\n    Options include:\n");
    for flag in NVLINK.flags {
        out += &format!("    [{}]: {}\n", flag.display(), flag.help);
    }
    out
}
