//! `clusterlab play`, under a pseudo-terminal as an author types at it, and
//! with its input piped as a script feeds it.

use std::io::Write;
use std::process::{Command, Stdio};

fn workspace() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
}

/// `clusterlab play ARGS` with `input` piped in: (stdout, stderr, status).
fn play_piped(args: &[&str], input: &str) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clusterlab"))
        .arg("play")
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("a pipe").write_all(input.as_bytes()).expect("play reads its input");
    let output = child.wait_with_output().expect("play ends");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

#[test]
fn piped_lines_run_in_turn_without_prompts() {
    let script = "nvidia-smi -L | wc -l\nfor i in 1 2\ndo echo x$i\ndone\nanswer driver 570.158.01\nanswer power-cap 1\nscore\nssh gpu-002\nhostname\nexit\nhostname\n";
    let (stdout, stderr, status) = play_piped(&["labs/first-look.toml", "--seed", "1"], script);
    assert_eq!(status, 0, "{stderr}");
    let expected = "8\nx1\nx2\n\
        Correct \u{2014} 1/1 point \u{b7} answered \u{201c}570.158.01\u{201d}\n  The header of `nvidia-smi` shows `Driver Version: 570.158.01` and the CUDA version that driver supports (12.8).\n\
        Score: 1 of 6 points; 1 of 5 questions answered.\n\
        Not quite \u{2014} 0/1 point \u{b7} answered \u{201c}400 W\u{201d}\n  `hint power-cap` shows a hint.\n\
        Score: 1 of 6 points; 2 of 5 questions answered.\n\
        Score: 1 of 6 points; 2 of 5 questions answered.\n\
        gpu-002\nlogout\ngpu-001\n";
    assert_eq!(stdout, expected);
    assert_eq!(stderr, "Connection to gpu-002 closed.\n");
}

#[test]
fn piped_input_ends_like_bash_and_exits_with_the_last_status() {
    // `exit` at the login shell ends the session; what follows is not run.
    let (stdout, _, status) = play_piped(&["labs/first-look.toml"], "false\nexit\necho never\n");
    assert_eq!((stdout.as_str(), status), ("logout\n", 0));
    let (_, _, status) = play_piped(&["labs/first-look.toml"], "false\n");
    assert_eq!(status, 1);
    // An incomplete command at the end of the input gets bash's error.
    let (_, stderr, status) = play_piped(&["labs/first-look.toml"], "if true\n");
    assert_eq!((stderr.as_str(), status), ("-bash: syntax error: unexpected end of file\n", 2));
    // Play's words are not taken inside a `> ` continuation.
    let (stdout, _, _) = play_piped(&["labs/first-look.toml"], "for w in a\ndo echo questions\ndone\n");
    assert_eq!(stdout, "questions\n");
}

#[test]
fn piped_mistakes_are_told_not_fatal() {
    let input = format!("answer\nanswer nope 1\nhint\nhint power-cap\n{}\necho ok\n", "a".repeat(clusterlab_engine::limits::MAX_LINE_BYTES + 10));
    let (stdout, stderr, status) = play_piped(&["labs/first-look.toml"], &input);
    assert_eq!(status, 0);
    assert_eq!(stdout, "Hint 1 of 1:\n  Look at the right half of `Pwr:Usage/Cap`.\nok\n");
    let ids = "driver, bus-id-gpu5, power-cap, memory-total, listed-gpus";
    assert_eq!(
        stderr,
        format!(
            "answer: usage: answer ID VALUE; the ids are {ids}\nanswer: no question `nope`; the ids are {ids}\nhint: usage: hint ID; the ids are {ids}\n\
             -bash: line too long: {} bytes (this simulation reads at most {})\n",
            clusterlab_engine::limits::MAX_LINE_BYTES + 10,
            clusterlab_engine::limits::MAX_LINE_BYTES
        )
    );
}

