//! Shell builtins: what changes the shell itself rather than printing from
//! the model: `ssh` and `exit` move between nodes, `export`, `unset`, `cd`,
//! `pwd`, `history`, job control, and bash's own `help`.

use super::interp::Interp;
use super::jobs;
use crate::commands::{self, Call, Output, Runner};

pub const NAMES: &[&str] = &["cd", "command", "exit", "export", "help", "history", "jobs", "kill", "logout", "pwd", "ssh", "type", "unset", "wait"];

/// What bash itself runs without a program: its builtins (the emulated
/// `echo`, `printf`, `true`, `false` included, which are programs too) and,
/// for `type`, its reserved words.
const BASH_BUILTINS: &[&str] = &[
    ".", ":", "[", "break", "cd", "command", "continue", "echo", "eval", "exit", "export", "false", "help", "history", "jobs", "kill", "local", "logout",
    "printf", "pwd", "read", "return", "shift", "source", "test", "true", "type", "unset", "wait",
];
const KEYWORDS: &[&str] =
    &["!", "[[", "]]", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "then", "time", "until", "while", "{", "}"];

/// `NAME=value` as bash reads an assignment word.
pub fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

/// bash's read-only variables: who the shell runs as.
pub fn is_readonly(name: &str) -> bool {
    matches!(name, "EUID" | "UID" | "PPID")
}

/// Runs `argv` if it names a builtin. `from_terminal`: its standard input
/// is the trainee's terminal (so `ssh HOST` logs in).
pub fn run(interp: &mut Interp, argv: &[String], stdin: &str, from_terminal: bool) -> Option<Output> {
    let args = &argv[1..];
    if argv[0] == "sudo" {
        // Only a root shell at the terminal is the shell's business; sudo
        // with a command is a program.
        return open_root_shell(interp, args, from_terminal);
    }
    Some(match argv[0].as_str() {
        "ssh" => ssh(interp, args, stdin, from_terminal),
        "exit" | "logout" => exit(interp),
        "export" => {
            for arg in args {
                match assignment(arg) {
                    Some((name, _)) if is_readonly(name) => return Some(Output::error(format!("-bash: {name}: readonly variable\n"), 1)),
                    Some((name, value)) => {
                        interp.shell.env.insert(name.to_string(), value.to_string());
                    }
                    None if assignment(&format!("{arg}=")).is_some() => {}
                    None => return Some(Output::error(format!("-bash: export: `{arg}': not a valid identifier\n"), 1)),
                }
            }
            Output::default()
        }
        "unset" => {
            for arg in args {
                if is_readonly(arg) {
                    return Some(Output::error(format!("-bash: unset: {arg}: cannot unset: readonly variable\n"), 1));
                }
                interp.shell.env.remove(arg);
            }
            Output::default()
        }
        "cd" => change_directory(interp, args),
        "pwd" => Output::ok(format!("{}\n", interp.shell.env.get("PWD").map_or("/", String::as_str))),
        "type" => type_of(interp, args),
        "command" => match args.first().map(String::as_str) {
            Some("-v") | Some("-V") => {
                let verbose = args[0] == "-V";
                let mut output = Output::default();
                for name in &args[1..] {
                    match (what_is(interp, name).first(), verbose) {
                        (Some(found), true) => output.stdout += &format!("{}\n", found.sentence(name)),
                        (Some(What::File(path)), false) => output.stdout += &format!("{path}\n"),
                        (Some(_), false) => output.stdout += &format!("{name}\n"),
                        (None, true) => {
                            output.stderr += &format!("-bash: command: {name}: not found\n");
                            output.status = 1;
                        }
                        (None, false) => output.status = 1,
                    }
                }
                output
            }
            // `command NAME ARGS`: the program or builtin, never a function.
            Some(_) => {
                let call = Call { cluster: &interp.cluster, host: &interp.shell.host.clone(), env: Some(&interp.shell.env.clone()), stdin };
                let runner = interp.runner();
                match runner.run_program(call, args) {
                    Some(output) => output,
                    None => Output::error(format!("-bash: {}: command not found\n", args[0]), 127),
                }
            }
            None => Output::default(),
        },
        "help" => help(args),
        "jobs" => match interp.session.as_deref_mut() {
            Some(session) => jobs::list_jobs(&interp.cluster, session),
            None => Output::default(),
        },
        // Simulated jobs have finished when they start; servers would wait
        // for a client forever, so `wait` does not block on them.
        "wait" => Output::default(),
        "kill" => kill(interp, args),
        "history" if args.first().map(String::as_str) == Some("-c") => {
            if let Some(session) = interp.session.as_deref_mut() {
                session.history.clear();
            }
            Output::default()
        }
        "history" => {
            let history = interp.session.as_deref().map_or(&[][..], |s| &s.history[..]);
            Output::ok(history.iter().enumerate().map(|(at, line)| format!("{:>5}  {line}\n", at + 1)).collect::<String>())
        }
        _ => return None,
    })
}

