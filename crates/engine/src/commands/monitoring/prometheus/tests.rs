//! No capture of Prometheus is in `shared/reference`: the API's shapes and
//! messages are pinned against its source (v2.53.3: `web/api/v1/api.go`,
//! `util/jsonutil`, `promql/parser`), promtool's printing against
//! `cmd/promtool/query.go` and client_golang's `model` values.

use crate::load;
use crate::testing::{shell, Shell, TWO_NODE_LAB};

fn lab_shell(faults: &str) -> Shell {
    let lab = load(&format!("{TWO_NODE_LAB}{faults}")).expect("the lab is valid");
    shell(lab.instantiate(1))
}

fn run(shell: &mut Shell, line: &str) -> (String, String, i32) {
    let out = shell.run(line);
    (out.stdout(), out.stderr(), out.status)
}

#[test]
fn every_target_is_up_on_a_healthy_cluster() {
    let mut shell = lab_shell("");
    let (out, err, status) = run(&mut shell, "promtool query instant http://mgmt-01:9090 up");
    assert_eq!((err.as_str(), status), ("", 0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(lines[0].starts_with("up{instance=\"localhost:9090\", job=\"prometheus\"} => 1 @["), "{out}");
    assert!(lines.iter().any(|line| line.starts_with("up{instance=\"gpu-002:9400\", job=\"dcgm\"} => 1 @[")), "{out}");
    // The evaluation time: the lab's second and milliseconds, as Go prints them.
    let stamp = lines[0].split("@[").nth(1).and_then(|rest| rest.strip_suffix(']')).unwrap();
    assert!(stamp.parse::<f64>().is_ok(), "{stamp}");
}

#[test]
fn a_node_that_went_down_reads_down_since_it_did() {
    let mut shell = lab_shell("\n[[faults]]\nkind = \"node-down\"\nnode = \"gpu-002\"\nreason = \"Not responding\"\nat = \"-30m\"\n");
    let (out, _, _) = run(&mut shell, "promtool query instant http://mgmt-01:9090 'up == 0'");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("up{instance=\"gpu-002:9100\", job=\"node\"} => 0 @["), "{out}");
    // An hour ago it was up: the history is the cluster's as it was then.
    let (out, _, _) = run(&mut shell, "promtool query instant --time=$(( $(date +%s) - 3600 )) http://mgmt-01:9090 'sum(up)'");
    assert!(out.starts_with("{} => 5 @["), "{out}");
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/targets");
    assert!(out.contains("\"lastError\":\"Get \\\"http://gpu-002:9100/metrics\\\": context deadline exceeded\""), "{out}");
    assert!(out.contains("\"health\":\"down\""), "{out}");
}

#[test]
fn the_api_answers_in_prometheus_json() {
    let mut shell = lab_shell("");
    let (out, _, status) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/query --data-urlencode 'query=count(up)' --data-urlencode time=1773000000.5");
    assert_eq!(status, 0);
    assert_eq!(out, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1773000000.500,\"5\"]}]}}");
    let (out, _, _) = run(&mut shell, "curl -s -G mgmt-01:9090/api/v1/query --data-urlencode 'query=2 * 3' -d time=1773000000");
    assert_eq!(out, "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1773000000,\"6\"]}}");
    let (out, _, _) = run(&mut shell, "curl -si mgmt-01:9090/api/v1/query --data-urlencode 'query=rate(up)'");
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nDate: "), "{out}");
    assert!(
        out.ends_with("{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid parameter \\\"query\\\": 1:6: parse error: expected type range vector in call to function \\\"rate\\\", got instant vector\"}"),
        "{out}"
    );
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/query");
    assert!(out.contains("\"error\":\"invalid parameter \\\"query\\\": unknown position: parse error: no expression found in input\""), "{out}");
    let (out, _, _) = run(&mut shell, "curl -s 'mgmt-01:9090/api/v1/query_range?query=up&start=10&end=5&step=1'");
    assert!(out.contains("end timestamp must not be before start time"), "{out}");
    let (out, _, _) = run(&mut shell, "curl -s 'mgmt-01:9090/api/v1/query_range?query=up&start=0&end=100000&step=1'");
    assert!(out.contains("exceeded maximum resolution of 11,000 points per timeseries"), "{out}");
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/-/healthy; curl -s mgmt-01:9090/nothing");
    assert_eq!(out, "Prometheus Server is Healthy.\n404 page not found\n");
    let (out, _, _) = run(&mut shell, "curl -s -o /dev/null -w '%{http_code} ' -X POST mgmt-01:9090/-/reload; curl -s mgmt-01:9090/-/reload");
    assert_eq!(out, "200 Only POST or PUT requests allowed\n");
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/label/job/values");
    assert_eq!(out, "{\"status\":\"success\",\"data\":[\"dcgm\",\"node\",\"prometheus\"]}");
}

#[test]
fn a_range_follows_the_job_and_the_fault_over_time() {
    let mut shell = lab_shell(
        "\n[[jobs]]\nname = \"pretrain\"\nkind = \"training\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nparams = \"8B\"\ntensor = 4\npipeline = 1\nglobal_batch = 32\nseq_len = 2048\nstart = \"running\"\n\n[[faults]]\nkind = \"gpu-xid\"\nnode = \"gpu-002\"\ngpu = 4\nxid = 119\nat = \"-20m\"\n",
    );
    let (out, err, status) = run(
        &mut shell,
        "promtool query range --start=$(( $(date +%s) - 3600 )) --end=$(date +%s) --step=10m http://mgmt-01:9090 'max(DCGM_FI_DEV_XID_ERRORS)'",
    );
    assert_eq!((err.as_str(), status), ("", 0), "{out}");
    let values: Vec<&str> = out.lines().skip(1).map(|line| line.split(' ').next().unwrap()).collect();
    assert_eq!(values.first(), Some(&"0"), "{out}");
    assert_eq!(values.last(), Some(&"119"), "{out}");
}

#[test]
fn curl_expands_globs_and_go_refuses_what_it_cannot_reach() {
    let mut shell = lab_shell("");
    // `{job="node"}` is a set of one to curl: the query arrives without its braces.
    let (out, _, _) = run(&mut shell, "curl -s 'mgmt-01:9090/api/v1/query?query=up{job=\"node\"}'");
    assert!(out.contains("parse error"), "{out}");
    let (_, err, status) = run(&mut shell, "curl -s 'mgmt-01:9090/api/v1/query?query=rate(up[5m])'");
    assert_eq!(status, 3);
    assert!(err.starts_with("curl: (3) bad range in URL position 40:\n"), "{err}");
    let (out, _, status) = run(&mut shell, "curl -sg 'mgmt-01:9090/api/v1/query?query=up{job=\"node\"}'");
    assert_eq!(status, 0);
    assert!(out.contains("\"job\":\"node\""), "{out}");
    let (_, err, status) = run(&mut shell, "promtool query instant mgmt-01:9090 up");
    assert_eq!((err.as_str(), status), ("query error: Post \"mgmt-01:9090/api/v1/query\": unsupported protocol scheme \"mgmt-01\"\n", 1));
    let (_, err, _) = run(&mut shell, "promtool query instant http://gpu-001:9090 up");
    assert_eq!(err, "query error: Post \"http://gpu-001:9090/api/v1/query\": dial tcp 10.1.0.2:9090: connect: connection refused\n");
    let (_, err, _) = run(&mut shell, "promtool query instant http://mgmt-01:9090 'sum(up'");
    assert_eq!(err, "query error: bad_data: invalid parameter \"query\": 1:7: parse error: unclosed left parenthesis\n");
    let (_, err, status) = run(&mut shell, "promtool query instant http://mgmt-01:9090");
    assert_eq!((err.as_str(), status), ("promtool: error: required argument 'expr' not provided, try --help\n", 1));
}

const CAP_LAB: &str = "\n[[jobs]]\nname = \"pretrain\"\nkind = \"training\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nparams = \"8B\"\ntensor = 4\npipeline = 1\nglobal_batch = 32\nseq_len = 2048\nstart = \"running\"\n\n[[faults]]\nkind = \"gpu-power-cap\"\nnode = \"gpu-002\"\ngpu = 3\nwatts = 350\nat = \"-10m\"\n";

const RULE: &str = "cat > /lustre/monitoring/rules/gpu.yml <<'EOF'\ngroups:\n- name: gpu\n  rules:\n  - alert: GpuPowerLimited\n    expr: DCGM_FI_DEV_POWER_USAGE < 450 and DCGM_FI_DEV_GPU_UTIL > 90\n    for: 5m\n    labels:\n      owner: gpu-oncall\n    annotations:\n      summary: \"GPU {{ $labels.gpu }} of {{ $labels.Hostname }} draws {{ $value | humanize }} W\"\nEOF";

#[test]
fn a_rule_file_loads_pends_then_fires() {
    let mut shell = lab_shell(CAP_LAB);
    assert_eq!(run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts").0, "{\"status\":\"success\",\"data\":{\"alerts\":[]}}");
    let (_, err, status) = run(&mut shell, RULE);
    assert_eq!((err.as_str(), status), ("", 0));
    // The shared file system is one: every node sees the file.
    assert_eq!(run(&mut shell, "ssh gpu-002 grep -c alert: /lustre/monitoring/rules/gpu.yml").0, "1\n");
    assert_eq!(
        run(&mut shell, "promtool check rules /lustre/monitoring/rules/gpu.yml").0,
        "Checking /lustre/monitoring/rules/gpu.yml\n  SUCCESS: 1 rules found\n\n"
    );
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts");
    assert!(out.contains("\"alertname\":\"GpuPowerLimited\""), "{out}");
    assert!(out.contains("\"Hostname\":\"gpu-002\"") && out.contains("\"gpu\":\"3\""), "{out}");
    assert!(out.contains("\"state\":\"pending\""), "{out}");
    assert!(out.contains("\"summary\":\"GPU 3 of gpu-002 draws 3"), "{out}");
    run(&mut shell, "sleep 330");
    let (out, _, _) = run(&mut shell, "curl -s 'mgmt-01:9090/api/v1/rules?type=alert'");
    assert!(out.contains("\"state\":\"firing\",\"name\":\"GpuPowerLimited\""), "{out}");
    assert!(out.contains("\"duration\":300"), "{out}");
    let (holds, words) = crate::commands::monitoring::rules::judge(&shell.cluster, "GpuPowerLimited", "gpu-002");
    assert!(holds, "{words}");
    // The limit restored, the alert resolves at the next evaluation.
    run(&mut shell, "ssh gpu-002 sudo nvidia-smi -i 3 -pl 700");
    run(&mut shell, "sleep 30");
    assert_eq!(run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts").0, "{\"status\":\"success\",\"data\":{\"alerts\":[]}}");
}

#[test]
fn a_rule_that_fires_without_the_fault_is_not_judged_to_catch_it() {
    let mut shell = lab_shell(CAP_LAB);
    run(&mut shell, &RULE.replace("DCGM_FI_DEV_POWER_USAGE < 450 and DCGM_FI_DEV_GPU_UTIL > 90", "DCGM_FI_DEV_POWER_USAGE > 0"));
    let (holds, words) = crate::commands::monitoring::rules::judge(&shell.cluster, "GpuPowerLimited", "gpu-002");
    assert!(!holds);
    assert!(words.contains("also finds 16 series on the healthy cluster"), "{words}");
    let (holds, words) = crate::commands::monitoring::rules::judge(&shell.cluster, "NoSuchRule", "gpu-002");
    assert_eq!((holds, words.as_str()), (false, "Prometheus has loaded no alerting rule named NoSuchRule"));
}

#[test]
fn promtool_reports_a_broken_rule_file() {
    let mut shell = lab_shell("");
    run(&mut shell, "printf 'groups:\\n- name: g\\n  rules:\\n  - alert: A\\n    expr: rate(up)\\n' > bad.yml");
    let (out, err, status) = run(&mut shell, "promtool check rules bad.yml");
    assert_eq!(out, "Checking bad.yml\n");
    assert_eq!(
        err,
        "  FAILED:\nbad.yml: 5:11: group \"g\", rule 1, \"A\": could not parse expression: 1:6: parse error: expected type range vector in call to function \"rate\", got instant vector\n"
    );
    assert_eq!(status, 1);
    let (_, err, _) = run(&mut shell, "promtool check rules missing.yml");
    assert_eq!(err, "  FAILED:\nopen missing.yml: no such file or directory\n");
    // A broken file loads nothing; the others still do.
    run(&mut shell, "cp bad.yml /lustre/monitoring/rules/bad.yml");
    assert!(run(&mut shell, "curl -s mgmt-01:9090/api/v1/rules").0.ends_with("{\"groups\":[]}}"));
}

#[test]
fn keep_firing_for_holds_a_resolved_alert_for_a_while() {
    let mut shell = lab_shell(CAP_LAB);
    run(&mut shell, &RULE.replace("    for: 5m\n", "    for: 1m\n    keep_firing_for: 3m\n"));
    run(&mut shell, "sleep 90");
    assert!(run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts").0.contains("\"state\":\"firing\""));
    run(&mut shell, "ssh gpu-002 sudo nvidia-smi -i 3 -pl 700; sleep 60");
    let (out, _, _) = run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts");
    assert!(out.contains("\"state\":\"firing\"") && out.contains("\"keepFiringSince\":\""), "{out}");
    run(&mut shell, "sleep 180");
    assert_eq!(run(&mut shell, "curl -s mgmt-01:9090/api/v1/alerts").0, "{\"status\":\"success\",\"data\":{\"alerts\":[]}}");
}