#[test]
fn questions_list_this_variants_questions() {
    let (stdout, _, _) = play_piped(&["labs/lost-gpu.toml", "--seed", "3"], "questions\nanswer xid 79\nquestions\n");
    let first = stdout.split("Score:").next().unwrap();
    assert!(first.starts_with("1. count (number, 1 point): not answered\n   How many GPUs does `nvidia-smi -L` list?\n   answer count NUMBER\n\n"), "{first}");
    assert!(first.contains("3. xid (choice, 1 point): not answered\n   Which Xid did the kernel log for it?\n     1) 13\n     2) 48\n     3) 79\n     4) 119\n"), "{first}");
    assert!(stdout.contains("3. xid (choice, 1 point): answered, correct (1/1), 1 attempt\n"), "{stdout}");
    // The variant's own answer: the missing GPU's index grades as correct.
    let lab = clusterlab_engine::load(&std::fs::read_to_string(format!("{}/labs/lost-gpu.toml", workspace())).unwrap()).unwrap();
    let gpu = lab.variant(3).values["bad_gpu"].clone();
    let (stdout, _, _) = play_piped(&["labs/lost-gpu.toml", "--seed", "3"], &format!("answer which-gpu {gpu}\n"));
    assert!(stdout.starts_with("Correct \u{2014} 2/2 points"), "{stdout}");
}

#[test]
fn play_words_hide_no_emulated_command() {
    for word in ["questions", "answer", "hint", "score"] {
        assert!(clusterlab_engine::commands::find(word).is_none(), "`{word}` is an emulated command too");
        assert!(!clusterlab_engine::shell::BUILTINS.contains(&word), "`{word}` is a shell builtin too");
    }
}

#[test]
fn play_refuses_what_it_cannot_open() {
    let (_, stderr, status) = play_piped(&["labs/first-look.toml", "--host", "nope"], "");
    assert_eq!(status, 2);
    assert!(stderr.contains("nope is not a node of this lab"), "{stderr}");
    let (_, stderr, status) = play_piped(&["../no-such-lab.toml"], "");
    assert_eq!(status, 2);
    assert!(stderr.contains("cannot read"), "{stderr}");
}

/// The whole rehearsal as an author types it: a command, the questions, an
/// answer graded, a `> ` continuation dropped with Ctrl-C, then Ctrl-D.
#[test]
#[cfg(unix)]
fn play_under_a_pseudo_terminal() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clusterlab"));
    command.args(["play", "labs/first-look.toml", "--seed", "1"]).current_dir(workspace()).env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).expect("play starts under a pty");
    // The banner: the title and the simulation notice, then the app's prompt.
    p.exp_string("First look at an HGX H100 node").unwrap();
    p.exp_string("nothing you type runs on a real cluster").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    p.send_line("nvidia-smi -L").unwrap();
    p.exp_string("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-").unwrap();
    p.exp_string("GPU 7: NVIDIA H100 80GB HBM3 (UUID: GPU-").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    p.send_line("questions").unwrap();
    p.exp_string("1. driver (choice, 1 point): not answered").unwrap();
    p.exp_string("3) 570.158.01").unwrap();
    p.exp_string("Score: 0 of 6 points; 0 of 5 questions answered.").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    p.send_line("answer driver 3").unwrap();
    p.exp_string("Correct").unwrap();
    p.exp_string("1/1 point").unwrap();
    p.exp_string("Score: 1 of 6 points; 1 of 5 questions answered.").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    // bash's continuation prompt, and Ctrl-C dropping the incomplete command.
    p.send_line("for i in 1 2").unwrap();
    p.exp_string("> ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();
    p.send_line("echo after-$((6 * 7))").unwrap();
    p.exp_string("after-42").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    // Ctrl-D at the login shell's prompt ends the session.
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process_mut().wait().expect("play has ended"));
    assert!(status.starts_with("Exited(") && status.ends_with(", 0)"), "{status}");
}