/// `kill`: a job of this shell (`%N`, or its PID) ends as the job table
/// says; any other PID is a process of the node, signalled as the model
/// has it (`commands::host::kill`).
fn kill(interp: &mut Interp, args: &[String]) -> Output {
    if let Some(("-l" | "-L", specs)) = args.split_first().map(|(first, rest)| (first.as_str(), rest)) {
        return crate::commands::host::kill::list(specs);
    }
    let mut signal: Option<String> = None;
    let mut targets: Vec<&str> = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        match arg.as_str() {
            "-s" | "-n" => {
                signal = args.get(at).cloned();
                at += 1;
            }
            _ if arg.starts_with("-%") => targets.push(&arg[1..]),
            _ if arg.starts_with('-') && arg.len() > 1 && targets.is_empty() => signal = Some(arg[1..].to_string()),
            _ => targets.push(arg),
        }
    }
    if targets.is_empty() {
        return Output::error("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n", 2);
    }
    let mut out = Output::default();
    for target in targets {
        let own_job = target.starts_with('%') || interp.session.as_deref().is_some_and(|session| session.jobs.iter().any(|job| target.parse() == Ok(job.pid)));
        let one = if own_job {
            jobs::kill_job(interp.session.as_deref_mut(), target)
        } else {
            let Some(node) = interp.cluster.node(&interp.shell.host) else { continue };
            let user = commands::user(&interp.shell.env);
            crate::commands::host::kill::builtin(&interp.cluster, node, target, commands::is_root(&interp.shell.env), user, signal.as_deref())
        };
        out.stderr += &one.stderr;
        out.status = out.status.max(one.status);
        out.changes.extend(one.changes);
    }
    out
}

/// What a name runs as, in the order bash looks: keyword, function, builtin, file.
enum What {
    Keyword,
    Function(String),
    Builtin,
    File(String),
}

impl What {
    /// `type`'s sentence: `ls is /usr/bin/ls`.
    fn sentence(&self, name: &str) -> String {
        match self {
            What::Keyword => format!("{name} is a shell keyword"),
            What::Function(body) => format!("{name} is a function\n{name} () \n{body}"),
            What::Builtin => format!("{name} is a shell builtin"),
            What::File(path) => format!("{name} is {path}"),
        }
    }

    /// `type -t`'s word.
    fn word(&self) -> &'static str {
        match self {
            What::Keyword => "keyword",
            What::Function(_) => "function",
            What::Builtin => "builtin",
            What::File(_) => "file",
        }
    }
}

fn what_is(interp: &Interp, name: &str) -> Vec<What> {
    let mut found = Vec::new();
    if KEYWORDS.contains(&name) {
        found.push(What::Keyword);
    }
    if let Some(body) = interp.shell.functions.get(name) {
        found.push(What::Function(body.trim().to_string()));
    }
    if BASH_BUILTINS.contains(&name) {
        found.push(What::Builtin);
    }
    let search_path = interp.shell.env.get("PATH").map_or("", String::as_str);
    found.extend(commands::install::lookup_all(name, search_path).into_iter().map(What::File));
    found
}

