//! Fuzzing on the stable toolchain: property tests whose generators reach
//! the extremes (u64 and i64 bounds, huge repeat counts, deep nesting, long
//! lines, bytes that are not UTF-8), starting from a seed corpus of lines
//! the other tests use. Every case runs as the browser runs the engine (1
//! MiB of stack) within the memory bound; a panic, an overflow, a hang or a
//! blown bound fails the case, and proptest keeps it in
//! `proptest-regressions/fuzz.txt` so it is tried first from then on.
//!
//! The test command runs a bounded number of cases per target; for a longer
//! run: `PROPTEST_CASES=20000 cargo test --release -p clusterlab-engine --test fuzz`.

mod guard;

use clusterlab_engine::commands;
use clusterlab_engine::lab::authoring::{check, compile};
use clusterlab_engine::{load, Session};
use guard::{contained, Counting};
use proptest::prelude::*;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LAB: &str = "[lab]\nid = \"fuzz\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n";

/// Runs lines in one fresh session, as a trainee would type them.
fn run_lines(lines: Vec<String>) {
    let what = lines.first().map(|line| line.chars().take(60).collect::<String>()).unwrap_or_default();
    contained(&what, move || {
        let lab = load(LAB).expect("a valid lab");
        let mut session = Session::new(lab.instantiate(1), "gpu-001");
        for line in &lines {
            let _ = session.run(line);
        }
    });
}

/// Numbers where parsers and arithmetic break.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "7",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "0x7fffffff",
    "0.5",
    "",
];

/// Lines the other tests run: the mutations start from these.
const SEEDS: &[&str] = &[
    "nvidia-smi -L",
    "nvidia-smi -q -i 0 -d ECC",
    "nvidia-smi --query-gpu=index,name,temperature.gpu --format=csv",
    "nvidia-smi topo -m",
    "ibstat mlx5_0 | grep -c Rate",
    "ibv_devinfo -v -d mlx5_1",
    "perfquery -x 100 1",
    "ib_write_bw -d mlx5_0 --report_gbits -s 65536 -n 100 &",
    "srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 1G -f 2 -g 1",
    "mpirun -np 8 all_reduce_perf -b 1M -e 1M -g 1",
    "pdsh -w gpu-[001-002] 'nvidia-smi -L | wc -l'",
    "clush -w gpu-00[1-2] -b hostname",
    "watch -n 1 nvidia-smi",
    "scontrol show hostnames gpu-[001-004]",
    "scontrol update nodename=gpu-002 state=drain reason=x",
    "sinfo -R; squeue; sacct",
    "sbatch -N2 --wrap='hostname'",
    "dcgmi diag -r 2",
    "dmesg -T | grep -i xid",
    "journalctl -u nvidia-fabricmanager -n 20",
    "echo a b c | awk '{print $2; x[$1]++} END{for (k in x) print k}'",
    "echo abc | grep -E '(a|b)+c'",
    "echo a | uniq -c -f 2 -s 3 -w 4",
    "echo hello | tr a-z A-Z | cut -c 2-4 | sort -rn | head -n 3",
    "ssh gpu-002 'echo $HOSTNAME'",
    "sudo env A=1 printenv A",
    "kubectl get nodes -o wide",
    "mlxlink -d mlx5_0 -m",
    "sleep 3; date",
    "!!",
    "ibstat | sed -n '/Port 1/,/Rate/{s/\\(Rate\\): \\([0-9]*\\)/\\2 \\1/p}'",
    "seq 20 | sed -E ':a;N;$!ba;s/\\n/,/g;y/123/abc/;3q'",
    "diff -u <(ssh gpu-001 nvidia-smi -L) <(ssh gpu-002 nvidia-smi -L)",
    "find /sys/class/infiniband -maxdepth 4 -name 'rate' -o -type d -empty -exec cat {} +",
    "stat -c '%n %s %a %U %y' /etc/hosts /tmp; file /dev/null ~",
    "ls -ltrh /var/log; column -t -s: /etc/nccl.conf",
    "date -d '2026-03-09 08:40 -3 days + 90 min' +%s; date -d @-1",
    "nvidia-smi -q | less -F; man sed | more",
    "curl -sS -m 2 -o /tmp/m -w '%{http_code} %{size_download}\\n' http://user@[::1]:9400/metrics?x#y gpu-002:9400 | grep -c DCGM",
    "sed -i 's/--tensor-model-parallel-size 8/--tensor-model-parallel-size 0/' ~/llama3-8b.sbatch; sbatch ~/llama3-8b.sbatch; sleep 99",
];

