//! A lab from symptom to verified recovery, through the terminal only:
//! find the slow rail, drain the node, have the cable reseated, prove the
//! rail is back at full rate with the same measurements, resume.

use clusterlab_engine::{load, Session};

#[test]
fn the_slow_rail_lab_can_be_carried_to_a_verified_recovery() {
    let source = include_str!("../../../labs/slow-rail.toml");
    let lab = load(source).expect("the lab loads");
    for seed in 0..4 {
        let variant = lab.variant(seed);
        let (node, hca) = (&variant.values["bad_node"], &variant.values["bad_hca"]);
        let mut shell = Session::new(lab.instantiate(seed), lab.first_host());
        let rate = |shell: &mut Session| shell.run(&format!("ssh {node} ibstat {hca} | grep Rate")).stdout();

        // Symptom and evidence.
        assert_eq!(rate(&mut shell), "\t\tRate: 200\n");
        // Drain before touching hardware; the wrong fix changes nothing.
        assert_eq!(shell.run(&format!("sudo scontrol update NodeName={node} State=DRAIN Reason=\"slow rail {hca}\"")).status, 0);
        shell.run(&format!("dctech replace-gpu {node} 0"));
        assert_eq!(rate(&mut shell), "\t\tRate: 200\n");
        // The right one.
        let ticket = shell.run(&format!("dctech reseat-cable {node} {hca}"));
        assert!(ticket.stdout().starts_with("Ticket DC-"), "{}", ticket.text());
        assert_eq!(rate(&mut shell), "\t\tRate: 400\n");
        // The failing comparison, repeated: the rail delivers line rate again.
        let peer = if node == "gpu-001" { "gpu-002" } else { "gpu-001" };
        shell.run(&format!("ssh {peer} ib_write_bw -d {hca} --report_gbits &"));
        let bw = shell.run(&format!("ssh {node} ib_write_bw -d {hca} --report_gbits {peer}")).stdout();
        let row = bw.lines().find(|line| line.trim_start().starts_with("65536")).expect("a result row");
        let average: f64 = row.split_whitespace().nth(3).and_then(|v| v.parse().ok()).expect("a number");
        assert!(average > 370.0, "{row}");
        // Back in service, and the record of what was done.
        assert_eq!(shell.run(&format!("sudo scontrol update NodeName={node} State=RESUME")).status, 0);
        assert!(shell.run("sinfo -R").stdout().lines().count() <= 1);
        // Drain, two repairs, the server (listen, stop), the traffic on both ports, resume.
        assert_eq!(shell.changes().len(), 8, "{:?}", shell.changes());
    }
}