/// bash's `type [-afptP] NAME...`.
fn type_of(interp: &Interp, args: &[String]) -> Output {
    let (flags, names): (Vec<&String>, Vec<&String>) = args.iter().partition(|arg| arg.starts_with('-') && arg.len() > 1);
    let mut letters = String::new();
    for flag in flags {
        for letter in flag.chars().skip(1) {
            if !"afptP".contains(letter) {
                return Output::error(format!("-bash: type: -{letter}: invalid option\ntype: usage: type [-afptP] name [name ...]\n"), 2);
            }
            letters.push(letter);
        }
    }
    let has = |letter: char| letters.contains(letter);
    let mut output = Output::default();
    for name in names {
        let mut found = what_is(interp, name);
        if has('f') {
            found.retain(|what| !matches!(what, What::Function(_)));
        }
        if has('P') {
            found.retain(|what| matches!(what, What::File(_)));
        }
        if !has('a') {
            found.truncate(1);
        }
        if found.is_empty() {
            if !(has('t') || has('p') || has('P')) {
                output.stderr += &format!("-bash: type: {name}: not found\n");
            }
            output.status = 1;
        }
        for what in found {
            output.stdout += &match what {
                _ if has('t') => format!("{}\n", what.word()),
                What::File(path) if has('p') || has('P') => format!("{path}\n"),
                _ if has('p') => String::new(),
                _ => format!("{}\n", what.sentence(name)),
            };
        }
    }
    output
}

/// bash's `help`: here, the emulated commands and the builtins.
fn help(args: &[String]) -> Output {
    match args.first() {
        None => {
            let mut out = commands::help::overview();
            out += &format!("\nShell builtins: {}.\n", NAMES.join(", "));
            out += "Type 'help COMMAND' for its flags and examples.\n";
            Output::ok(out)
        }
        Some(name) => match commands::find(name) {
            Some(command) => Output::ok(commands::help::describe(command.signature())),
            None => Output::error(format!("-bash: help: no help topics match `{name}'.  Try `help help' or `man -k {name}' or `info {name}'.\n"), 1),
        },
    }
}

const SSH_USAGE: &str = "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface] [-b bind_address]\n           [-c cipher_spec] [-D [bind_address:]port] [-E log_file] [-e escape_char]\n           [-F configfile] [-I pkcs11] [-i identity_file] [-J destination]\n           [-L address] [-l login_name] [-m mac_spec] [-O ctl_cmd] [-o option]\n           [-P tag] [-p port] [-R address] [-S ctl_path] [-W host:port]\n           [-w local_tun[:remote_tun]] destination [command [argument ...]]\n";