/// A seed line, mutated: a piece repeated, an extreme number or an odd
/// token put in, pieces of another seed spliced in.
fn mutated_line() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "|", "||", "&&", ";", "&", "'", "\"", "$", "${", "}", "$?", "\\", " ", "(", ")", "[", "]", "{", "}", "-", "--", "=", ",", "*", "é", "\u{fffd}", "\t",
        "#", "!", "!!", "-n", "-N", "-w", "-i", "-c", "-f",
    ]);
    let extreme = prop::sample::select(EXTREMES.to_vec());
    (
        prop::sample::select(SEEDS.to_vec()),
        prop::sample::select(SEEDS.to_vec()),
        0usize..200,
        prop::collection::vec((0usize..3, token, extreme, 1usize..4), 0..6),
        prop::sample::select(vec![1usize, 2, 10, 1_000, 20_000]),
    )
        .prop_map(|(seed, other, cut, edits, repeat)| {
            let mut line = seed.to_string();
            for (kind, token, extreme, count) in edits {
                let at = (cut * (kind + 1)) % (line.len() + 1);
                let at = (0..=at).rev().find(|at| line.is_char_boundary(*at)).unwrap_or(0);
                let piece = match kind {
                    0 => token.repeat(count),
                    1 => format!(" {extreme}"),
                    _ => other.chars().skip(cut % 7).take(12).collect(),
                };
                line.insert_str(at, &piece);
            }
            if repeat > 1 {
                // A long line: the mutated piece many times over.
                let piece: String = line.chars().take(8).collect();
                line = piece.repeat(repeat) + &line;
            }
            line
        })
}

