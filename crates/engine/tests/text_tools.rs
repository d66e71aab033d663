//! The text utilities through the shell, against the real GNU tools on the
//! same input (a missing tool fails the test).
//!
//! The lab shell has `echo -e` but no files, so every input is piped in.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use clusterlab_engine::{load, Session};

fn session() -> Session {
    session_on("")
}

/// The two-node lab, its cluster's extra TOML lines (`fabric = "roce"`) given.
fn session_on(cluster: &str) -> Session {
    let text = format!("[lab]\nid = \"t\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n{cluster}");
    Session::new(load(&text).unwrap().instantiate(1), "gpu-001")
}

/// A fixed input with the shapes operators grep: a table, key: value lines,
/// repeated and numeric fields.
const INPUT: &str = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1a2b)\n\
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-3c4d)\n\
    Temperature : 34 C\n\
    Power Draw : 71.2 W\n\
mlx5_0 port 1 ==> ibp24s0 (Up)\n\
mlx5_1 port 1 ==> ibp64s0 (Down)\n\
node gpu-002 10K\n\
node gpu-001 2M\n\
node gpu-001 512\n\
\n\
xid 79 on GPU 3\n\
abab ab1 mlx5_1 mlx5_1 Aa aA\n";

/// The real tool an emulated one is compared with: GNU awk for `awk`
/// (run under the name `awk`, which its messages print).
fn reference(program: &str) -> &str {
    if program == "awk" {
        "gawk"
    } else {
        program
    }
}

/// Runs the real tool on INPUT; None when it is not installed.
fn real(program: &str, args: &[&str]) -> Option<(String, String, i32)> {
    let mut child = Command::new(reference(program))
        .arg0(program)
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // A tool that exits before reading everything (`grep -q`, a bad
    // option) closes the pipe: that is its answer, not a failure to run it.
    let _ = child.stdin.take()?.write_all(INPUT.as_bytes());
    let output = child.wait_with_output().ok()?;
    Some((String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned(), output.status.code().unwrap_or(-1)))
}

/// Is the installed tool GNU's (so its bytes are the reference)?
fn is_gnu(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .map(|out| {
            let version = String::from_utf8_lossy(&out.stdout);
            version.contains("GNU") || version.contains("util-linux")
        })
        .unwrap_or(false)
}

/// Quotes an argument for the lab shell.
fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

/// The lab's `echo -e` line that reproduces INPUT exactly.
fn feed() -> String {
    let body = INPUT.strip_suffix('\n').unwrap().replace('\\', "\\\\").replace('\n', "\\n");
    format!("echo -e {}", quote(&body))
}