/// `ssh HOST` logs in to HOST; `ssh HOST CMD...` runs CMD there, in a
/// login shell of HOST's, over the same cluster.
fn ssh(interp: &mut Interp, args: &[String], stdin: &str, from_terminal: bool) -> Output {
    // Options that take a value (-p 22, -o X=Y, -i key, -l user) are skipped.
    let mut rest = args.iter();
    let mut target = None;
    while let Some(arg) = rest.next() {
        if matches!(arg.as_str(), "-p" | "-o" | "-i" | "-l" | "-F" | "-J") {
            rest.next();
        } else if arg.starts_with('-') {
            continue;
        } else {
            target = Some(arg.clone());
            break;
        }
    }
    let Some(target) = target else {
        return Output::error(SSH_USAGE, 255);
    };
    let host = target.rsplit('@').next().unwrap_or(&target).to_string();
    let command: Vec<&str> = rest.map(String::as_str).collect();
    if host == crate::model::network::MONITOR_HOST || host == crate::model::network::MONITOR_IP {
        // The monitoring team's host takes no operator's key.
        let user = crate::commands::user(&interp.shell.env);
        return Output::error(format!("{user}@{host}: Permission denied (publickey).\n"), 255);
    }
    match interp.cluster.node(&host) {
        None => return Output::error(format!("ssh: Could not resolve hostname {host}: Name or service not known\n"), 255),
        Some(node) if !node.up(interp.cluster.now) => return Output::error(format!("ssh: connect to host {host} port 22: No route to host\n"), 255),
        Some(_) => {}
    }
    if command.is_empty() && from_terminal {
        if let Some(session) = interp.session.as_deref_mut() {
            session.ssh_stack.push(std::mem::replace(&mut interp.shell.host, host.clone()));
            interp.shell.env.insert("HOSTNAME".to_string(), host);
            return Output { duration_ms: 300, ..Output::default() };
        }
    }
    // Without a command, the remote shell reads its script from standard input.
    let mut warning = String::new();
    let line = if command.is_empty() {
        warning.push_str("Pseudo-terminal will not be allocated because stdin is not a terminal.\r\n");
        stdin.lines().collect::<Vec<_>>().join("\n")
    } else {
        command.join(" ")
    };
    let call = Call { cluster: &interp.cluster, host: &host, env: None, stdin: if command.is_empty() { "" } else { stdin } };
    let mut output = interp.runner().run_line(call, &line);
    output.stderr.insert_str(0, &warning);
    if output.changes.iter().any(|change| matches!(change, crate::model::change::Change::Reboot { node, .. } if *node == host)) {
        // The remote end went away mid-session.
        output.stderr += &format!("Connection to {host} closed by remote host.\n");
        output.status = 255;
    }
    output.duration_ms = output.duration_ms.saturating_add(300);
    output
}

/// `cd [DIR|-]`: to a directory of the node (home without one), as bash
/// says it: PWD and OLDPWD follow, `cd -` prints where it went.
fn change_directory(interp: &mut Interp, args: &[String]) -> Output {
    let env = &interp.shell.env;
    let (target, announce) = match args {
        [] => (env.get("HOME").cloned().unwrap_or_else(|| "/".to_string()), false),
        [dash] if dash == "-" => match env.get("OLDPWD") {
            Some(old) => (old.clone(), true),
            None => return Output::error("-bash: cd: OLDPWD not set\n", 1),
        },
        [dir] => (dir.clone(), false),
        _ => return Output::error("-bash: cd: too many arguments\n", 1),
    };
    let view = interp.file_view();
    let path = view.resolve(&target);
    match view.metadata(&path) {
        None => return Output::error(format!("-bash: cd: {target}: No such file or directory\n"), 1),
        Some(meta) if meta.kind != crate::commands::files::Kind::Directory => return Output::error(format!("-bash: cd: {target}: Not a directory\n"), 1),
        // root's home is root's alone (0700).
        Some(meta) if meta.mode & 0o001 == 0 && meta.owner == "root" && !crate::commands::is_root(&interp.shell.env) => {
            return Output::error(format!("-bash: cd: {target}: Permission denied\n"), 1)
        }
        Some(_) => {}
    }
    let previous = interp.shell.env.insert("PWD".to_string(), path.clone());
    if let Some(previous) = previous {
        interp.shell.env.insert("OLDPWD".to_string(), previous);
    }
    if announce {
        Output::ok(format!("{path}\n"))
    } else {
        Output::default()
    }
}

/// `sudo -i`, `sudo -s`, `sudo su [-]`, `sudo bash` at the terminal: a
/// root shell on this host until `exit` (a login shell starts in /root).
/// None for anything else, which the `sudo` program runs.
fn open_root_shell(interp: &mut Interp, args: &[String], from_terminal: bool) -> Option<Output> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let login = match words.as_slice() {
        ["-i" | "--login"] | ["su", "-" | "-l" | "--login"] | ["su", "-" | "-l" | "--login", "root"] => true,
        ["-s" | "--shell"] | ["-E" | "-H", "-s"] | ["-s", "-E" | "-H"] | ["su"] | ["su", "root"] | ["bash" | "sh"] => false,
        _ => return None,
    };
    let session = interp.session.as_deref_mut().filter(|_| from_terminal)?;
    let previous = interp.shell.env.clone();
    session.root_shells.push(super::session::RootShell { depth: session.ssh_stack.len(), login, env: previous.clone() });
    let user = crate::commands::user(&previous).to_string();
    let env = &mut interp.shell.env;
    for (key, value) in [
        (crate::commands::EUID, "0"),
        ("USER", "root"),
        ("LOGNAME", "root"),
        ("HOME", crate::commands::files::ROOT_HOME),
        ("SUDO_UID", "1000"),
        ("SUDO_GID", "1000"),
        ("SUDO_COMMAND", "/bin/bash"),
    ] {
        env.insert(key.to_string(), value.to_string());
    }
    env.insert("SUDO_USER".to_string(), user);
    if login {
        env.insert("PWD".to_string(), crate::commands::files::ROOT_HOME.to_string());
    }
    Some(Output::default())
}

