//! The shell against bash's behaviour on the same inputs.

use clusterlab_engine::shell::Stream;
use clusterlab_engine::{load, Session};

fn session() -> Session {
    let lab = load("[lab]\nid = \"s\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\ncount = 2\n").unwrap();
    Session::new(lab.instantiate(1), "gpu-001")
}

#[test]
fn unknown_commands_answer_like_bash() {
    let out = session().run("ibstatt");
    assert_eq!(out.stderr(), "-bash: ibstatt: command not found\n");
    assert_eq!(out.status, 127);
}

#[test]
fn status_and_lists() {
    let mut shell = session();
    assert_eq!(shell.run("nosuch; echo $?").stdout(), "127\n");
    assert_eq!(shell.run("nosuch && echo yes || echo no").stdout(), "no\n");
    assert_eq!(shell.run("echo a && echo b").stdout(), "a\nb\n");
    assert_eq!(shell.run("nosuch || nosuch2 || echo third").stdout(), "third\n");
    assert_eq!(shell.run("echo ok || echo skipped && echo runs").stdout(), "ok\nruns\n");
}

#[test]
fn expansion_and_quoting() {
    let mut shell = session();
    assert_eq!(shell.run("echo $USER@$HOSTNAME").stdout(), "user@gpu-001\n");
    assert_eq!(shell.run("echo '$USER' \"${USER}\"").stdout(), "$USER user\n");
    assert_eq!(shell.run("echo $NOTSET x").stdout(), "x\n");
    assert_eq!(shell.run("echo \"$NOTSET\" x").stdout(), " x\n");
}

#[test]
fn syntax_errors_set_status_2() {
    let mut shell = session();
    let out = shell.run("| wc");
    assert_eq!(out.stderr(), "-bash: syntax error near unexpected token `|'\n");
    assert_eq!(out.status, 2);
    assert_eq!(shell.run("echo $?").stdout(), "2\n");
}

#[test]
fn prompt_history_and_completion() {
    let mut shell = session();
    assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
    shell.run("hostname");
    shell.run("   ");
    assert_eq!(shell.history(), ["hostname"]);
    assert_eq!(shell.complete("nvi"), ["nvidia-smi"]);
    assert_eq!(shell.complete("nvidia-smi --list"), ["--list-gpus"]);
    assert_eq!(shell.complete("nvidia-smi -i ").len(), 8);
    assert_eq!(shell.complete("nvidia-smi -i 7"), ["7"]);
    assert_eq!(shell.complete("ssh gpu-00"), ["gpu-001", "gpu-002"]);
    assert_eq!(shell.complete("ibstat mlx5_7"), ["mlx5_7"]);
    assert_eq!(shell.complete("nvidia-smi -L | gre"), ["grep"]);
    assert_eq!(shell.complete("hostname && ss"), ["ssh", "sstat"]);
    assert!(shell.complete("nosuchcommand -").is_empty());
}

#[test]
fn stderr_and_stdout_keep_their_order() {
    let out = session().run("echo one; nosuch; echo two");
    assert_eq!(out.text(), "one\n-bash: nosuch: command not found\ntwo\n");
}

#[test]
fn same_seed_same_bytes() {
    let a = session().run("nvidia-smi; nvidia-smi -L").text();
    let b = session().run("nvidia-smi; nvidia-smi -L").text();
    assert_eq!(a, b);
}

#[test]
fn pagers_page_on_the_terminal_and_print_elsewhere() {
    use clusterlab_engine::commands::Pager;
    let mut shell = session();
    let less = Stream::Pager(Pager::Less { quit_if_one_screen: false, at_end: false });
    assert_eq!(shell.run("seq 3 | less").chunks, vec![(less, "1\n2\n3\n".to_string())]);
    // Piped on, it is plain standard output.
    assert_eq!(shell.run("seq 3 | less | wc -l").chunks, vec![(Stream::Stdout, "3\n".to_string())]);
    assert_eq!(shell.run("more /etc/hostname").chunks, vec![(Stream::Pager(Pager::More), "gpu-001\n".to_string())]);
    assert_eq!(shell.run("ssh gpu-002 less /etc/hostname").chunks, vec![(Stream::Stdout, "gpu-002\n".to_string())]);
    assert_eq!(shell.run("journalctl --no-pager -k -n 1").chunks[0].0, Stream::Stdout);
    let missing = shell.run("less nope");
    assert_eq!((missing.stderr().as_str(), missing.status), ("nope: No such file or directory\n", 1));
    assert_eq!(shell.run("less").stderr(), "Missing filename (\"less --help\" for help)\n");
    assert_eq!(shell.run("more nope").stderr(), "more: cannot open nope: No such file or directory\n");
}

#[test]
fn time_reports_the_simulated_clock_in_bashs_format() {
    let mut shell = session();
    let out = shell.run("time sleep 2 > /dev/null");
    assert_eq!(out.stdout(), "");
    let report = out.stderr();
    assert!(report.starts_with("\nreal\t0m2.00"), "{report:?}");
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[2].starts_with("user\t0m0.0") && lines[3].starts_with("sys\t0m0.0"), "{report:?}");
    let posix = shell.run("time -p sleep 90").stderr();
    assert!(posix.starts_with("real 90.00\nuser 0."), "{posix:?}");
}
