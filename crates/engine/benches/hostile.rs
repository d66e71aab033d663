//! How long each hostile-input reproducer takes to end (release build). The
//! tests (tests/hostile.rs) check what each prints and its memory; this
//! prints the times, which must stay well under 2 s. Not a test: figures.
//! Run: cargo bench -p clusterlab-engine --bench hostile

use std::time::Instant;

use clusterlab_engine::{load, Session};

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

fn main() {
    let lab = load(include_str!("../../../labs/slow-rail.toml")).expect("a valid lab");
    let lines = [
        "scontrol show hostnames a,b[0-18446744073709551615]".to_string(),
        "pdsh -w a,b[0-18446744073709551615] hostname".to_string(),
        "srun -n 4294967295 hostname".to_string(),
        "srun -N2 --ntasks-per-node=4294967295 hostname".to_string(),
        format!("awk 'BEGIN{{x={}; print x}}'", nested("(", "1", ")", 2_500)),
        format!("echo a | grep -E '{}'", nested("(", "a", ")", 11_000)),
        "env ".repeat(30_000) + "hostname",
        "pdsh -w gpu-001 ".repeat(2_000) + "hostname",
        "echo a | uniq -f 10000000000".to_string(),
        "awk 'BEGIN{for(i=0;i<80000;i++) a[i]=i}'".to_string(),
        "sleep 1 & ".repeat(100_000),
        format!("echo {}", "${".repeat(150_000)),
        "pdsh -w ghost[1-32000] hostname".to_string(),
        // The shell's own language.
        "while true; do :; done".to_string(),
        "f() { f; }; f".to_string(),
        format!("echo {}x{}", "$(echo ".repeat(5_000), ")".repeat(5_000)),
        "echo {1..99999999999}".to_string(),
        format!("echo {}", ",,{,nvid".repeat(100_000)),
        "s=x; for i in {1..40}; do s=$s$s; done".to_string(),
        format!("echo {}", "/*/* ".repeat(150_000)),
        "awk 'BEGIN{s=\"a\"; for(i=0;i<18;i++) s=s s; print s}' | grep -cE '(a|aa){1,100}[bc]'".to_string(),
    ];
    println!("| reproducer | time | status |\n|---|---|---|");
    for line in lines {
        let mut session = Session::new(lab.instantiate(1), lab.first_host());
        let start = Instant::now();
        let transcript = session.run(&line);
        let took = start.elapsed();
        let shown: String = line.chars().take(50).collect();
        println!("| `{}` | {:.1} ms | {} |", shown.replace('|', "\\|"), took.as_secs_f64() * 1000.0, transcript.status);
    }
}