fn exit(interp: &mut Interp) -> Output {
    if interp.session.is_none() {
        interp.exit();
        return Output::default();
    }
    // The innermost root shell, if it was opened on this host, ends first.
    if let Some(session) = interp.session.as_deref_mut() {
        let depth = session.ssh_stack.len();
        if let Some(root) = session.root_shells.last().is_some_and(|root| root.depth == depth).then(|| session.root_shells.pop()).flatten() {
            interp.shell.env = root.env;
            return Output::ok(if root.login { "logout\n" } else { "exit\n" });
        }
    }
    match interp.leave_ssh() {
        Some(left) => Output { stdout: "logout\n".to_string(), stderr: format!("Connection to {left} closed.\n"), ..Output::default() },
        // The login shell of a lab stays open: there is nowhere to go back to.
        None => Output::ok("logout\n"),
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{reloaded, session};

    #[test]
    fn cd_moves_the_working_directory_and_the_prompt_shows_it() {
        let mut shell = session();
        assert_eq!(shell.run("cd /sys/class").status, 0);
        assert_eq!(shell.prompt(), "user@gpu-001:/sys/class$ ");
        assert_eq!(shell.run("cd -").stdout(), "/home/user\n");
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        assert_eq!(shell.run("cd /etc/hostname").stderr(), "-bash: cd: /etc/hostname: Not a directory\n");
        assert_eq!(shell.run("cd /nowhere").stderr(), "-bash: cd: /nowhere: No such file or directory\n");
        assert_eq!(shell.run("cd /root").stderr(), "-bash: cd: /root: Permission denied\n");
        assert_eq!(shell.run("cd a b").stderr(), "-bash: cd: too many arguments\n");
    }

    #[test]
    fn sudo_i_opens_a_root_login_shell_until_exit() {
        let mut shell = session();
        assert_eq!(shell.run("sudo -i").status, 0);
        assert_eq!(shell.prompt(), "root@gpu-001:~# ");
        assert_eq!(shell.run("pwd; whoami").stdout(), "/root\nroot\n");
        // Root writes in its home; a reload keeps the root shell.
        assert_eq!(shell.run("echo kept > notes").status, 0);
        let mut shell = reloaded(&shell);
        assert_eq!(shell.prompt(), "root@gpu-001:~# ");
        assert_eq!(shell.run("cat /root/notes").stdout(), "kept\n");
        // ssh from it, and back: the root shell is still there, then logout.
        shell.run("ssh gpu-002");
        assert_eq!(shell.prompt(), "root@gpu-002:~# ");
        shell.run("exit");
        assert_eq!(shell.run("exit").stdout(), "logout\n");
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        assert_eq!(shell.run("echo no > /root/x").stderr(), "-bash: /root/x: Permission denied\n");
        // -s keeps the directory and says `exit`.
        shell.run("cd /tmp");
        shell.run("sudo -s");
        assert_eq!(shell.prompt(), "root@gpu-001:/tmp# ");
        assert_eq!(shell.run("exit").stdout(), "exit\n");
        // With a command, sudo is the program it always was.
        assert_eq!(shell.run("sudo -i whoami").stdout(), "root\n");
    }

    #[test]
    fn ssh_moves_between_nodes_and_exit_returns() {
        let mut shell = session();
        assert_eq!(shell.run("ssh gpu-002").status, 0);
        assert_eq!(shell.prompt(), "user@gpu-002:~$ ");
        assert_eq!(shell.run("hostname").stdout(), "gpu-002\n");
        let out = shell.run("exit");
        assert_eq!((out.stdout().as_str(), out.stderr().as_str()), ("logout\n", "Connection to gpu-002 closed.\n"));
        assert_eq!(shell.run("hostname").stdout(), "gpu-001\n");
    }

    #[test]
    fn ssh_runs_one_command_remotely() {
        let mut shell = session();
        assert_eq!(shell.run("ssh gpu-002 hostname").stdout(), "gpu-002\n");
        assert_eq!(shell.run("ssh user@gpu-002 'nvidia-smi -L | wc -l'").stdout(), "8\n");
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        let out = shell.run("ssh gpu-009");
        assert_eq!((out.stderr().as_str(), out.status), ("ssh: Could not resolve hostname gpu-009: Name or service not known\n", 255));
        let out = shell.run("ssh mgmt-01 hostname");
        assert_eq!((out.stderr().as_str(), out.status), ("user@mgmt-01: Permission denied (publickey).\n", 255));
        // A remote shell is a login shell of its own: the caller's variables stay home.
        shell.run("export MINE=1");
        assert_eq!(shell.run("ssh gpu-002 'echo [$MINE] $HOSTNAME'").stdout(), "[] gpu-002\n");
    }

    #[test]
    fn ssh_without_a_terminal_runs_its_input() {
        let mut shell = session();
        let out = shell.run("echo hostname | ssh gpu-002");
        assert_eq!(out.stdout(), "gpu-002\n");
        assert!(out.stderr().starts_with("Pseudo-terminal will not be allocated"));
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
    }

    #[test]
    fn assignments_and_export() {
        let mut shell = session();
        assert_eq!(shell.run("A=1; echo $A").stdout(), "1\n");
        assert_eq!(shell.run("export B=two; echo $B").stdout(), "two\n");
        assert_eq!(shell.run("C=3 echo x; echo \"[$C]\"").stdout(), "x\n[]\n");
        assert_eq!(shell.run("export 1x=2").status, 1);
        shell.run("unset A");
        assert_eq!(shell.run("echo \"[$A]\"").stdout(), "[]\n");
    }

    #[test]
    fn history_is_numbered_like_bash() {
        let mut shell = session();
        shell.run("hostname");
        assert_eq!(shell.run("history").stdout(), "    1  hostname\n    2  history\n");
    }

    #[test]
    fn type_and_command_say_what_a_name_runs() {
        let mut shell = session();
        assert_eq!(shell.run("type ls cd if").stdout(), "ls is /usr/bin/ls\ncd is a shell builtin\nif is a shell keyword\n");
        assert_eq!(shell.run("type -t ibstat echo").stdout(), "file\nbuiltin\n");
        assert_eq!(shell.run("type -a echo").stdout(), "echo is a shell builtin\necho is /usr/bin/echo\necho is /bin/echo\n");
        assert_eq!(shell.run("type -p ibstat").stdout(), "/usr/sbin/ibstat\n");
        let out = shell.run("type nosuch");
        assert_eq!((out.stderr().as_str(), out.status), ("-bash: type: nosuch: not found\n", 1));
        assert_eq!(shell.run("command -v nvidia-smi cd").stdout(), "/usr/bin/nvidia-smi\ncd\n");
        assert_eq!(shell.run("command -v nosuch").status, 1);
        assert_eq!(shell.run("f() { echo hi; }; type -t f; command hostname").stdout(), "function\ngpu-001\n");
    }

    #[test]
    fn help_lists_commands_and_builtins() {
        let mut shell = session();
        let out = shell.run("help").stdout();
        assert!(out.contains("Shell builtins: cd, command, exit"), "{out}");
        assert!(shell.run("help nvidia-smi").stdout().starts_with("nvidia-smi - "));
        assert_eq!(shell.run("help nosuch").status, 1);
    }
}
