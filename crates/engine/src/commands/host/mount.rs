//! `mount` (util-linux 2.37) without arguments: what is mounted
//! (`model::storage::mounts`), one `SOURCE on TARGET type TYPE (OPTIONS)`
//! line each; `-t TYPE[,TYPE]` keeps those types. Mounting is refused: a
//! plain user as util-linux refuses them, root as not emulated.

use crate::commands::options::{gnu_complaint, scan, Arg};
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::storage::mounts;

pub struct Mount;

static SIGNATURE: Signature = Signature {
    name: "mount",
    summary: "show mounted filesystems",
    usage: "mount [-l] [-t <type>]",
    flags: &[
        Flag { short: Some('t'), long: Some("types"), value: Some("<list>"), help: "limit the set of filesystem types" },
        Flag { short: Some('l'), long: Some("show-labels"), value: None, help: "show also filesystem labels" },
    ],
    examples: &[
        Example { command: "mount -t ext4", description: "the root filesystem and the /raid array" },
        Example { command: "mount | grep raid", description: "how /raid is mounted" },
    ],
};

impl Command for Mount {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut types: Option<Vec<String>> = None;
        let mut operands = Vec::new();
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) if flag.short == Some('t') => types = Some(value.unwrap_or_default().split(',').map(str::to_string).collect()),
                Arg::Flag(..) => {}
                Arg::Positional(operand) => operands.push(operand),
                other => return gnu_complaint("mount", &other, 1),
            }
        }
        if let Some(first) = operands.first() {
            if !is_root(invocation.env) {
                return Output::error(format!("mount: {first}: must be superuser to use mount.\n"), 32);
            }
            return Output::error("mount: mounting is not emulated; try `mount` or `df -h` to see what is mounted\n", 1);
        }
        let memory_kib = invocation.cluster.preset.host.memory_mib * 1024;
        let out: String = mounts(memory_kib)
            .iter()
            .filter(|m| types.as_ref().is_none_or(|types| types.iter().any(|t| t == m.fstype)))
            .map(|m| format!("{} on {} type {} ({})\n", m.source, m.target, m.fstype, m.options))
            .collect();
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn lists_the_mounts_and_filters_by_type() {
        let ext4 = run_on_first_node("mount -t ext4").stdout;
        assert_eq!(ext4, "/dev/md0 on / type ext4 (rw,relatime)\n/dev/md1 on /raid type ext4 (rw,relatime,stripe=1024)\n");
        assert!(run_on_first_node("mount")
            .stdout
            .contains("\ncgroup2 on /sys/fs/cgroup type cgroup2 (rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot)\n"));
        assert_eq!(run_on_first_node("mount /dev/sdb1 /mnt").status, 32);
        // /proc/mounts says the same.
        assert!(run_on_first_node("grep raid /proc/mounts").stdout.starts_with("/dev/md1 /raid ext4 rw,relatime,stripe=1024 0 0\n"));
    }
}
