//! The shell's syntax against real bash on the same lines: each line runs in
//! the lab shell and in `bash -c`, and standard output, standard error
//! (bash's `bash: line 1: ` prefix read as the interactive `-bash: `) and
//! the status must agree. bash must be installed (the test command's set-up
//! installs it); without it these tests fail rather than pass unchecked.

use std::process::Command;

use clusterlab_engine::{load, Session};

fn session() -> Session {
    let lab = load("[lab]\nid = \"b\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n").unwrap();
    Session::new(lab.instantiate(1), "gpu-001")
}

fn bash(line: &str) -> (String, String, i32) {
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", line])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/home/user")
        .env("LC_ALL", "C.UTF-8")
        .current_dir("/")
        .output()
        .expect("bash is installed (scripts/setup.sh --test installs it)");
    let stderr: String = String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(|line| {
            // `bash: -c: line 2: message` as an interactive shell says it: `-bash: message`.
            let rest = line.strip_prefix("bash: ").map(|rest| rest.strip_prefix("-c: ").unwrap_or(rest));
            match rest.and_then(|rest| rest.strip_prefix("line ")) {
                Some(rest) => format!("-bash: {}\n", rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches(": ")),
                None => format!("{line}\n"),
            }
        })
        // bash -c echoes the line a syntax error is on; an interactive shell does not.
        .filter(|line| !line.starts_with("-bash: `"))
        .collect();
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr, output.status.code().unwrap_or(-1))
}

/// The line in the lab shell; one it leaves incomplete ends as `bash -c`
/// ends it, at the end of the input (Ctrl-D at the `> ` prompt).
fn ours(line: &str) -> (String, String, i32) {
    let mut shell = session();
    let out = shell.run(line);
    let out = shell.end_of_input().unwrap_or(out);
    (out.stdout(), out.stderr(), out.status)
}

fn agree(lines: &[&str]) {
    let mut differences = Vec::new();
    for line in lines {
        let (expected, got) = (bash(line), ours(line));
        if expected != got {
            differences.push(format!("{line}\n  bash: {expected:?}\n  ours: {got:?}"));
        }
    }
    assert!(differences.is_empty(), "{} of {} lines differ from bash:\n{}", differences.len(), lines.len(), differences.join("\n"));
}

#[test]
fn command_substitution_and_arithmetic() {
    agree(&[
        "echo \"$(echo a b)\" `echo c` $((1+2))",
        "x=$(echo hi); echo \"[$x]\"",
        "echo $(echo a; echo b)",
        "echo \"$(echo a; echo b)\"",
        "echo $((7 / 2)) $((7 % 3)) $((2 ** 10)) $((-5 + 3 * 2))",
        "i=3; echo $((i * i)) $((i++)) $i $((++i))",
        "echo $(( (1 + 2) * 3 > 8 ? 1 : 0 ))",
        "echo $((0x1f + 010))",
        "echo $((2**63))",
        "echo $((1/0))",
        "(( 3 > 2 )) && echo yes; (( 0 )) || echo zero",
        "echo $(echo $(echo nested))",
        "x=$(false); echo $?",
        "cat <(echo a; echo b) <(echo c)",
        "wc -l < <(printf '1\\n2\\n')",
        "echo <(true) | grep -c /dev/fd/",
        "for f in <(echo a); do cat $f; done; cat /dev/fd/63",
    ]);
}

#[test]
fn brace_and_parameter_expansion() {
    agree(&[
        "echo gpu-00{1..4}",
        "echo mlx5_{0..3} {a,b}{x,y}",
        "echo {3..1} {a..e..2} {01..03}",
        "echo {a} {a,} x{,y}",
        "echo '{1..3}' \"{a,b}\"",
        "x=/home/user/notes.txt; echo ${x##*/} ${x%.*} ${x#/} ${x%%/*}X ${#x}",
        "x=hello; echo ${x/l/L} ${x//l/L}",
        "echo ${unset:-default} ${unset-other} [${unset:+alt}]",
        "x=set; echo ${x:+alt} ${x:-no}",
        "echo ${y:=assigned}; echo $y",
        "echo ~ ~/x '~'",
        "a='x  y'; echo $a; echo \"$a\"",
        "set -- 2>/dev/null; echo $#",
    ]);
}