/// Random bytes, read as a terminal reads them (bad UTF-8 becomes U+FFFD).
fn bytes_line() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 0..80).prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// `open`, `middle`, `close`: nested up to far past every bound.
fn nested(open: &'static str, middle: &'static str, close: &'static str) -> impl Strategy<Value = String> {
    prop::sample::select(vec![0usize, 1, 10, 49, 50, 51, 200, 5_000]).prop_map(move |depth| format!("{}{middle}{}", open.repeat(depth), close.repeat(depth)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn shell_lines(lines in prop::collection::vec(prop_oneof![3 => mutated_line(), 1 => bytes_line()], 1..4)) {
        run_lines(lines);
    }

    #[test]
    fn every_command_with_extreme_flag_values(at in 0usize..1000, values in prop::collection::vec(prop::sample::select(EXTREMES.to_vec()), 1..4)) {
        // Every command, each declared flag given an extreme value.
        let all = commands::all();
        let command = all[at % all.len()].signature();
        let mut lines = Vec::new();
        for (index, flag) in command.flags.iter().enumerate() {
            let value = values[index % values.len()];
            let name = flag.long.map(|long| format!("--{long}")).or_else(|| flag.short.map(|short| format!("-{short}"))).unwrap_or_default();
            lines.push(match flag.value {
                Some(_) => format!("{} {name} {value}", command.name),
                None => format!("{} {name} {value}", command.name),
            });
        }
        lines.push(format!("{} {}", command.name, values.join(" ")));
        run_lines(lines);
    }

    #[test]
    fn awk_programs(body in prop_oneof![
        nested("(", "1", ")").prop_map(|e| format!("BEGIN{{print {e}}}")),
        nested("{", "", "}"),
        nested("-", "1", "").prop_map(|e| format!("BEGIN{{print {e}}}")),
        nested("$", "1", "").prop_map(|e| format!("{{print {e}}}")),
        (prop::sample::select(EXTREMES.to_vec()), prop::sample::select(EXTREMES.to_vec()))
            .prop_map(|(a, b)| format!("BEGIN{{for(i=0;i<{a};i++) x[i]=i; printf \"%{b}d\\n\", length(x); print substr(\"abc\", {a}, {b}), {a}^{b}}}")),
        "[ -~]{0,60}",
    ]) {
        run_lines(vec![format!("echo 'a b c' | awk '{}'", body.replace('\'', ""))]);
    }

    #[test]
    fn regular_expressions(pattern in prop_oneof![
        nested("(", "a", ")"),
        nested("\\(", "a", "\\)"),
        prop::sample::select(EXTREMES.to_vec()).prop_map(|n| format!("a{{{n}}}b{{1,{n}}}")),
        "[a-c()\\[\\]{}|*+?.^$\\\\0-9,:-]{0,40}",
    ]) {
        let pattern = pattern.replace('\'', "");
        run_lines(vec![format!("echo abc | grep -E '{pattern}'"), format!("echo abc | grep '{pattern}'"), format!("echo abc | awk '/{pattern}/'")]);
    }

    #[test]
    fn go_templates(template in prop_oneof![
        nested("{{if 1}}", "x", "{{end}}"),
        nested("{{range .items}}", "{{.metadata.name}}", "{{end}}"),
        nested("(", "1", ")").prop_map(|e| format!("{{{{{e}}}}}")),
        prop::sample::select(EXTREMES.to_vec()).prop_map(|n| format!("{{{{range {n}}}}}{{{{printf \"%{n}d\" .}}}}{{{{end}}}}")),
        "[{}.$a-z \"|()-]{0,60}",
    ]) {
        let template = template.replace('\'', "");
        run_lines(vec![format!("kubectl get nodes -o go-template='{template}'")]);
    }

    #[test]
    fn promql_queries(query in prop_oneof![
        nested("sum(", "up", ")"),
        nested("(", "1", ")"),
        nested("-", "1", ""),
        nested("max_over_time(", "up", "[1h:1m])"),
        prop::sample::select(EXTREMES.to_vec()).prop_map(|n| format!("up offset {n}s + topk({n}, up) ^ {n}")),
        prop::sample::select(EXTREMES.to_vec()).prop_map(|n| format!("rate(node_load1[{n}m]) @ {n}")),
        "[a-z_{}()\\[\\]=~!\"0-9.,+*/^<>@: -]{0,60}",
    ], range in (prop::sample::select(EXTREMES.to_vec()), prop::sample::select(EXTREMES.to_vec()))) {
        let query = query.replace('\'', "");
        run_lines(vec![
            format!("promtool query instant http://mgmt-01:9090 '{query}'"),
            format!("curl -s 'mgmt-01:9090/api/v1/query_range?start={}&end={}&step={}' --data-urlencode 'query={query}'", range.0, range.1, range.0),
        ]);
    }

    #[test]
    fn rule_files(body in prop_oneof![
        nested("  ", "- name: g", ""),
        nested("- ", "a: b", ""),
        nested("", "x", ":"),
        prop::sample::select(EXTREMES.to_vec()).prop_map(|n| format!("groups:\n- name: g\n  interval: {n}s\n  rules:\n  - alert: A\n    expr: up > {n}\n    for: {n}m\n")),
        "[a-z:{}\\[\\]'\"|>#\n -]{0,80}",
    ]) {
        let body = body.replace('\'', "");
        run_lines(vec![
            format!("printf '%s' '{body}' > /lustre/monitoring/rules/f.yml"),
            "promtool check rules /lustre/monitoring/rules/f.yml".to_string(),
            "curl -s mgmt-01:9090/api/v1/rules".to_string(),
            format!("cat <<EOF\n{body}\nEOF"),
        ]);
    }

    #[test]
    fn hostlists(prefix in "[a-z-]{0,4}", ranges in prop::collection::vec((prop::sample::select(EXTREMES.to_vec()), prop::sample::select(EXTREMES.to_vec())), 1..4)) {
        let inner: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
        let list = format!("{prefix}[{}],gpu-001", inner.join(","));
        run_lines(vec![
            format!("scontrol show hostnames {list}"),
            format!("pdsh -w {list} hostname"),
            format!("srun -w {list} hostname"),
        ]);
    }

    #[test]
    fn serving_jobs(field in prop::sample::select(vec!["prompt_tokens", "output_tokens", "max_num_seqs", "seq_len", "tensor"]),
                    value in prop::sample::select(EXTREMES.to_vec()),
                    rate in prop::sample::select(vec!["0", "0.001", "1", "50", "9999.5", "10000"]),
                    params in prop::sample::select(vec!["1M", "8B", "70B", "405B", "2000B"])) {
        let source = format!(
            "{LAB}[[jobs]]\nname = \"chat\"\nkind = \"serving\"\nparams = \"{params}\"\nnodes = [\"gpu-001\"]\nrequest_rate = {rate}\n{field} = {}\n",
            if value.is_empty() { "\"\"" } else { value }
        );
        contained("a serving job", move || {
            if let Ok(lab) = load(&source) {
                let mut session = Session::new(lab.instantiate(1), "gpu-002");
                for line in ["tail -3 ~/slurm-*.out", "curl -s gpu-001:8000/metrics | tail -2", "ssh gpu-001 nvidia-smi", "sleep 7200", "tail -1 ~/slurm-*.out", "curl -s gpu-001:8000/metrics | wc -l", "promtool query instant http://mgmt-01:9090 'rate(vllm:inter_token_latency_seconds_sum[5m])'"] {
                    let _ = session.run(line);
                }
            }
        });
    }

    #[test]
    fn pod_manifests(gpus in prop::sample::select(EXTREMES.to_vec()),
                     seconds in prop::sample::select(EXTREMES.to_vec()),
                     policy in prop::sample::select(vec!["Always", "OnFailure", "Never", "", "always"]),
                     command in prop::sample::select(vec!["sleep", "nvidia-smi -L", "python3 -c 'import torch; print(torch.cuda.device_count())'", "torchrun x.py", "echo", "sh -c", ""]),
                     name in "[a-zA-Z0-9._-]{0,70}",
                     noise in "[a-z:\\[\\]{}#\\- ]{0,30}") {
        let words: Vec<String> = command.split(' ').chain([seconds]).map(|w| format!("\"{}\"", w.replace('\'', ""))).collect();
        let manifest = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  restartPolicy: {policy}\n  containers:\n  - name: c\n    image: busybox\n    command: [{}]\n    resources:\n      limits:\n        nvidia.com/gpu: {gpus}\n  {noise}\n",
            words.join(", ")
        );
        let file = manifest.replace('\'', "").replace('\n', "\\n");
        run_lines(vec![
            format!("printf '{file}' > p.yaml"),
            "kubectl apply -f p.yaml".to_string(),
            "kubectl get pods -A -o wide".to_string(),
            format!("kubectl describe pod {name}"),
            format!("sleep {seconds}"),
            format!("kubectl logs {name} -p"),
            "kubectl drain gpu-001 --ignore-daemonsets --force".to_string(),
            "kubectl get events -A".to_string(),
            format!("kubectl get pod {name} -o yaml"),
            "kubectl delete -f p.yaml".to_string(),
        ]);
    }

    #[test]
    fn lab_pods(gpus in prop::sample::select(EXTREMES.to_vec()),
                node in prop::sample::select(vec!["gpu-001", "gpu-009", "", "{x}"]),
                start in prop::sample::select(vec!["running", "apply", "later"]),
                fault in prop::sample::select(vec!["gpu-fallen-off-bus", "gpu-xid", "node-down", "gpu-thermal-slowdown"])) {
        let source = format!(
            "{LAB}[[pods]]\nname = \"p\"\nimage = \"i\"\ncommand = [\"python\", \"t.py\"]\ngpus = {gpus}\nnode = \"{node}\"\nstart = \"{start}\"\n[[faults]]\nkind = \"{fault}\"\nnode = \"gpu-001\"\ngpu = 2\nxid = 79\n"
        );
        contained("a lab's pods", move || {
            if let Ok(lab) = load(&source) {
                let mut session = Session::new(lab.instantiate(1), "gpu-002");
                for line in ["kubectl get pods -o wide", "kubectl describe pod p", "ssh gpu-001 sudo reboot", "sleep 3600", "kubectl delete pod p", "kubectl apply -f ~/p.yaml", "sleep 600", "kubectl logs p", "ssh gpu-001 nvidia-smi"] {
                    let _ = session.run(line);
                }
            }
        });
    }

    #[test]
    fn lab_files(field in prop::sample::select(vec!["gpu", "count", "links", "xid", "mtu", "rate", "width", "gen"]),
                 value in prop::sample::select(EXTREMES.to_vec()),
                 kind in prop::sample::select(clusterlab_engine::lab::FAULT_KINDS.iter().map(|(kind, _, _)| *kind).collect::<Vec<_>>()),
                 range in (prop::sample::select(EXTREMES.to_vec()), prop::sample::select(EXTREMES.to_vec()))) {
        let source = format!(
            "{LAB}[vars]\nv = {{ range = [{}, {}] }}\n[[faults]]\nkind = \"{kind}\"\nnode = \"gpu-001\"\nhca = \"mlx5_0\"\n{field} = {}\n",
            range.0, range.1, if value.is_empty() { "\"\"" } else { value }
        );
        contained("a lab file", move || match compile(&source) {
            Ok(compiled) => {
                let _ = check::deep(&compiled, &source);
                let _ = compiled.lab.instantiate(u64::MAX);
            }
            Err(problems) => assert!(!problems.is_empty()),
        });
    }
}
