//! `show_gids [DEV]`: MLNX_OFED's script over sysfs's GID tables, one line
//! per filled entry (`DEV\tPORT\tINDEX\tGID\t\tIPv4  \tVER\tDEV`), the
//! IPv4 of a mapped GID beside it, then `n_gids_found=N`. The script lists
//! each device's `gids/` with `ls`, so the indexes come in text order.

use crate::commands::fabric::roce::gid_table;
use crate::commands::{Command, Example, Invocation, Output, Signature};

pub struct ShowGids;

static SIGNATURE: Signature = Signature {
    name: "show_gids",
    summary: "list the RDMA devices' GID tables: index, GID, IPv4, RoCE version, netdev",
    usage: "show_gids [DEV]",
    flags: &[],
    examples: &[
        Example { command: "show_gids", description: "every GID of every port: which index carries RoCE v2 over the rail's IPv4 address" },
        Example { command: "show_gids mlx5_0", description: "one device's GIDs" },
    ],
};

impl Command for ShowGids {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let node = invocation.node;
        let wanted = invocation.args().first();
        let mut out = String::from("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n");
        let mut found = 0;
        let mut stderr = String::new();
        if let Some(name) = wanted.filter(|name| node.hca(name).is_none()) {
            stderr = format!("ls: cannot access '/sys/class/infiniband/{name}/ports/': No such file or directory\n");
        }
        for hca in node.hcas.iter().filter(|hca| wanted.is_none_or(|name| *name == hca.name)) {
            let mut gids = gid_table(node, hca);
            crate::sort::sort_by_key(&mut gids, |gid| gid.index.to_string());
            for gid in gids {
                let version = gid.kind.rsplit(' ').next().unwrap_or_default();
                let ipv4 = gid.ipv4.map_or_else(|| "\t".to_string(), |ip| format!("{ip}  "));
                out += &format!("{}\t{}\t{}\t{}\t{ipv4}\t{version}\t{}\n", hca.name, hca.port.number, gid.index, gid.gid, hca.netdev);
                found += 1;
            }
        }
        out += &format!("n_gids_found={found}\n");
        Output { stderr, ..Output::ok(out) }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::roce_session;

    #[test]
    fn roce_ports_carry_their_rail_address_at_index_3() {
        let mut shell = roce_session("");
        let out = shell.run("show_gids mlx5_1").stdout();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV");
        assert!(lines[2].starts_with("mlx5_1\t1\t0\tfe80:0000:0000:0000:"), "{out}");
        assert!(lines[2].ends_with("\t\t\tv1\tenp64s0np0"), "{out}");
        assert_eq!(lines[5], "mlx5_1\t1\t3\t0000:0000:0000:0000:0000:ffff:0a65:0002\t10.101.0.2  \tv2\tenp64s0np0");
        assert_eq!(lines[6], "n_gids_found=4");
        assert!(shell.run("ip -br addr show enp64s0np0").stdout().contains("10.101.0.2/24"));
    }
}