#[test]
fn loops_conditionals_and_case() {
    agree(&[
        "for n in gpu-001 gpu-002; do echo host $n; done",
        "for i in 1 2 3; do if [ $i -eq 2 ]; then continue; fi; echo $i; done",
        "for i in 1 2 3; do echo $i; break; done",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done",
        "i=0; until [ $i -ge 2 ]; do echo $i; i=$((i + 1)); done",
        "if false; then echo a; elif true; then echo b; else echo c; fi",
        "if [ -z \"\" ] && [ -n x ]; then echo both; fi",
        "[ a = b ]; echo $?; [ a != b ]; echo $?",
        "[ 1 -eq a ]; echo $?",
        "[ 1 = ; echo $?",
        "test -d /tmp && echo dir",
        "[[ gpu-001 == gpu-* ]] && echo match",
        "[[ gpu-001 == \"gpu-*\" ]] || echo literal",
        "[[ -n x && ( a < b || 1 -eq 2 ) ]] && echo ok",
        "[[ abc =~ ^a.c$ ]] && echo re",
        "n=0; [[ $((n+=1)) == 1 && $((n+=1)) != x ]]; echo $n",
        "case gpu-002 in gpu-001) echo one;; gpu-00[2-9]) echo later;; *) echo other;; esac",
        "case x in a|x) echo ax;; esac",
        "for i in 1 2; do for j in a b; do echo $i$j; [ $j = a ] && continue 2; done; done",
        "break; echo after",
        "while false; do :; done; echo $?",
        "! true; echo $?",
        "for x; do echo never; done; echo done",
    ]);
}

#[test]
fn functions_and_lists() {
    agree(&[
        "f() { echo \"args: $# $1 $2\"; }; f a b",
        "f() { return 3; }; f; echo $?",
        "f() { local x=inner; echo $x; }; f",
        "count() { echo $#; }; count \"$@\"; count a 'b c'",
        "g() { echo \"$@\"; shift; echo \"$@\"; }; g 1 2 3",
        "function h { echo h; }; h",
        "f() { echo $1; }; f one; f two",
        "{ echo a; echo b; } | cat",
        "( x=sub; echo $x ); echo \"[$x]\"",
        "echo a; echo b && echo c || echo d",
        "false || { echo rescued; }",
        "return",
        "eval 'echo one; echo two'",
        "x=5 bash -c 'echo $x'",
        "bash -c 'echo $0 $1' name first",
        "echo start\necho next",
    ]);
}

#[test]
fn redirections() {
    agree(&[
        "echo out > /dev/null; echo shown",
        "nosuch 2>/dev/null; echo $?",
        "{ echo o; nosuch; } 2>&1 | wc -l",
        "echo err >&2 2>/dev/null",
        "echo x 1>&2",
        "cat <<< 'here string'",
        "read a b <<< 'one two three'; echo \"$b\"",
        "echo 'l1\nl2' | while read line; do echo \"got $line\"; done",
        "echo x &> /dev/null; echo $?",
        "echo x >&3",
        "cat < /nonexistent",
        "echo hi |& cat",
    ]);
}

#[test]
fn syntax_errors() {
    agree(&["done", "if true; then echo; fi fi", "echo )", "for x in a; do", "echo ${x", "echo $(echo a", "echo 'x"]);
}

/// `time` is a keyword before a pipeline and a word anywhere else; the
/// lines pin what does not depend on how long the commands take.
#[test]
fn the_time_keyword() {
    agree(&[
        "TIMEFORMAT=; time echo a | tr a b",
        "TIMEFORMAT='took %%'; time true",
        "TIMEFORMAT=done; time ! false; echo $?",
        "TIMEFORMAT=x; time -p true 2>/dev/null",
        "TIMEFORMAT='%0R'; time sleep 1",
        "TIMEFORMAT='%1lR'; time sleep 2",
        "echo time; echo a time b",
        "TIMEFORMAT=t; time; echo $?",
        "TIMEFORMAT=t; f() { echo in; }; time f",
        "TIMEFORMAT=t; time { echo a; echo b; } | wc -l",
    ]);
}

/// bash's `kill -l`: the signal table, and names and numbers both ways.
#[test]
fn kill_lists_signals_as_bash_does() {
    agree(&["kill -l", "kill -l 9", "kill -l TERM", "kill -l sigusr1 137 34 50", "kill -l 99", "kill -L 15"]);
}