fn compare(program: &str, args: &[&str]) {
    // The reference must be there: a missing tool fails the test, never skips it.
    assert!(is_gnu(reference(program)), "GNU {} is not installed: the test command's set-up installs it", reference(program));
    let Some((stdout, stderr, status)) = real(program, args) else {
        panic!("cannot run {program}");
    };
    let line = format!("{} | {program} {}", feed(), args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
    let ours = session().run(&line);
    assert_eq!(ours.stdout(), stdout, "stdout of {program} {args:?}");
    assert_eq!(ours.stderr(), stderr, "stderr of {program} {args:?}");
    assert_eq!(ours.status, status, "status of {program} {args:?}");
}

/// Compares every case, then fails once naming each that differs.
fn compare_all(program: &str, cases: &[&[&str]]) {
    let differing: Vec<String> = cases
        .iter()
        .filter_map(|args| {
            let caught = std::panic::catch_unwind(|| compare(program, args));
            caught.err().map(|panic| panic.downcast_ref::<String>().cloned().unwrap_or_default())
        })
        .collect();
    assert!(differing.is_empty(), "{} of {} cases differ:\n{}", differing.len(), cases.len(), differing.join("\n"));
}

#[test]
fn the_feed_reproduces_the_input() {
    assert_eq!(session().run(&feed()).stdout(), INPUT);
}

#[test]
fn grep_matches_gnu_grep() {
    for args in [
        &["NVIDIA"][..],
        &["-c", "GPU"],
        &["-v", "GPU"],
        &["-n", "-i", "down"],
        &["-w", "GPU"],
        &["-o", "-E", "GPU-[0-9a-f]+"],
        &["-E", "Up|Down"],
        &["-F", "(UUID:"],
        &["-C", "1", "Power"],
        &["-A", "1", "-B", "2", "mlx5_1"],
        &["-x", "node gpu-001 512"],
        &["-q", "xid"],
        &["zzz"],
        &["-e", "Temp", "-e", "Power"],
        &["^ *[A-Z][a-z]* [A-Z]"],
        &["-c", "^$"],
        &["-m", "1", "GPU"],
        &["-ow", "[0-9]*"],
        &["-l", "GPU"],
        &["-H", "xid"],
        &["\\(GPU\\) [0-9]\\{1,2\\}:"],
        &["--color=never", "H100"],
        &["[[:digit:]]\\+ C$"],
        &["-j9"],
        &["[a"],
        &["-E", "(a"],
        &["a\\{1"],
        &["--bogus", "x"],
        &["-A"],
        &["-E", "a{1"],
        // Back-references, in both syntaxes, folded, and the errors.
        &["-o", "-E", "(ab)\\1"],
        &["-c", "\\(ab\\)\\1"],
        &["-o", "-E", "(mlx5_[0-9]) \\1"],
        &["-o", "-i", "-E", "(a)\\1"],
        &["-o", "\\([A-Z]\\)\\1"],
        &["-E", "(a)\\2"],
        &["\\(a\\1\\)"],
        &["-o", "-E", "([0-9])\\1"],
        // Bracket expressions: what cannot start a range.
        &["[[:alpha:]-z]"],
        &["-o", "[[:alpha:]-]"],
        &["[a-z-0]"],
        &["-c", "[a-c-e]"],
        &["-o", "[--0]"],
    ] {
        compare("grep", args);
    }
}

#[test]
fn awk_matches_gnu_awk() {
    let cases: &[&[&str]] = &[
        &["{ print $1 }"][..],
        &["-F", ":", "{ print NF, $2 }"],
        &["NR == 2, NR == 4"],
        &["/Temperature/,/mlx5_0/ { print NR\": \" $0 }"],
        &["/node/,/zzz/"],
        &["{ i = 0; do { i++ } while (i < 3); print i, $1 }"],
        &["BEGIN { do print \"once\"; while (0) }"],
        &["BEGIN { printf \"%*d|%-*s|\\n\", 5, 42, 4, \"ab\" }"],
        &["BEGIN { printf \"%.*f\\n\", 2, 3.14159 }"],
        &["BEGIN { OFMT = \"%.2f\"; x = 3.14159; print x; print x \"\" }"],
        &["BEGIN { CONVFMT = \"%.2f\"; x = 3.14159; y = x \"\"; print y; print 17 \"\" }"],
        &["BEGIN { print 1e6, 1e17, 0.1 + 0.2, 100000 * 100000, -0.0000001 }"],
        &["{ s += $3 } END { print s, NR, s / NR }"],
        &["{ n = split($0, parts, \" \"); print n, parts[n] }"],
        &["{ gsub(/[0-9]/, \"#\"); print }"],
        &["{ print length($0), substr($0, 3, 4), index($0, \"GPU\"), toupper($1) }"],
        &["match($0, /[0-9]+/) { print RSTART, RLENGTH }"],
        &["BEGIN { printf \"%5.1f%%|%x|%o|%e|%c|%c\\n\", 12.345, 255, 8, 1234.5, 65, \"hello\" }"],
        &["NF > 3 && $1 !~ /^GPU/"],
        &["BEGIN { x[\"a\"] = 1; delete x[\"a\"]; print length(x); if (!(\"a\" in x)) print \"gone\" }"],
        &["BEGIN { while (i < 3) { i++; if (i == 2) continue; print i } }"],
        &["{ $2 = \"X\"; print; print NF }"],
        &["BEGIN { print substr(\"hello\", 0, 2), substr(\"hello\", -1), substr(\"hello\", 2) }"],
        &["BEGIN { print 1 == 1.0, \"10\" < \"9\", 10 < 9, \"a\" \"b\" }"],
        &["{ print $NF }"],
        &["BEGIN { getline; print \"first:\", $0 }"],
        &["END { print $0 }"],
        &["BEGIN { print int(-3.7), int(\"4x\"), 7 % 3, -7 % 3, 2 ^ 10 }"],
        &["BEGIN { printf \"%d %i %s\\n\", \"3abc\", 2.9, 1/3 }"],
        &["BEGIN {"],
        &["{ print $1 "],
    ];
    compare_all("awk", cases);
}

#[test]
fn coreutils_match_gnu() {
    compare("head", &["-n", "3"]);
    compare("head", &["-2"]);
    compare("head", &["-n", "-8"]);
    compare("head", &["-c", "20"]);
    compare("tail", &["-n", "2"]);
    compare("tail", &["-n", "+9"]);
    compare("tail", &["-3"]);
    compare("sort", &[]);
    compare("sort", &["-r"]);
    compare("sort", &["-k3h"]);
    compare("sort", &["-t", ":", "-k", "2"]);
    compare("sort", &["-u", "-k1,1"]);
    compare("sort", &["-n", "-k", "3"]);
    compare("uniq", &["-c"]);
    compare("uniq", &["-d", "-w", "4"]);
    compare("cut", &["-d", " ", "-f", "2,3"]);
    compare("cut", &["-c", "1-6"]);
    compare("cut", &["-d", ":", "-f", "2-", "-s"]);
    compare("tr", &["a-z", "A-Z"]);
    compare("tr", &["-s", " "]);
    compare("tr", &["-d", "0-9"]);
    compare("tr", &["-cd", "[:alpha:]\\n"]);
    compare("cat", &["-n"]);
    compare("cat", &["-A"]);
    compare("head", &["-n", "x"]);
    compare("cut", &["-f", "0"]);
    compare("sort", &["-k", "0"]);
    compare("tr", &["a"]);
}

#[test]
fn sed_matches_gnu_sed() {
    for args in [
        &["s/GPU/gpu/"][..],
        &["-n", "s/.*UUID: \\(GPU-[0-9a-f]*\\).*/\\1/p"],
        &["-E", "s/([a-z]+) ([0-9]+)/\\2 \\1/g"],
        &["-n", "/Temperature/,/mlx5_0/p"],
        &["-n", "2,+2p"],
        &["0~3d"],
        &["-n", "$="],
        &["/^$/d;s/ \\+/ /g"],
        &["-n", "/Down/!p"],
        &["1!G;h;$!d"],
        &[":a;N;$!ba;s/\\n/|/g"],
        &["y/abc/ABC/"],
        &["-n", "/mlx5/{s/port 1 //;p}"],
        &["3q"],
        &["2i\\\ninserted"],
        &["$a the end"],
        &["4c\\\nchanged"],
        &["-n", "l"],
        &["s/\\b[a-z]/\\u&/g"],
        &["s/[0-9]\\+/<&>/2"],
        &["-s", "-n", "1p"],
        &["s/a/b"],
        &["k"],
        &["s/a/b/q"],
        &["s/\\(a\\)/\\2/"],
        &["-E", "s/(mlx5_[0-9]) \\1/\\1 (twice)/"],
        &["-n", "/\\(ab\\)\\1/p"],
        &["y/ab/c/"],
        &["{p"],
        &["}"],
        &["b nowhere"],
        &["--bogus"],
    ] {
        compare("sed", args);
    }
}

#[test]
fn column_matches_util_linux_column() {
    for args in [&["-t"][..], &["-t", "-s", ":"], &["-t", "-o", " | "], &["-c", "40"], &["-x", "-c", "60"], &["-c", "5"], &[]] {
        compare("column", args);
    }
}

#[test]
fn pipelines_compose() {
    let mut shell = session();
    assert_eq!(shell.run("nvidia-smi -L | grep -c GPU").stdout(), "8\n");
    assert_eq!(shell.run("nvidia-smi -L | head -n 2 | tail -n 1 | cut -d: -f1").stdout(), "GPU 1\n");
    assert_eq!(shell.run("nvidia-smi -L | awk '{print $2}' | tr -d : | sort -rn | head -1").stdout(), "7\n");
    assert_eq!(shell.run("nvidia-smi -L | awk -F'(' '{print $1}' | sort | uniq -c | wc -l").stdout(), "8\n");
    assert_eq!(shell.run("sinfo -h | awk '{print $4}'").stdout(), "2\n");
    assert_eq!(shell.run("echo x | grep -q y; echo $?").stdout(), "1\n");
    assert_eq!(shell.run("true && false || echo recovered").stdout(), "recovered\n");
    let slept = shell.run("sleep 3");
    assert_eq!(slept.duration_ms, 3000);
}

#[test]
fn every_example_runs_on_a_healthy_node() {
    for command in clusterlab_engine::commands::all() {
        let name = command.signature().name;
        if !["awk", "cat", "cut", "grep", "head", "scontrol", "sinfo", "sleep", "sort", "squeue", "tail", "tee", "tr", "uniq"].contains(&name) {
            continue;
        }
        for example in command.signature().examples {
            // An example about RoCE's settings reads files an IB node lacks.
            let mut shell = if example.command.contains("/ecn/") { session_on("fabric = \"roce\"\n") } else { session() };
            let out = shell.run(example.command);
            assert_eq!(out.status, 0, "{}: {}", example.command, out.stderr());
            assert_eq!(out.stderr(), "", "{}", example.command);
        }
    }
}

/// Runs the real `diff` on two files holding OLD and NEW; the lab's `diff`
/// on the same files written in the trainee's home.
fn compare_diff(old: &str, new: &str, args: &[&str]) {
    assert!(is_gnu("diff"), "GNU diff is not installed: the test command's set-up installs diffutils");
    let dir = std::env::temp_dir().join(format!("clusterlab-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), old).unwrap();
    std::fs::write(dir.join("b.txt"), new).unwrap();
    let real = Command::new("diff").args(args).args(["a.txt", "b.txt"]).current_dir(&dir).env("LC_ALL", "C.UTF-8").output().unwrap();
    let write = |name: &str, text: &str| format!("printf '%s' {} > {name}", quote(text));
    let mut shell = session();
    shell.run(&write("a.txt", old));
    shell.run(&write("b.txt", new));
    let line = format!("diff {} a.txt b.txt", args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
    let ours = shell.run(&line);
    // Unified headers carry the files' times, which differ between the two machines.
    let strip = |text: &str| text.lines().filter(|l| !l.starts_with("--- ") && !l.starts_with("+++ ")).map(|l| format!("{l}\n")).collect::<String>();
    assert_eq!(strip(&ours.stdout()), strip(&String::from_utf8_lossy(&real.stdout)), "diff {args:?} of {old:?} and {new:?}");
    assert_eq!(ours.status, real.status.code().unwrap_or(-1), "status of diff {args:?}");
}

#[test]
fn diff_matches_gnu_diff() {
    let before = "GPU 0: 34 C\nGPU 1: 35 C\nGPU 2: 33 C\nGPU 3: 36 C\nmlx5_0 Up\nmlx5_1 Up\nmlx5_2 Up\nmlx5_3 Up\nend\n";
    let after = "GPU 0: 34 C\nGPU 1: 85 C\nGPU 2: 33 C\nGPU 3: 36 C\nmlx5_0 Up\nmlx5_1 Down\nmlx5_2 Up\nmlx5_3 Up\nnew line\nend\n";
    for args in [&[][..], &["-u"], &["-U", "1"], &["-U", "0"], &["-q"], &["-i"], &["-w"]] {
        compare_diff(before, after, args);
        compare_diff(after, before, args);
    }
    compare_diff("a\nb\nc\n", "a\nb\nc\n", &["-s"]);
    compare_diff("a\nb\n", "a\nb", &[]);
    compare_diff("a\nb", "a\nc", &["-u"]);
    compare_diff("", "x\ny\n", &[]);
    compare_diff("x\ny\n", "", &["-u"]);
    compare_diff("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n", &["-u"]);
    compare_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n3\n4\n5\n6\n7\n9\nten\n", &[]);
    compare_diff("a  b\nc\n", "a b\nC\n", &["-b"]);
    compare_diff("a\n\nb\n", "a\nb\n", &["-B"]);
}

#[test]
fn date_reads_absolute_dates_as_gnu_date() {
    assert!(is_gnu("date"), "GNU date is not installed: the test command's set-up installs coreutils");
    for text in
        ["@1773045600", "2026-03-08 23:59:30", "2026-03-08T01:02:03Z", "Mon Mar  9 08:40:00 UTC 2026", "Mar 9 2025 12:00", "2026-03-09 -1 day", "nonsense"]
    {
        let real = Command::new("date").args(["-u", "-d", text, "+%F %T %s"]).env("TZ", "UTC").env("LC_ALL", "C").output().unwrap();
        let ours = session().run(&format!("date -d {} '+%F %T %s'", quote(text)));
        assert_eq!(ours.stdout(), String::from_utf8_lossy(&real.stdout), "date -d {text:?}");
        assert_eq!(ours.stderr(), String::from_utf8_lossy(&real.stderr), "date -d {text:?}");
    }
}

/// `wc` over files, as GNU wc prints them: one line each, a total for
/// several operands (a missing one too), widths from the files' total size.
#[test]
fn wc_on_files_matches_gnu_wc() {
    assert!(is_gnu("wc"), "GNU wc is not installed: the test command's set-up has coreutils");
    let files = [("a.txt", "GPU 0: 34 C\nGPU 1: 85 C\n"), ("b.txt", "mlx5_0 Up\nmlx5_1 Down\nmlx5_2 Up\n"), ("c.txt", "no newline at the end")];
    let dir = std::env::temp_dir().join(format!("clusterlab-wc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut shell = session();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
        shell.run(&format!("printf '%s' {} > {name}", quote(text)));
    }
    for args in [
        &["-l", "a.txt"][..],
        &["a.txt"],
        &["a.txt", "b.txt", "c.txt"],
        &["-l", "a.txt", "b.txt"],
        &["-w", "-c", "b.txt", "missing.txt"],
        &["-c", "missing.txt", "c.txt"],
    ] {
        let real = Command::new("wc").args(args).current_dir(&dir).env("LC_ALL", "C").output().unwrap();
        let ours = shell.run(&format!("wc {}", args.join(" ")));
        assert_eq!(ours.stdout(), String::from_utf8_lossy(&real.stdout), "wc {args:?}");
        assert_eq!(
            ours.stderr().replace("No such file or directory", "X"),
            String::from_utf8_lossy(&real.stderr).replace("No such file or directory", "X"),
            "wc {args:?}"
        );
        assert_eq!(ours.status, real.status.code().unwrap_or(-1), "status of wc {args:?}");
    }
}
