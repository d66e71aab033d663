//! `reboot` and `shutdown -r` (systemd 249 on Ubuntu 22.04; `systemctl
//! reboot` is `systemctl`'s): the node goes down and boots again
//! ([`Change::Reboot`]), taking the trainee's ssh session with it. A plain
//! user is refused by logind, as polkit asks for a password no lab gives.

use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;

/// What logind and the init daemon answer a user who may not reboot.
pub const NOT_PERMITTED: &str = "Failed to set wall message, ignoring: Interactive authentication required.\nFailed to reboot system via logind: Interactive authentication required.\nFailed to open initctl fifo: Permission denied\nFailed to talk to init daemon.\n";

/// The reboot of the node this runs on, as root; else logind's refusal.
pub fn reboot(invocation: &Invocation) -> Output {
    if !is_root(invocation.env) {
        return Output::error(NOT_PERMITTED, 1);
    }
    Output { changes: vec![Change::Reboot { node: invocation.node.hostname.clone(), power_cycle: false, by_slurm: false }], ..Output::default() }
}

pub struct Reboot;

static REBOOT: Signature = Signature {
    name: "reboot",
    summary: "reboot the machine",
    usage: "reboot [OPTIONS...]",
    flags: &[
        Flag { short: Some('f'), long: Some("force"), value: None, help: "force immediate reboot" },
        Flag { short: None, long: Some("no-wall"), value: None, help: "don't send wall message before reboot" },
    ],
    examples: &[Example { command: "sudo reboot", description: "reboot this node (drain it in Slurm first)" }],
};

impl Command for Reboot {
    fn signature(&self) -> &'static Signature {
        &REBOOT
    }

    fn run(&self, invocation: &Invocation) -> Output {
        if let Some(extra) = invocation.args().iter().find(|arg| !matches!(arg.as_str(), "-f" | "--force" | "-ff" | "--no-wall")) {
            return Output::error(format!("reboot: unrecognized option '{extra}'\n"), 1);
        }
        reboot(invocation)
    }
}

pub struct Shutdown;

static SHUTDOWN: Signature = Signature {
    name: "shutdown",
    summary: "halt, power off or reboot the machine",
    usage: "shutdown [OPTIONS...] [TIME] [WALL...]",
    flags: &[
        Flag { short: Some('r'), long: Some("reboot"), value: None, help: "reboot the machine" },
        Flag { short: Some('h'), long: None, value: None, help: "equivalent to --poweroff, overridden by --halt" },
        Flag { short: Some('P'), long: Some("poweroff"), value: None, help: "power-off the machine (the default)" },
        Flag { short: Some('c'), long: None, value: None, help: "cancel a pending shutdown" },
    ],
    examples: &[Example { command: "sudo shutdown -r now", description: "reboot this node now" }],
};

