//! `fuser [-v] FILE...` (psmisc 23.4): which processes hold a file open,
//! for the GPUs' device files (`/dev/nvidiaN`, `/dev/nvidiactl`), from the
//! model's processes (`model::service::processes`). psmisc writes the file
//! names (and with `-v` the whole table) to standard error and the PIDs to
//! standard output; it exits 1 when no process was found. A plain user
//! sees only their own processes (others' `/proc/PID/fd` are closed to them).

use crate::commands::files::generated::{NVIDIACTL_MINOR, NVIDIA_MAJOR};
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::service::{processes, Process};

pub struct Fuser;

static SIGNATURE: Signature = Signature {
    name: "fuser",
    summary: "identify processes using files",
    usage: "fuser [-v] FILE...",
    flags: &[Flag { short: Some('v'), long: Some("verbose"), value: None, help: "verbose output: user, PID, access and command" }],
    examples: &[Example { command: "sudo fuser -v /dev/nvidia*", description: "what holds the GPUs open (a GPU reset needs none)" }],
};

/// The width psmisc gives the file name column.
const NAME_FIELD: usize = 20;

impl Command for Fuser {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut verbose = false;
        let mut files = Vec::new();
        for arg in invocation.args() {
            match arg.as_str() {
                "-v" | "--verbose" => verbose = true,
                _ if arg.starts_with('-') && arg.len() > 1 => {
                    return Output::error(
                        format!(
                            "fuser: Invalid option {arg}\nUsage: fuser [-fIMuvw] [-a|-s] [-4|-6] [-c|-m|-n SPACE]\n             [-k [-i] [-SIGNAL]] NAME...\n"
                        ),
                        1,
                    )
                }
                _ => files.push(arg.clone()),
            }
        }
        if files.is_empty() {
            return Output::error(
                "No process specification given\nUsage: fuser [-fIMuvw] [-a|-s] [-4|-6] [-c|-m|-n SPACE]\n             [-k [-i] [-SIGNAL]] NAME...\n",
                1,
            );
        }
        let root = is_root(invocation.env);
        let user = crate::commands::user(invocation.env);
        let view = crate::commands::files::View::for_command(invocation);
        let all = processes(invocation.cluster, invocation.node);
        let mut out = Output { status: 1, ..Output::default() };
        if verbose {
            out.stderr += &format!("{:NAME_FIELD$} USER        PID ACCESS COMMAND\n", "");
        }
        for file in &files {
            let Some(meta) = view.metadata(file) else {
                out.stderr += &format!("{file}: No such file or directory\n");
                continue;
            };
            let holders: Vec<&Process> = all.iter().filter(|p| holds(p, meta.device) && (root || p.user == user)).collect();
            if !verbose {
                out.stderr += &format!("{file}:");
                for process in &holders {
                    out.stdout += &format!("{:6}", process.pid);
                }
                out.stderr.push('\n');
            } else {
                for (at, process) in holders.iter().enumerate() {
                    let name = if at == 0 { format!("{file}:") } else { String::new() };
                    out.stderr += &format!("{name:<NAME_FIELD$} {:<8} {:6} F...m {}\n", process.user, process.pid, process.comm);
                }
            }
            if !holders.is_empty() {
                out.status = 0;
            }
        }
        out
    }
}

/// Whether `process` holds the file of `device` (major, minor) open: a
/// GPU's device by its minor number (`files::generated::devices`), or the
/// control device any GPU holder opens too.
fn holds(process: &Process, device: Option<(u32, u32)>) -> bool {
    match device {
        Some((NVIDIA_MAJOR, NVIDIACTL_MINOR)) => !process.gpus.is_empty(),
        Some((NVIDIA_MAJOR, minor)) => process.gpus.contains(&minor),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn names_what_holds_a_gpu() {
        let mut shell = session();
        let table = shell.run("sudo fuser -v /dev/nvidia0");
        let stderr = table.stderr();
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines[0], "                     USER        PID ACCESS COMMAND");
        assert!(lines[1].starts_with("/dev/nvidia0:        root    ") && lines[1].ends_with(" F...m nv-hostengine"), "{lines:?}");
        assert!(lines[2].starts_with("                     root    ") && lines[2].ends_with(" F...m dcgm-exporter"), "{lines:?}");
        // A plain user cannot see root's open files.
        assert_eq!(shell.run("fuser /dev/nvidia0").status, 1);
        assert_eq!(shell.run("sudo fuser /dev/nvidia9").stderr(), "/dev/nvidia9: No such file or directory\n");
    }
}
