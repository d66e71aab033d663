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
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned(), output.status.code().unwrap_or(-1))
}

#[test]
fn piped_lines_run_in_turn_without_prompts() {
    let script = "nvidia-smi -L | wc -l\nfor i in 1 2\ndo echo x$i\ndone\nanswer driver 570.158.01\nanswer power-cap 400 W\nscore\nssh gpu-002\nhostname\nexit\nhostname\n";
    let (stdout, stderr, status) = play_piped(&["labs/first-look.toml", "--seed", "1"], script);
    assert_eq!(status, 0, "{stderr}");
    let expected = "8\nx1\nx2\n\
        Correct \u{2014} 1 / 1 point \u{b7} answered \u{201c}570.158.01\u{201d}\n  The header of `nvidia-smi` shows `Driver Version: 570.158.01` and the CUDA version that driver supports (12.8).\n\
        Score: 1 of 6 points; 1 of 5 questions answered.\n\
        Not quite \u{2014} 0 / 1 point \u{b7} answered \u{201c}400 W\u{201d} \u{b7} 1 left\n  `hint power-cap` shows a hint.\n\
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
    let (stdout, _, _) = play_piped(&["labs/lost-gpu.toml", "--seed", "3"], "questions\n");
    assert!(stdout.starts_with("1. which-gpu (entity, 2 points): not answered\n   Which GPU of the node failed?\n   answer which-gpu NAME  (a gpu of this cluster, e.g. gpu-001 GPU 0)\n\n"), "{stdout}");
    assert!(stdout.contains("3. xid (choice, 1 point): not answered\n   Which Xid did the driver log for that GPU?\n     1) "), "{stdout}");
    // The variant's own answers: the GPU as an operator writes it, the Xid by its value.
    let lab = clusterlab_engine::load(&std::fs::read_to_string(format!("{}/labs/lost-gpu.toml", workspace())).unwrap()).unwrap();
    let values = lab.variant(3).values;
    let script = format!("answer which-gpu GPU{}\nanswer xid Xid {}\nquestions\n", values["bad_gpu"], values["incident.xid"]);
    let (stdout, _, _) = play_piped(&["labs/lost-gpu.toml", "--seed", "3"], &script);
    assert!(
        stdout.starts_with(&format!(
            "Correct \u{2014} 2 / 2 points \u{b7} answered \u{201c}GPU{}\u{201d} (read as gpu-001 GPU {})",
            values["bad_gpu"], values["bad_gpu"]
        )),
        "{stdout}"
    );
    assert!(stdout.contains("3. xid (choice, 1 point): answered, correct (1/1), 1 attempt\n"), "{stdout}");
}

#[test]
fn an_exam_holds_its_verdicts_until_it_is_submitted() {
    let script = "answer driver 570.158.01\nhint driver\nanswer power-cap 400 W\nanswer power-cap 700 W\nscore\nsubmit\nanswer driver 550.90.07\n";
    let (stdout, stderr, _) = play_piped(&["labs/first-look.toml", "--exam"], script);
    assert!(stdout.starts_with("Recorded: driver (the exam shows verdicts once it is submitted).\nRecorded: power-cap"), "{stdout}");
    assert!(stdout.contains("Exam: 2 of 5 questions answered;"), "{stdout}");
    assert!(stdout.contains("The exam is submitted.\n\n1. driver: Correct \u{2014} 1 / 1 point"), "{stdout}");
    assert!(
        stdout.contains("3. power-cap: Correct \u{2014} 1 / 1 point \u{b7} answered \u{201c}700 W\u{201d}\n"),
        "the last answer counts, with no charge for changing it: {stdout}"
    );
    assert!(stdout.contains("Score: 2 of 6 points"), "{stdout}");
    assert!(stderr.contains("hint: an exam gives no hints\n"), "{stderr}");
    assert!(stderr.contains("The exam is submitted: no answer changes now."), "{stderr}");
}

#[test]
fn play_words_hide_no_emulated_command() {
    for word in ["questions", "answer", "hint", "score", "submit"] {
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
    p.exp_string(") 570.158.01").unwrap();
    p.exp_string("Score: 0 of 6 points; 0 of 5 questions answered.").unwrap();
    p.exp_string("user@gpu-001:~$ ").unwrap();

    p.send_line("answer driver 570.158.01").unwrap();
    p.exp_string("Correct").unwrap();
    p.exp_string("1 / 1 point").unwrap();
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
