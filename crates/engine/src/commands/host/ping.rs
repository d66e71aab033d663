//! `ping [-c N] HOST` (iputils): nodes of the lab answer over the front-end
//! network with seeded sub-millisecond times; a node that is down answers
//! `Destination Host Unreachable` from this host (exit 1); a name the lab
//! does not know fails to resolve (exit 2). Without `-c` it sends 4.

use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::network::{self, frontend_ip};
use crate::rng::Rng;

pub struct Ping;

static SIGNATURE: Signature = Signature {
    name: "ping",
    summary: "send ICMP ECHO_REQUEST to network hosts",
    usage: "ping [-c count] [-i interval] [-q] [-W timeout] destination",
    flags: &[
        Flag { short: Some('c'), long: None, value: Some("count"), help: "stop after <count> replies" },
        Flag { short: Some('i'), long: None, value: Some("interval"), help: "seconds between sending each packet" },
        Flag { short: Some('W'), long: None, value: Some("timeout"), help: "time to wait for response" },
        Flag { short: Some('q'), long: None, value: None, help: "quiet output" },
    ],
    examples: &[Example { command: "ping -c 2 $HOSTNAME", description: "whether a node answers on the network" }],
};

impl Command for Ping {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut count, mut quiet, mut target) = (4u64, false, None);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('c') => match value.as_deref().and_then(|v| v.parse::<u64>().ok()).filter(|n| *n > 0) {
                        Some(n) => count = n.min(1000),
                        None => {
                            return Output::error(
                                format!("ping: invalid argument: '{}': out of range: 1 <= value <= 9223372036854775807\n", value.unwrap_or_default()),
                                1,
                            )
                        }
                    },
                    Some('q') => quiet = true,
                    _ => {}
                },
                Arg::Positional(host) => target = Some(host),
                other => {
                    let complaint = crate::commands::options::complaint("ping", &other);
                    return Output::error(format!("{complaint}\nUsage\n  ping [options] <destination>\n"), 2);
                }
            }
        }
        let Some(target) = target else {
            return Output::error("ping: usage error: Destination address required\n", 1);
        };
        let (cluster, me) = (invocation.cluster, invocation.node);
        let local = matches!(target.as_str(), "localhost" | "127.0.0.1");
        let node = if local {
            Some(me)
        } else {
            cluster.nodes.iter().map(AsRef::as_ref).find(|n: &&crate::model::Node| n.hostname == target || frontend_ip(&n.hostname) == target)
        };
        // The management host answers too: it is not a node, and always up.
        let monitor = target == network::MONITOR_HOST || target == network::MONITOR_IP;
        let (name, ip, up) = match node {
            _ if monitor => (network::MONITOR_HOST.to_string(), network::MONITOR_IP.to_string(), true),
            Some(node) => (node.hostname.clone(), if local { "127.0.0.1".to_string() } else { frontend_ip(&node.hostname) }, node.up(invocation.cluster.now)),
            None => return Output::error(format!("ping: {target}: Name or service not known\n"), 2),
        };
        let shown = if local || target == ip { ip.clone() } else { format!("{name} ({ip})") };
        let mut out = format!("PING {} ({ip}) 56(84) bytes of data.\n", if target == ip { &ip } else { &target });
        let duration_ms = (count - 1) * 1000 + 1;
        let time = duration_ms;
        if !up {
            if !quiet {
                for seq in 1..=count {
                    out += &format!("From {} ({}) icmp_seq={seq} Destination Host Unreachable\n", me.hostname, frontend_ip(&me.hostname));
                }
            }
            out += &format!("\n--- {target} ping statistics ---\n{count} packets transmitted, 0 received, +{count} errors, 100% packet loss, time {time}ms\n");
            return Output { stdout: out, status: 1, duration_ms: duration_ms + 3000, ..Output::default() };
        }
        let mut rng = Rng::derive(cluster.seed, &[&me.hostname, &name, "ping"]);
        let times: Vec<u64> = (0..count).map(|_| if local { rng.range_u64(15, 60) } else { rng.range_u64(80, 260) }).collect();
        if !quiet {
            for (seq, us) in times.iter().enumerate() {
                out += &format!("64 bytes from {shown}: icmp_seq={} ttl=64 time={}.{:03} ms\n", seq + 1, us / 1000, us % 1000);
            }
        }
        let (min, max) = (*times.iter().min().unwrap_or(&0), *times.iter().max().unwrap_or(&0));
        let avg = times.iter().sum::<u64>() / count;
        let var = times.iter().map(|t| (*t as f64 - avg as f64).powi(2)).sum::<f64>() / count as f64;
        let ms = |us: u64| format!("{}.{:03}", us / 1000, us % 1000);
        out += &format!("\n--- {target} ping statistics ---\n{count} packets transmitted, {count} received, 0% packet loss, time {time}ms\n");
        out += &format!("rtt min/avg/max/mdev = {}/{}/{}/{} ms\n", ms(min), ms(avg), ms(max), ms(var.sqrt() as u64));
        Output { stdout: out, duration_ms, ..Output::default() }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn answers_like_iputils() {
        let out = run_on_first_node("ping -c 2 gpu-002");
        assert!(
            out.stdout.starts_with("PING gpu-002 (10.1.0.3) 56(84) bytes of data.\n64 bytes from gpu-002 (10.1.0.3): icmp_seq=1 ttl=64 time=0."),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains("2 packets transmitted, 2 received, 0% packet loss, time 1001ms\nrtt min/avg/max/mdev = "));
        let out = run_on_first_node("ping -c 1 mgmt-01");
        assert!(
            out.stdout.starts_with("PING mgmt-01 (10.1.255.10) 56(84) bytes of data.\n64 bytes from mgmt-01 (10.1.255.10): icmp_seq=1 ttl=64 time=0."),
            "{}",
            out.stdout
        );
        let out = run_on_first_node("ping -c 1 nosuch");
        assert_eq!((out.stderr.as_str(), out.status), ("ping: nosuch: Name or service not known\n", 2));
        let mut shell = session();
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        let out = shell.run("ping -c 2 gpu-002");
        assert_eq!(out.status, 1);
        assert!(out.stdout().contains("From gpu-001 (10.1.0.2) icmp_seq=2 Destination Host Unreachable\n"));
        assert!(out.stdout().contains("2 packets transmitted, 0 received, +2 errors, 100% packet loss"));
    }
}