impl Command for Shutdown {
    fn signature(&self) -> &'static Signature {
        &SHUTDOWN
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let (flags, operands): (Vec<&String>, Vec<&String>) = args.iter().partition(|arg| arg.starts_with('-'));
        let reboots = flags.iter().any(|flag| matches!(flag.as_str(), "-r" | "--reboot"));
        if let Some(other) = flags.iter().find(|flag| !matches!(flag.as_str(), "-r" | "--reboot" | "-h" | "-P" | "--poweroff" | "-c")) {
            return Output::error(format!("shutdown: invalid option -- '{}'\n", other.trim_start_matches('-')), 1);
        }
        if flags.iter().any(|flag| *flag == "-c") {
            return Output::default();
        }
        if !reboots {
            // A node powered off would need hands at the data centre: the
            // simulation says so in its own voice rather than strand the lab.
            return Output::error("shutdown: this lab simulates reboots only (shutdown -r now)\n", 1);
        }
        match operands.first().map(|time| time.as_str()) {
            None | Some("now") | Some("+0") => reboot(invocation),
            Some(time) if time.starts_with('+') || time.contains(':') => {
                Output::error("shutdown: this lab simulates an immediate reboot only (shutdown -r now)\n", 1)
            }
            Some(time) => Output::error(format!("Failed to parse time specification: {time}\n"), 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::Fault;
    use crate::testing::{cluster, session, shell};

    #[test]
    fn a_plain_user_may_not_reboot() {
        let mut shell = session();
        let out = shell.run("reboot");
        assert_eq!((out.stderr(), out.status), (super::NOT_PERMITTED.to_string(), 1));
        assert!(shell.changes().is_empty());
    }

    #[test]
    fn a_reboot_drops_the_session_and_the_node_boots_again() {
        let mut cluster = cluster();
        cluster.inject(Fault::GpuFallenOffBus { node: "gpu-002".into(), gpu: 3, dead: false }, Vec::new()).expect("the fault applies");
        let mut shell = shell(cluster);
        assert_eq!(shell.run("ssh gpu-002").status, 0);
        let out = shell.run("sudo reboot");
        assert_eq!(out.stderr(), "Connection to gpu-002 closed by remote host.\nConnection to gpu-002 closed.\n");
        assert_eq!(shell.prompt(), "user@gpu-001:~$ ");
        // Down while it boots, then back, with every GPU and a fresh kernel log.
        assert_eq!(shell.run("ssh gpu-002 hostname").stderr(), "ssh: connect to host gpu-002 port 22: No route to host\n");
        assert_eq!(shell.run("sleep 300; ssh gpu-002 nvidia-smi -L | wc -l").stdout(), "8\n");
        assert_eq!(shell.run("ssh gpu-002 uptime | grep -c ' up [0-9] min'").stdout(), "1\n");
        assert_eq!(shell.run("ssh gpu-002 sudo dmesg | grep -c 'fallen off'").stdout(), "0\n");
        // Slurm was not told: the node is down until an operator resumes it.
        assert!(shell.run("scontrol show node gpu-002").stdout().contains("Reason=Node unexpectedly rebooted"));
    }

    #[test]
    fn every_view_sees_the_node_away_while_it_boots() {
        let mut shell = session();
        shell.run("ssh gpu-002 sudo reboot");
        assert_eq!(shell.run("sinfo -n gpu-002 -h -o %t").stdout(), "down*\n");
        assert!(shell.run("kubectl get node gpu-002").stdout().contains("NotReady"));
        assert!(shell.run("ping -c 1 gpu-002").stdout().contains("Destination Host Unreachable"));
        assert!(shell.run("pdsh -w gpu-002 true").stderr().contains("No route to host"));
        shell.run("sleep 300");
        assert!(shell.run("kubectl get node gpu-002").stdout().contains(" Ready "));
        assert_eq!(shell.run("sinfo -n gpu-002 -h -o %t").stdout(), "down\n");
    }

    #[test]
    fn a_reboot_under_a_running_job_fails_it() {
        let lab = crate::load(
            "[lab]\nid = \"t\"\ntitle = \"T\"\nsummary = \"A job.\"\n\n[cluster]\npreset = \"hgx-h100\"\nnodes = [\"gpu-001\", \"gpu-002\"]\n\n[[jobs]]\nname = \"llm\"\nkind = \"training\"\nnodes = [\"gpu-001\", \"gpu-002\"]\nparams = \"8B\"\nglobal_batch = 16\nseq_len = 2048\nsteps = 100000\n",
        )
        .expect("the lab loads");
        let mut shell = shell(lab.instantiate(1));
        assert!(shell.run("squeue -h -o %T").stdout().starts_with("RUNNING"));
        shell.run("ssh gpu-002 sudo reboot");
        // The other ranks wait for the lost ones until NCCL's watchdog ends them.
        assert!(shell.run("sleep 900; sacct -n -X -o State").stdout().contains("FAILED"), "{}", shell.run("sacct").stdout());
    }

    #[test]
    fn a_drained_node_stays_drained_and_keeps_what_a_reboot_cannot_fix() {
        let mut cluster = cluster();
        cluster.inject(Fault::HcaSymbolErrors { node: "gpu-002".into(), hca: "mlx5_1".into(), count: 5000 }, Vec::new()).expect("the fault applies");
        let mut shell = shell(cluster);
        shell.run("sudo scontrol update nodename=gpu-002 state=drain reason=maintenance");
        let out = shell.run("ssh gpu-002 sudo shutdown -r now");
        assert_eq!((out.stderr(), out.status), ("Connection to gpu-002 closed by remote host.\n".to_string(), 255));
        shell.run("sleep 300");
        assert!(shell.run("sinfo -R").stdout().contains("maintenance"));
        assert!(!shell.run("ssh gpu-002 sudo perfquery -C mlx5_1 | grep SymbolErrorCounter").stdout().contains(":.....0\n"));
    }
}
