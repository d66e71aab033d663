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

#[test]
fn a_dead_gpu_stays_lost_through_a_reboot_and_the_others_move_down_a_number() {
    let source = "[lab]\nid = \"d\"\ntitle = \"t\"\nsummary = \"s\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\"]\n\
        [[faults]]\nkind = \"gpu-fallen-off-bus\"\nnode = \"gpu-001\"\ngpu = 5\nstate = \"dead\"\nrepair = [\"replace-gpu\"]\n\
        [[questions]]\nid = \"q\"\ntype = \"text\"\nprompt = \"p\"\nanswer = \"a\"\n";
    let lab = load(source).expect("the lab loads");
    let mut shell = Session::new(lab.instantiate(1), lab.first_host());
    let list = |shell: &mut Session| shell.run("nvidia-smi -L").stdout();
    let before = shell.run("nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader");
    assert!(before.stderr().contains("Unable to determine the device handle for GPU0000:A3:00.0: Unknown Error"), "{}", before.text());
    let lost_at_boot = list(&mut shell);
    assert_eq!(lost_at_boot.lines().count(), 7);
    // The driver loads again and probes seven GPUs: the ones after the lost
    // board take the numbers down by one, and the lost one leaves no trace in NVML.
    shell.run("sudo reboot");
    shell.run("sleep 300");
    let after = shell.run("nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader");
    assert_eq!(after.stderr(), "");
    assert_eq!(
        after.stdout(),
        "0, 00000000:04:00.0\n1, 00000000:23:00.0\n2, 00000000:43:00.0\n3, 00000000:64:00.0\n4, 00000000:84:00.0\n5, 00000000:C3:00.0\n6, 00000000:E4:00.0\n"
    );
    assert!(shell.run("sudo dmesg").stdout().contains("NVRM: The NVIDIA probe routine failed for 1 device(s)."));
    // What nvidia-smi calls GPU 5 is the board at C3: a reset of it resets that board.
    shell.run("sudo systemctl stop dcgm-exporter nvidia-dcgm");
    assert_eq!(shell.run("sudo nvidia-smi -r -i 5").stdout(), "GPU 00000000:C3:00.0 was successfully reset.\nAll done.\n");
    assert!(matches!(shell.changes().last(), Some((_, clusterlab_engine::model::change::Change::ResetGpu { gpu: 6, .. }))), "{:?}", shell.changes().last());
    // A new board in slot 5: eight GPUs, numbered as before.
    shell.run("sudo scontrol update nodename=gpu-001 state=drain reason=\"GPU 5 dead\"");
    assert_eq!(shell.run("dctech replace-gpu gpu-001 5").status, 0);
    shell.run("sleep 300");
    assert_eq!(list(&mut shell).lines().count(), 8);
}
