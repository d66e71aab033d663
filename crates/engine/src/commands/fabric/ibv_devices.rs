//! `ibv_devices`: the RDMA device names and node GUIDs (libibverbs example).

use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct IbvDevices;

static SIGNATURE: Signature = Signature {
    name: "ibv_devices",
    summary: "list the RDMA devices and their node GUIDs",
    usage: "ibv_devices",
    flags: &[],
    examples: &[Example { command: "ibv_devices", description: "every RDMA device with its node GUID" }],
};

impl Command for IbvDevices {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    /// ibv_devices takes no options and ignores its arguments.
    fn run(&self, invocation: &Invocation) -> Output {
        let mut out = format!("    {:<16}\t   node GUID\n", "device");
        out += &format!("    {:<16}\t----------------\n", "------");
        for hca in &invocation.node.hcas {
            out += &format!("    {:<16}\t{:016x}\n", hca.name, hca.node_guid);
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn lists_every_device_with_its_guid() {
        let out = run_on_first_node("ibv_devices").stdout;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[0], "    device          \t   node GUID");
        assert!(lines[2].starts_with("    mlx5_0          \ta088c203"));
    }
}
