//! `sudo CMD...`: executes CMD as a program through the invocation's runner
//! as root (the lab's user may: no password is asked), with sudo's
//! variables (`USER=root`, `HOME=/root`, `SUDO_USER`, ...); what CMD
//! changes is returned as CMD returned it. Builtins are not programs, so
//! sudo cannot run them, as with the real sudo. Without a command at the
//! terminal (`sudo -i`, `sudo -s`, `sudo su -`) it opens a root shell,
//! which is the shell's business (`shell::builtins::open_root_shell`).

use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct Sudo;

const USAGE: &str = "usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABknS] [-g group] [-h host] [-p prompt] [-u user]\nusage: sudo -l [-ABknS] [-g group] [-h host] [-p prompt] [-U user] [-u user] [command]\nusage: sudo [-ABbEHknPS] [-C num] [-D directory] [-g group] [-h host] [-p prompt] [-R directory] [-T timeout] [-u user] [VAR=value] [-i|-s] [<command>]\nusage: sudo -e [-ABknS] [-C num] [-D directory] [-g group] [-h host] [-p prompt] [-R directory] [-T timeout] [-u user] file ...\n";

/// `sudo -l`: Ubuntu 22.04's defaults, the `%sudo` rule and the lab's
/// password-free rule for the operator account.
fn list(host: &str) -> String {
    let user = crate::model::node::USER;
    format!(
        "Matching Defaults entries for {user} on {host}:\n    env_reset, mail_badpass, secure_path=/usr/local/sbin\\:/usr/local/bin\\:/usr/sbin\\:/usr/bin\\:/sbin\\:/bin\\:/snap/bin, use_pty\n\nUser {user} may run the following commands on {host}:\n    (ALL : ALL) ALL\n    (ALL) NOPASSWD: ALL\n"
    )
}

static SIGNATURE: Signature = Signature {
    name: "sudo",
    summary: "execute a command as the superuser",
    usage: "sudo COMMAND [ARG]...\n       sudo -i | -s",
    flags: &[],
    examples: &[Example { command: "sudo dmesg", description: "the kernel log, as root" }],
};

impl Command for Sudo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let host = &invocation.node.hostname;
        match args.first().map(String::as_str) {
            Some("-l") | Some("--list") => return Output::ok(list(host)),
            Some("-V") | Some("--version") => return Output::ok("Sudo version 1.9.9\n"),
            // The lab's rule asks no password: there is no cached one to refresh or forget.
            Some("-v") | Some("-k") | Some("-K") | Some("--validate") | Some("--reset-timestamp") | Some("--remove-timestamp") if args.len() == 1 => {
                return Output::default()
            }
            Some("-h") | Some("--help") => return Output::ok(format!("sudo - execute a command as another user\n\n{USAGE}")),
            _ => {}
        }
        // Options that take no value (-E, -H, -n) are accepted; -u USER takes one.
        let mut at = 0;
        while let Some(arg) = args.get(at).filter(|a| a.starts_with('-')) {
            at += if matches!(arg.as_str(), "-u" | "-g") { 2 } else { 1 };
        }
        let Some(name) = args.get(at) else {
            return Output::error(USAGE, 1);
        };
        let mut env = invocation.env.clone();
        let user = invocation.env.get("SUDO_USER").or(invocation.env.get("USER")).cloned().unwrap_or_else(|| crate::model::node::USER.to_string());
        for (key, value) in [
            (crate::commands::EUID, "0".to_string()),
            ("USER", "root".to_string()),
            ("LOGNAME", "root".to_string()),
            ("HOME", "/root".to_string()),
            ("SUDO_USER", user),
            ("SUDO_UID", "1000".to_string()),
            ("SUDO_GID", "1000".to_string()),
            ("SUDO_COMMAND", args[at..].join(" ")),
        ] {
            env.insert(key.to_string(), value);
        }
        // The program it starts reads what it was given.
        let call = crate::commands::Call { stdin: invocation.stdin, ..invocation.call_on(&invocation.node.hostname, Some(&env)) };
        // A shell is a program too: `sudo bash -c LINE` runs the line as root.
        if matches!(name.as_str(), "bash" | "sh") && args.get(at + 1).is_some_and(|flag| flag == "-c") {
            return invocation.runner.run_line(call, args.get(at + 2).map_or("", String::as_str));
        }
        invocation.runner.run_program(call, &args[at..]).unwrap_or_else(|| Output::error(format!("sudo: {name}: command not found\n"), 1))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn runs_the_command() {
        assert_eq!(run_on_first_node("sudo hostname").stdout, "gpu-001\n");
        assert_eq!(run_on_first_node("sudo cd /").stderr, "sudo: cd: command not found\n");
        assert_eq!(run_on_first_node("sudo").status, 1);
        let listed = run_on_first_node("sudo -l").stdout;
        assert!(listed.starts_with("Matching Defaults entries for user on gpu-001:\n") && listed.ends_with("    (ALL) NOPASSWD: ALL\n"), "{listed}");
        assert_eq!(run_on_first_node("sudo -V").stdout, "Sudo version 1.9.9\n");
        assert_eq!(run_on_first_node("sudo -k").status, 0);
        let mut shell = session();
        assert_eq!(shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=x").status, 0);
        assert_eq!(shell.changes().len(), 1);
        assert_eq!(run_on_first_node("sudo sudo hostname").stdout, "gpu-001\n");
    }

    #[test]
    fn the_program_reads_the_pipe() {
        let mut shell = session();
        assert_eq!(shell.run("echo hi | sudo tee /tmp/x").stdout(), "hi\n");
        assert_eq!(shell.run("cat /tmp/x").stdout(), "hi\n");
        assert_eq!(shell.run("printf 'b\\na\\n' | env LC_ALL=C sort").stdout(), "a\nb\n");
        assert_eq!(shell.run("echo x | timeout 5 wc -l").stdout(), "1\n");
    }
}
