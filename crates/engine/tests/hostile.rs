//! Hostile input: every reproducer from the hostile-input report ends with a
//! clear error (or its right answer), on a thread with the stack a browser
//! gives WebAssembly (1 MiB), within bounded memory (under 256 MiB, counted
//! by this binary's allocator). A hang fails the test after a generous
//! guard; how fast each ends is measured by `benches/hostile.rs`.

mod guard;

use clusterlab_engine::lab::authoring::{check, compile};
use clusterlab_engine::{load, Session};
use guard::{contained, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LAB: &str = "[lab]\nid = \"hostile\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n";

/// Runs a line in a fresh two-node lab: (stdout, stderr, status).
fn run(line: String) -> (String, String, i32) {
    let what = line.chars().take(60).collect::<String>();
    contained(&what, move || {
        let lab = load(LAB).expect("a valid lab");
        let mut session = Session::new(lab.instantiate(1), "gpu-001");
        let transcript = session.run(&line);
        // A line left incomplete ends as at the end of input (Ctrl-D at `> `).
        let transcript = session.end_of_input().unwrap_or(transcript);
        (transcript.stdout(), transcript.stderr(), transcript.status)
    })
}

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn hostlists_that_would_wrap_are_refused_unbuilt() {
    let huge = "a,b[0-18446744073709551615]";
    let (_, stderr, status) = run(format!("scontrol show hostnames {huge}"));
    assert_eq!((stderr.as_str(), status), ("scontrol: error: Invalid hostlist: a,b[0-18446744073709551615]\n", 1));
    assert!(run(format!("pdsh -w {huge} hostname")).1.contains("invalid hostlist"));
    assert!(run(format!("clush -w {huge} hostname")).1.contains("invalid nodeset"));
    assert!(run(format!("srun -w {huge} hostname")).1.contains("Invalid node name specified"));
    assert!(run(format!("sbatch -w {huge} --wrap=hostname")).1.contains("Invalid node name specified"));
    // Many unknown hosts: each answered once, in linear time.
    let (_, stderr, _) = run("pdsh -w ghost[1-32000] hostname".into());
    assert_eq!(stderr.matches("Could not resolve hostname").count(), 32_000);
}

#[test]
fn task_counts_past_the_nodes_are_refused() {
    for line in ["srun -n 4294967295 hostname", "srun -N2 --ntasks-per-node=4294967295 hostname"] {
        let (_, stderr, status) = run(line.into());
        assert_eq!(stderr, "srun: error: Unable to allocate resources: Requested node configuration is not available\n", "{line}");
        assert_eq!(status, 1);
    }
    assert!(run("mpirun -np 4294967295 hostname".into()).1.contains("at most 65536 processes"));
    assert!(run("mpirun -H gpu-001:4294967295,gpu-002:4294967295 hostname".into()).1.contains("at most 65536 processes"));
    // nccl-tests asking for more GPUs than a node has fails as CUDA does, without building them all.
    let (stdout, _, _) = run("all_reduce_perf -g 1048576 -t 1048576 -b 8 -e 8".into());
    assert!(stdout.contains("invalid device ordinal"), "{stdout}");
}

#[test]
fn deep_nesting_ends_with_an_error_not_a_stack_overflow() {
    let awk = format!("awk 'BEGIN{{x={}; print x}}'", nested("(", "1", ")", 2_500));
    let (_, stderr, status) = run(awk);
    assert_eq!((stderr.as_str(), status), ("awk: cmd. line:1: fatal: program nested too deeply (at most 50 levels)\n", 2));
    // Each ends as gawk would: a syntax error (status 1) or the nesting bound (2).
    for program in [
        format!("BEGIN{{print {}1}}", "-".repeat(50_000)),
        nested("{", "", "}", 50_000),
        format!("BEGIN{{print 2{}}}", "^2".repeat(50_000)),
        format!("BEGIN{{print {}x}}", "$".repeat(50_000)),
    ] {
        let (_, stderr, status) = run(format!("awk '{program}'"));
        assert!(matches!(status, 1 | 2) && stderr.starts_with("awk: cmd. line:1: "), "{status} {}", &stderr[..stderr.len().min(200)]);
    }
    let grep = format!("echo a | grep -E '{}'", nested("(", "a", ")", 11_000));
    assert_eq!(run(grep).1, "grep: Regular expression too big\n");
    let env = "env ".repeat(30_000) + "hostname";
    assert!(run(env).1.contains("at most 32 deep"));
    let pdsh = "pdsh -w gpu-001 ".repeat(2_000) + "hostname";
    assert!(run(pdsh).1.contains("at most 32 deep"));
    // Shallow nesting still works.
    assert_eq!(run(format!("awk 'BEGIN{{print {}}}'", nested("(", "7", ")", 20))).0, "7\n");
    assert_eq!(run(format!("echo a | grep -E '{}'", nested("(", "a", ")", 20))).0, "a\n");
}

#[test]
fn huge_counts_and_big_arrays_stay_quick() {
    assert_eq!(run("echo a | uniq -f 10000000000".into()).0, "a\n");
    assert_eq!(run("awk 'BEGIN{for(i=0;i<80000;i++) a[i]=i; print length(a)}'".into()).0, "80000\n");
    // A string grown in a loop: work counted in bytes ends it.
    let grow = run("awk 'BEGIN{while(1) s = s \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}'".into());
    assert_eq!((grow.1.as_str(), grow.2), ("awk: program stopped: too much work for a lab\n", 2));
    // Matching is linear in text times pattern: a long text and a wide
    // pattern end on the matching budget, with grep's status for trouble.
    let wide = run("awk 'BEGIN{s=\"a\"; for(i=0;i<18;i++) s=s s; print s}' | grep -cE '(a|aa){1,100}[bc]'".into());
    assert_eq!(wide, ("0\n".into(), "grep: stopped: matching took more work than a lab allows\n".into(), 2));
    // The budget is the tool's own: the next match, in the same line or
    // the next, starts with a full one.
    let after =
        run("awk 'BEGIN{s=\"a\"; for(i=0;i<18;i++) s=s s; print s}' | grep -cE '(a|aa){1,100}[bc]'; [[ abc =~ b ]] && echo next; echo abc | grep -c b".into());
    assert_eq!(after.0, "0\nnext\n1\n");
}

#[test]
fn repeating_commands_inside_each_other_share_the_line_bounds() {
    // Each refresh runs a line of 30,000 loop rounds: five of them pass the
    // line's 100,000 commands, counted across the nested lines.
    // (watch shows the line's errors on its screen.)
    let (screen, _, _) = run("watch -t 'for i in $(seq 30000); do :; done'".into());
    assert!(screen.contains("ran 100000 commands, the most a simulated line runs"), "{screen}");
    let (_, stderr, _) = run("for n in 1 2 3 4; do pdsh -w gpu-001 'for i in $(seq 30000); do :; done'; done".into());
    assert!(stderr.contains("ran 100000 commands"), "{stderr}");
    // Watches in watches: each stops refreshing once its output passes the
    // line's bound, so the work stays that of a few screens' worth.
    let (stdout, _, _) = run(format!("{}nvidia-smi", "watch ".repeat(12)));
    assert!(stdout.len() <= clusterlab_engine::limits::MAX_OUTPUT_BYTES + 4096, "{}", stdout.len());
    assert!(stdout.contains("NVIDIA-SMI"));
}

#[test]
fn long_lines_cost_linear_time_and_are_bounded() {
    let (_, stderr, _) = run("sleep 1 & ".repeat(100_000));
    assert!(stderr.contains("fork: Resource temporarily unavailable"), "{}", &stderr[stderr.len().saturating_sub(200)..]);
    let dollars = "${".repeat(150_000);
    // bash reads `${` as the start of an expansion that never closes.
    let (_, stderr, status) = run(format!("echo {dollars}"));
    assert_eq!((stderr.lines().next(), status), (Some("-bash: unexpected EOF while looking for matching `}'"), 2));
    // Deep compound commands and substitutions are refused at parse time.
    let (_, stderr, _) = run(format!("echo {}x{}", "$(echo ".repeat(5_000), ")".repeat(5_000)));
    assert!(stderr.contains("nested too deeply"), "{stderr}");
    let (_, stderr, _) = run(format!("{}true{}", "if true; then ".repeat(5_000), "; fi".repeat(5_000)));
    assert!(stderr.contains("nested too deeply"), "{stderr}");
    // Loops that never end stop at the line's command bound; braces that
    // would make too many words are refused before they are built.
    let (_, stderr, status) = run("while true; do :; done".into());
    assert_eq!((stderr.as_str(), status), ("-bash: this command line ran 100000 commands, the most a simulated line runs; it was stopped\n", 1));
    // Many braces that never close: paired in one pass, not one scan per brace.
    let unclosed = format!("echo {}", ",,{,nvid".repeat(100_000));
    assert_eq!(run(unclosed.clone()).0.len(), unclosed.len() - 4);
    let (_, stderr, _) = run("echo {1..99999999999}".into());
    assert!(stderr.contains("at most 65536 words"), "{stderr}");
    // Globs read directories: each read counts against the line's command bound.
    let (_, stderr, _) = run(format!("echo {}", "/*/* ".repeat(150_000)));
    assert!(stderr.contains("ran 100000 commands"), "{}", &stderr[..stderr.len().min(300)]);
    let (_, stderr, _) = run("s=x; for i in {1..40}; do s=$s$s; done".into());
    assert!(stderr.contains("expansion too long"), "{stderr}");
    let (_, stderr, status) = run(format!("echo {}", "x".repeat(2 << 20)));
    assert!(stderr.starts_with("-bash: line too long"), "{stderr}");
    assert_eq!(status, 2);
}

#[test]
fn file_tools_are_bounded() {
    // A sed loop that never reads input, and one whose pattern space doubles.
    let (_, stderr, status) = run("echo x | sed ':a;ba'".into());
    assert_eq!((stderr.as_str(), status), ("sed: script stopped: too many steps for a lab\n", 1));
    let (_, stderr, _) = run("echo x | sed ':a;s/x*/&&/;ta'".into());
    assert!(stderr.starts_with("sed: script stopped:"), "{stderr}");
    let (_, stderr, status) = run(format!("echo x | sed '{}p{}'", "{".repeat(100_000), "}".repeat(100_000)));
    assert_eq!((stderr.as_str(), status), ("", 0));
    // Two long, wholly different inputs: the edit search gives up, the diff still comes.
    let (stdout, _, status) = run("diff <(seq 1 2 40000) <(seq 2 2 40000) | wc -l".into());
    assert_eq!((stdout.as_str(), status), ("40002\n", 0));
    let (_, stderr, status) = run("date -d '9223372036854775807 years'".into());
    assert_eq!((stderr.as_str(), status), ("date: invalid date '9223372036854775807 years'\n", 1));
    let (_, stderr, status) = run(format!("find / {}-true", "\\( ".repeat(50_000)));
    assert_eq!((stderr.as_str(), status), ("find: expression nested too deeply (at most 50 levels)\n", 1));
    let (_, stderr, status) = run(format!("find / {}-true", "! ".repeat(50_000)));
    assert_eq!((stderr.as_str(), status), ("find: expression nested too deeply (at most 50 levels)\n", 1));
    assert_eq!(run("seq 200000 | less | tail -n 1".into()).0, "200000\n");
}

/// Compiles and deep-checks a lab: its problems, rendered.
fn lab_problems(source: String) -> Vec<String> {
    contained("a hostile lab", move || match compile(&source) {
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
        Ok(compiled) => check::deep(&compiled, &source).iter().map(ToString::to_string).collect(),
    })
}

#[test]
fn hostile_lab_files_get_located_errors() {
    let links = format!("{LAB}[[faults]]\nkind = \"nvlink-down\"\nnode = \"gpu-001\"\ngpu = 0\nlinks = 4294967295\n");
    assert_eq!(lab_problems(links), ["12:9: `links` counts NVLinks: at most 64, not 4294967295"]);
    let range = format!("{LAB}[vars]\nwide = {{ range = [-9223372036854775808, 9223372036854775807] }}\n");
    assert_eq!(lab_problems(range), ["9:8: variable `wide`: `range` holds 18446744073709551616 values; a variable takes at most 100000"]);
    let braces = LAB.replace("summary = \"s\"", &format!("summary = \"s\"\nbriefing = \"{}\"", "{ ".repeat(500_000)));
    assert!(lab_problems(braces).is_empty());
    let quotes = LAB.replace("summary = \"s\"", &format!("summary = \"s\"\nbriefing = \"{} deep\"", ">".repeat(30_000)));
    assert!(lab_problems(quotes).is_empty());
    // 2,000 levels of list need more than the 1 MiB a lab may have; 700 fit.
    let lists: String = (0..700).map(|i| format!("{}- item\\n", "  ".repeat(i))).collect();
    assert!(lab_problems(LAB.replace("summary = \"s\"", &format!("summary = \"s\"\nbriefing = \"{lists}\""))).is_empty());
    let big = format!("{LAB}# {}\n", "x".repeat(1 << 20));
    assert_eq!(lab_problems(big)[0], format!("1:1: the lab file is {} bytes; a lab file may have at most 1048576 (1 MiB)", LAB.len() + (1 << 20) + 3));
    let faults: String = (0..300).map(|_| "[[faults]]\nkind = \"node-drain\"\nnode = \"gpu-001\"\n").collect();
    let problems = lab_problems(format!("{LAB}{faults}"));
    assert!(problems.iter().any(|p| p.ends_with("a lab may declare at most 256 faults; this one has 300")), "{problems:?}");
}
