//! NCCL's INFO log of a communicator's initialisation (NCCL_DEBUG=INFO) in
//! nccl-tests jobs, against the captures in ../shared/reference/fabric
//! (nccl_debug_info_2node_16rank_ib_rings_trees_excerpt.txt,
//! nccl_debug_info_h100_2node_ib_sharp_plugin_excerpt.txt,
//! nccl_info_channels_gdrdma_vs_no_gdr_roce.txt) and NCCL's own printf
//! formats per release: every line's layout, the phases in NCCL's order for
//! every rank that prints, ending with Init COMPLETE, and the lines that
//! differ between releases (2.18 against 2.26).

mod common;

use clusterlab_engine::load;
use clusterlab_engine::model::Cluster;
use clusterlab_engine::Session;

fn reference(name: &str) -> String {
    common::reference("fabric", name)
}

/// A cluster of `preset` with these hosts and NCCL version, at seed 1.
fn cluster(preset: &str, hosts: &[&str], nccl: &str) -> Cluster {
    let nodes: Vec<String> = hosts.iter().map(|h| format!("\"{h}\"")).collect();
    let lab = load(&format!(
        "[lab]\nid = \"nccl-init\"\ntitle = \"t\"\nsummary = \"s\"\n\n[cluster]\npreset = \"{preset}\"\nnodes = [{}]\nnccl = \"{nccl}\"\n",
        nodes.join(", ")
    ))
    .expect("valid lab");
    lab.instantiate(1)
}

fn run(cluster: &Cluster, line: &str) -> String {
    let host = cluster.nodes[0].hostname.clone();
    let t = Session::new(cluster.clone(), &host).run(line);
    assert_eq!(t.status, 0, "{line}: {}", t.stderr());
    t.stdout()
}

/// An INFO line: `host:pid:tid [dev] NCCL INFO message`.
#[derive(Debug, Clone, PartialEq)]
struct Info {
    host: String,
    pid: u32,
    tid: u32,
    dev: u32,
    msg: String,
}

fn info(line: &str) -> Option<Info> {
    let (head, msg) = line.split_once(" NCCL INFO ")?;
    let (ids, dev) = head.rsplit_once(" [")?;
    let dev = dev.strip_suffix(']')?.parse().ok()?;
    let mut parts = ids.rsplitn(3, ':');
    let tid = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let host = parts.next()?.to_string();
    (!host.is_empty() && !host.contains(' ')).then(|| Info { host, pid, tid, dev, msg: msg.to_string() })
}

fn infos(text: &str) -> Vec<Info> {
    text.lines().filter_map(info).collect()
}

/// Hex words (pointers, hashes, bus ids) after these labels, masked.
fn mask_hex(msg: &str) -> String {
    let mut out = Vec::new();
    let mut words = msg.split(' ').peekable();
    while let Some(w) = words.next() {
        out.push(w.to_string());
        if ["comm", "commId", "busId"].contains(&w) {
            if let Some(value) = words.next() {
                assert!(value.trim_start_matches("0x").chars().all(|c| c.is_ascii_hexdigit()), "{w} {value} in {msg}");
                out.push("HEX".into());
            }
        }
    }
    out.join(" ")
}

/// A ring as rank 0 dumps it: (channel, channels, ranks), or None if the
/// line is not exactly the layout of that release (before 2.23 " %3d" per
/// rank after "Channel cc/nn : ", from 2.23 " %*d" as wide as the largest
/// rank after "Channel cc/nn :").
fn ring_line(msg: &str, old: bool, nranks: usize) -> Option<(usize, usize, Vec<usize>)> {
    let rest = msg.strip_prefix("Channel ")?;
    let (c, rest) = rest.split_once('/')?;
    let (n, rest) = rest.split_once(" :")?;
    let ranks: Vec<usize> = rest.split_whitespace().map(|v| v.parse().ok()).collect::<Option<_>>()?;
    let rebuilt: String = if old {
        format!(" {}", ranks.iter().map(|r| format!(" {r:3}")).collect::<String>())
    } else {
        let width = nranks.saturating_sub(1).to_string().len();
        ranks.iter().map(|r| format!(" {r:width$}")).collect()
    };
    (c.len() == 2 && n.len() == 2 && rebuilt == rest).then(|| (c.parse().ok(), n.parse().ok())).and_then(|(c, n)| Some((c?, n?, ranks)))
}

/// A Trees line: per channel (channel, [down0, down1, down2], rank, up),
/// or None if it is not exactly " [c] a/b/c->r->u" repeated.
fn trees_line(msg: &str) -> Option<Vec<(usize, [i64; 3], i64, i64)>> {
    let rest = msg.strip_prefix("Trees")?;
    let mut out = Vec::new();
    for item in rest.split(" [").skip(1) {
        let (c, tree) = item.split_once("] ")?;
        let (downs, rest) = tree.split_once("->")?;
        let (rank, up) = rest.split_once("->")?;
        let downs: Vec<i64> = downs.split('/').map(|d| d.parse().ok()).collect::<Option<_>>()?;
        out.push((c.parse().ok()?, [*downs.first()?, *downs.get(1)?, *downs.get(2)?], rank.parse().ok()?, up.trim_end().parse().ok()?));
    }
    let rebuilt: String = out.iter().map(|(c, d, r, u)| format!(" [{c}] {}/{}/{}->{r}->{u}", d[0], d[1], d[2])).collect();
    let in_order = out.iter().enumerate().all(|(i, (c, ..))| *c == i);
    (rebuilt == rest && in_order).then_some(out)
}

/// A connection line: (channel, from, to, how) where how is the transport
/// text after the ranks (`via P2P/CUMEM`, `[send] via NET/IB/0/GDRDMA`).
fn channel_line(msg: &str) -> Option<(usize, usize, usize, String)> {
    let rest = msg.strip_prefix("Channel ")?;
    let (c, rest) = rest.split_once("/0 : ")?;
    let (from, rest) = rest.split_once(" -> ")?;
    let (to, how) = rest.split_once(' ')?;
    let rank = |s: &str| -> Option<usize> {
        let (r, d) = s.split_once('[')?;
        d.strip_suffix(']')?.parse::<u32>().ok()?;
        r.parse().ok()
    };
    let net = how.strip_prefix("[send] via NET/IB/").or_else(|| how.strip_prefix("[receive] via NET/IB/"));
    let ok = match net {
        Some(dev) => {
            let dev = dev.strip_suffix("/GDRDMA").unwrap_or(dev);
            dev.chars().all(|c| c.is_ascii_digit()) && !dev.is_empty()
        }
        None => {
            ["via P2P/CUMEM", "via P2P/IPC/read", "via P2P/IPC", "via P2P/CUMEM/read", "via P2P/direct pointer", "via P2P/direct pointer/read"].contains(&how)
        }
    };
    (ok && c.len() == 2).then(|| (c.parse().ok(), rank(from), rank(to))).and_then(|(c, f, t)| Some((c?, f?, t?, how.to_string())))
}

/// `NET/IB : Using [0]mlx5_0:1/IB ... [RO]; OOB iface:a.b.c.d<0>`, the
/// devices numbered in order; the HPC-X plugin adds /SHARP.
fn net_ib_line_ok(msg: &str) -> bool {
    let Some(rest) = msg.strip_prefix("NET/IB : Using") else { return false };
    let Some((devices, oob)) = rest.split_once(" [RO]; OOB ") else { return false };
    let devices_ok = devices.split(' ').skip(1).enumerate().all(|(k, d)| {
        let Some(d) = d.strip_prefix(&format!("[{k}]")) else { return false };
        let d = d.strip_suffix("/SHARP").unwrap_or(d);
        let Some((name, rest)) = d.split_once(':') else { return false };
        let Some((port, layer)) = rest.split_once('/') else { return false };
        name.starts_with("mlx5_") && port.parse::<u8>().is_ok() && ["IB", "RoCE"].contains(&layer)
    });
    let oob_ok = oob
        .strip_suffix("<0>")
        .and_then(|o| o.split_once(':'))
        .is_some_and(|(iface, ip)| !iface.is_empty() && ip.split('.').count() == 4 && ip.split('.').all(|p| p.parse::<u8>().is_ok()));
    devices_ok && oob_ok && !devices.is_empty()
}

/// The messages of one rank's init thread and of its process's main thread, in order.
fn of_rank<'a>(lines: &'a [Info], host: &str, pid: u32, dev: u32) -> Vec<&'a Info> {
    lines.iter().filter(|l| l.host == host && l.pid == pid && l.dev == dev).collect()
}

/// Position of the first message starting with `prefix` at or after `from`.
fn find(lines: &[&Info], from: usize, prefix: &str) -> usize {
    lines[from..]
        .iter()
        .position(|l| l.msg.starts_with(prefix))
        .map(|p| p + from)
        .unwrap_or_else(|| panic!("no {prefix:?} after line {from} in\n{}", lines.iter().map(|l| l.msg.as_str()).collect::<Vec<_>>().join("\n")))
}

/// Every rank that starts its communicator completes it, with the same
/// comm and bus id, as its last init line (Init timings aside).
fn assert_every_rank_completes(lines: &[Info]) {
    let starts: Vec<&Info> = lines.iter().filter(|l| l.msg.ends_with(" - Init START")).collect();
    assert!(!starts.is_empty());
    for start in starts {
        let done = start.msg.replace(" - Init START", " - Init COMPLETE");
        let mine: Vec<&Info> = lines.iter().filter(|l| l.host == start.host && l.pid == start.pid && l.tid == start.tid).collect();
        let at = mine.iter().position(|l| l.msg == done).unwrap_or_else(|| panic!("{} never completes", start.msg));
        let after: Vec<&str> = mine[at + 1..].iter().map(|l| l.msg.as_str()).filter(|m| !m.starts_with("Init timings")).collect();
        assert!(after.is_empty(), "after {done}: {after:?}");
    }
}

/// Each tree edge is seen from both ends: a child's parent lists it as a child.
fn assert_trees_agree(lines: &[Info]) {
    let mut trees = std::collections::BTreeMap::new();
    for l in lines {
        if let Some(t) = trees_line(&l.msg) {
            trees.insert(t[0].2, t);
        }
    }
    for (rank, t) in &trees {
        for (c, downs, _, up) in t {
            if let Some(parent) = trees.get(up) {
                assert!(parent[*c].1.contains(rank), "channel {c}: {rank}'s parent {up} does not list it ({:?})", parent[*c]);
            }
            for d in downs.iter().filter(|d| **d >= 0) {
                if let Some(child) = trees.get(d) {
                    assert_eq!(child[*c].3, *rank, "channel {c}: child {d} of {rank}");
                }
            }
        }
    }
}

#[test]
fn the_captures_parse_with_the_checks_used_here() {
    // The checks below accept the real lines before they judge ours.
    let rings = infos(&reference("nccl_debug_info_2node_16rank_ib_rings_trees_excerpt.txt"));
    assert_eq!(rings.len(), 11);
    let ring_lines: Vec<_> = rings.iter().filter_map(|l| ring_line(&l.msg, true, 16)).collect();
    assert_eq!(ring_lines.len(), 5);
    assert!(ring_lines.iter().all(|(_, n, ranks)| *n == 8 && ranks.len() == 16));
    let trees = rings.iter().find_map(|l| trees_line(&l.msg)).expect("the capture's Trees line");
    assert_eq!(trees.len(), 8);
    assert!(rings.iter().any(|l| l.msg == "P2P Chunksize set to 131072"));
    let sharp = infos(&reference("nccl_debug_info_h100_2node_ib_sharp_plugin_excerpt.txt"));
    assert_eq!(sharp.len(), 9);
    assert!(sharp.iter().filter(|l| l.msg.starts_with("NET/IB")).all(|l| net_ib_line_ok(&l.msg)));
    assert!(sharp.iter().all(|l| l.tid != l.pid), "init-thread lines");
    let gdr = infos(&reference("nccl_info_channels_gdrdma_vs_no_gdr_roce.txt"));
    assert_eq!(gdr.len(), 8);
    assert!(gdr.iter().all(|l| channel_line(&l.msg).is_some()), "{gdr:?}");
}

#[test]
fn two_nodes_of_nccl_2_21_print_the_rings_trees_and_ranks_as_the_capture() {
    // The rings-and-trees capture is a 2.20-2.22 log (MNNVL field, " %3d" rings).
    let c = cluster("hgx-h100", &["swat1-04", "swat1-05"], "2.21.5");
    let out = run(&c, "NCCL_DEBUG=INFO srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8");
    let lines = infos(&out);
    let captured = infos(&reference("nccl_debug_info_2node_16rank_ib_rings_trees_excerpt.txt"));
    // Each captured comm line is ours for the same rank, pointer aside.
    for cap in captured.iter().filter(|l| l.msg.starts_with("comm ")) {
        let rank: usize = cap.msg.split(' ').nth(3).unwrap().parse().unwrap();
        let ours = lines.iter().find(|l| l.msg.starts_with("comm ") && l.msg.split(' ').nth(3) == Some(&rank.to_string())).expect("our comm line");
        assert_eq!(mask_hex(&ours.msg), mask_hex(&cap.msg));
        assert_eq!(ours.dev as usize, rank % 8);
    }
    // Rank 0 dumps every channel's ring in the old layout, each a permutation of the ranks.
    let rings: Vec<_> = lines.iter().filter_map(|l| ring_line(&l.msg, true, 16)).collect();
    let channels = rings.first().map(|r| r.1).expect("ring lines");
    assert_eq!(rings.len(), channels);
    for (at, (c, n, ranks)) in rings.iter().enumerate() {
        assert_eq!((*c, *n), (at, channels));
        let mut sorted = ranks.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
        assert_eq!(ranks[0], 0);
    }
    // Trees: one entry per channel, in the capture's layout; parents and children agree.
    let trees: Vec<_> = lines.iter().filter_map(|l| trees_line(&l.msg).map(|t| (l, t))).collect();
    assert_eq!(trees.len(), 9, "node 0's ranks and node 1's first");
    assert!(trees.iter().all(|(_, t)| t.len() == channels));
    assert_trees_agree(&lines);
    // P2P chunks across nodes as captured.
    assert_eq!(lines.iter().filter(|l| l.msg == "P2P Chunksize set to 131072").count(), 9);
    // Before 2.22 the rings and trees connect during init.
    let header = out.lines().position(|l| l.starts_with("#        (B)")).unwrap();
    let connected = out.lines().position(|l| l.ends_with("NCCL INFO Connected all rings")).unwrap();
    assert!(connected < header);
    assert!(lines.iter().filter_map(|l| channel_line(&l.msg)).count() > 100);
    assert_every_rank_completes(&lines);
}

#[test]
fn the_net_and_init_start_lines_have_the_sharp_captures_layout() {
    // The SHARP capture is NCCL 2.22 (its tuner looks for ncclTunerPlugin_v3).
    let c = cluster("hgx-h100", &["qh100-gpu19", "qh100-gpu20"], "2.22.3");
    let out = run(&c, "NCCL_DEBUG=INFO mpirun -np 16 -H qh100-gpu19:8,qh100-gpu20:8 all_reduce_perf_mpi -b 8 -e 8 -g 1");
    let lines = infos(&out);
    let captured = infos(&reference("nccl_debug_info_h100_2node_ib_sharp_plugin_excerpt.txt"));
    for cap in captured.iter().filter(|l| l.msg.ends_with("Init START")) {
        let rank = cap.msg.split(' ').nth(4).unwrap();
        let ours = lines.iter().find(|l| l.msg.ends_with("Init START") && l.msg.split(' ').nth(4) == Some(rank)).expect("our Init START");
        assert_eq!(mask_hex(&ours.msg), mask_hex(&cap.msg));
        assert_ne!(ours.tid, ours.pid, "the init thread prints it");
    }
    let nets: Vec<&Info> = lines.iter().filter(|l| l.msg.starts_with("NET/IB : Using")).collect();
    assert_eq!(nets.len(), 9, "once per process that prints");
    assert!(nets.iter().all(|l| net_ib_line_ok(&l.msg) && l.tid != l.pid), "{nets:?}");
    // Each is followed by the network NCCL picked, as in the capture.
    for net in nets {
        let mine = of_rank(&lines, &net.host, net.pid, net.dev);
        let at = mine.iter().position(|l| l == &net).unwrap();
        assert_eq!(mine[at + 1].msg, "Using network IB");
    }
    // Network connections in the GDR capture's layout.
    let gdr: Vec<_> = lines.iter().filter_map(|l| channel_line(&l.msg)).filter(|c| c.3.contains("NET/IB")).collect();
    assert!(!gdr.is_empty() && gdr.iter().all(|c| c.3.ends_with("/GDRDMA")), "{gdr:?}");
    assert!(lines.iter().filter_map(|l| channel_line(&l.msg)).any(|c| c.3 == "via P2P/CUMEM"));
    assert_every_rank_completes(&lines);
}

#[test]
fn nccl_2_26_prints_every_phase_in_order_for_every_rank() {
    let c = cluster("hgx-h100", &["gpu-001", "gpu-002"], "2.26.2");
    let out = run(&c, "NCCL_DEBUG=INFO srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 128 -f 2");
    let lines = infos(&out);
    // Node 0's eight ranks and node 1's first print; one process per GPU.
    let pids: std::collections::BTreeSet<(String, u32)> = lines.iter().map(|l| (l.host.clone(), l.pid)).collect();
    assert_eq!(pids.len(), 9);
    for (host, pid) in &pids {
        let dev = lines.iter().find(|l| &l.host == host && l.pid == *pid).unwrap().dev;
        let rank = of_rank(&lines, host, *pid, dev);
        let main: Vec<&str> = rank.iter().filter(|l| l.tid == *pid).map(|l| l.msg.as_str()).collect();
        // The main thread destroys the communicator when the test ends.
        let (destroy, main) = main.split_last().unwrap();
        assert!(destroy.ends_with(" - Destroy COMPLETE"), "{destroy}");
        let first = lines.iter().position(|l| l.pid == *pid).unwrap() == 0;
        let expected: Vec<String> = if first {
            vec![
                "NCCL_SOCKET_IFNAME set by environment to enp170s0f0np0".into(),
                format!("Bootstrap: Using enp170s0f0np0:{}<0>", if host == "gpu-001" { "10.1.0.2" } else { "10.1.0.3" }),
                "cudaDriverVersion 12080".into(),
                "NCCL version 2.26.2+cuda12.8".into(),
            ]
        } else {
            vec![
                "cudaDriverVersion 12080".into(),
                "NCCL_SOCKET_IFNAME set by environment to enp170s0f0np0".into(),
                format!("Bootstrap: Using enp170s0f0np0:{}<0>", if host == "gpu-001" { "10.1.0.2" } else { "10.1.0.3" }),
                "NCCL version 2.26.2+cuda12.8".into(),
            ]
        };
        assert_eq!(main, expected, "{host}:{pid} main thread");
        // The init thread, phase by phase (NCCL 2.26.2's order).
        let init: Vec<&Info> = rank.iter().copied().filter(|l| l.tid != *pid).collect();
        let r = init.iter().find_map(|l| l.msg.strip_suffix(" - Init START")).and_then(|m| m.split(' ').nth(4)).unwrap().to_string();
        let mut at = 0;
        for step in [
            "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.".to_string(),
            "NCCL_SOCKET_IFNAME set by environment to enp170s0f0np0".into(),
            "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB enp170s0f0np0:".into(),
            "PROFILER/Plugin: Could not find: libnccl-profiler.so. ".into(),
            "Using network IB".into(),
            format!("DMA-BUF is available on GPU device {dev}"),
            "ncclCommInitRank comm 0x".to_string(),
            "RAS client listening socket at ::1<28028>".into(),
            "Bootstrap timings total 0.".into(),
            "MNNVL busId 0x".into(),
            format!("Setting affinity for GPU {dev} to "),
            format!("NVLS multicast support is available on dev {dev}"),
            "comm 0x".to_string(),
            "Trees [0] ".into(),
            "P2P Chunksize set to 131072".into(),
            format!("[Proxy Service] Device {dev} CPU core "),
            format!("[Proxy Service UDS] Device {dev} CPU core "),
            "threadThresholds 8/8/64 | 128/8/64 | 512 | 512".into(),
            "16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer".into(),
            "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.".into(),
            "ncclCommInitRank comm 0x".to_string(),
            format!("Init timings - ncclCommInitRank: rank {r} nranks 16 total "),
            format!("[Proxy Progress] Device {dev} CPU core "),
            "Channel ".into(),
            "Connected all rings, use ring PXN 0 GDR 1".into(),
            "Connected all trees".into(),
        ] {
            at = find(&init, at, &step) + 1;
        }
        assert!(init
            .iter()
            .any(|l| l.msg.starts_with("comm 0x") && l.msg.contains(&format!(" rank {r} nRanks 16 nNodes 2 localRanks 8 localRank {dev} MNNVL 0"))));
    }
    // Rank 0 alone: the P2P type, the rings (2.23+ layout), the work FIFO.
    let rank0: Vec<&str> = lines.iter().filter(|l| l.host == "gpu-001" && l.dev == 0).map(|l| l.msg.as_str()).collect();
    assert!(rank0.contains(&"Check P2P Type intraNodeP2pSupport 1 directMode 0"));
    assert!(rank0.contains(&"CC Off, workFifoBytes 1048576"));
    let rings: Vec<_> = rank0.iter().filter_map(|m| ring_line(m, false, 16)).collect();
    assert_eq!(rings.len(), 16);
    assert_eq!(rank0.iter().filter(|m| m.starts_with("NVLS Head ")).count(), 8);
    // Channel 0 enters each node at the GPU of mlx5_0, which is GPU 1 on this preset.
    assert!(rank0.contains(&"NVLS Head  0:  1  9"));
    assert_eq!(lines.iter().filter(|l| l.msg.starts_with("Check P2P Type") || l.msg.starts_with("CC Off")).count(), 2);
    assert_trees_agree(&lines);
    assert_every_rank_completes(&lines);
    // From 2.22 NCCL connects when the first collective runs: after the
    // table's header, before its first row.
    let text: Vec<&str> = out.lines().collect();
    let header = text.iter().position(|l| l.starts_with("#        (B)")).unwrap();
    let first_row = text.iter().position(|l| l.trim_start().starts_with("8 ")).unwrap();
    let connect: Vec<usize> = text.iter().enumerate().filter(|(_, l)| l.contains("NCCL INFO Channel ") && l.contains("/0 : ")).map(|(i, _)| i).collect();
    assert!(!connect.is_empty() && connect.iter().all(|&i| i > header && i < first_row));
    let init_complete = text.iter().rposition(|l| l.ends_with(" - Init COMPLETE")).unwrap();
    assert!(init_complete < header);
    // Every connection line has the captures' layout, and the rank's own
    // side: what it sends (P2P or the network) and what it receives over it.
    for l in &lines {
        if let Some((_, from, to, how)) = channel_line(&l.msg) {
            let me: usize =
                lines.iter().find(|x| x.pid == l.pid && x.msg.ends_with("Init START")).and_then(|x| x.msg.split(' ').nth(4)).unwrap().parse().unwrap();
            assert!(if how.starts_with("[receive]") { to == me } else { from == me }, "{}", l.msg);
        }
    }
}

#[test]
fn nccl_2_18_prints_its_own_lines() {
    // The A100 preset's NCCL: version by printf, no plugin loader, no
    // comm shape line, rings connected during init over legacy IPC.
    let c = cluster("hgx-a100", &["gpu-001", "gpu-002"], "2.18.5");
    let out = run(&c, "NCCL_DEBUG=INFO srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8");
    assert_eq!(out.lines().filter(|l| *l == "NCCL version 2.18.5+cuda12.2").count(), 1);
    let lines = infos(&out);
    let rank0 = of_rank(&lines, "gpu-001", lines[0].pid, 0);
    let msgs: Vec<&str> = rank0.iter().map(|l| l.msg.as_str()).collect();
    assert_eq!(
        &msgs[..5],
        &[
            "NCCL_SOCKET_IFNAME set by environment to enp170s0f0np0",
            "Bootstrap : Using enp170s0f0np0:10.1.0.2<0>",
            "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory",
            "NET/Plugin : No plugin found, using internal implementation",
            "cudaDriverVersion 12020",
        ]
    );
    let mut at = 0;
    for step in [
        "NCCL_SOCKET_IFNAME set by environment to",
        "NET/IB : Using [0]mlx5_0:1/IB",
        "Using network IB",
        "DMA-BUF is available on GPU device 0",
        "comm 0x",
        "Setting affinity for GPU 0 to ffffffff,ffffffff,00000000,00000000,ffffffff,ffffffff",
        "NVLS multicast support is not available on dev 0",
        "Channel 00/16 :    0",
        "Trees [0] ",
        "P2P Chunksize set to 131072",
        "Channel ",
        "Connected all rings",
        "Connected all trees",
        "threadThresholds 8/8/64 | 128/8/64 | 512 | 512",
        "16 coll channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer",
        "comm 0x",
        "comm 0x",
    ] {
        at = find(&rank0, at, step) + 1;
    }
    assert!(msgs[at - 2].ends_with(" - Init COMPLETE") && !msgs[at - 2].starts_with("ncclCommInitRank"), "{}", msgs[at - 2]);
    assert!(msgs[at - 1].ends_with(" - Destroy COMPLETE"), "{}", msgs[at - 1]);
    assert!(msgs.contains(&"Connected all rings"));
    for absent in ["nNodes", "MNNVL", "CC Off", "TUNER", "Init timings", "[Proxy", "PROFILER", "Bootstrap timings", "RAS "] {
        assert!(!lines.iter().any(|l| l.msg.contains(absent)), "2.18 prints no {absent:?}");
    }
    let p2p: Vec<_> = lines.iter().filter_map(|l| channel_line(&l.msg)).filter(|c| c.3.contains("P2P")).collect();
    assert!(!p2p.is_empty() && p2p.iter().all(|c| c.3 == "via P2P/IPC/read"), "A100s read over NVLink through legacy IPC");
    assert_eq!(lines.iter().filter_map(|l| ring_line(&l.msg, true, 16)).count(), 16);
    // All of it before the results table.
    let text: Vec<&str> = out.lines().collect();
    let header = text.iter().position(|l| l.starts_with("#        (B)")).unwrap();
    let last_init = text.iter().rposition(|l| l.ends_with(" - Init COMPLETE")).unwrap();
    let last_channel = text.iter().rposition(|l| l.contains("NCCL INFO Channel ")).unwrap();
    assert!(last_init < header && last_channel < header);
    assert_every_rank_completes(&lines);
}

#[test]
fn one_process_on_eight_gpus_prints_its_process_lines_once() {
    let c = cluster("hgx-h100", &["node005"], "2.26.2");
    let out = run(&c, "NCCL_DEBUG=INFO all_reduce_perf -b 8 -e 8 -g 8");
    let lines = infos(&out);
    let pid = lines[0].pid;
    assert!(lines.iter().all(|l| l.pid == pid));
    for once in ["Bootstrap: Using", "cudaDriverVersion", "NCCL version", "NET/Plugin", "NET/IB : Using", "PROFILER/Plugin", "RAS client", "TUNER/Plugin"] {
        assert_eq!(lines.iter().filter(|l| l.msg.starts_with(once)).count(), 1, "{once}");
    }
    // nccl-tests 2.14 initialises one process's GPUs with ncclCommInitAll.
    assert_eq!(lines.iter().filter(|l| l.msg.starts_with("ncclCommInitAll comm ") && l.msg.ends_with("Init START")).count(), 8);
    let tids: std::collections::BTreeSet<u32> = lines.iter().filter(|l| l.msg.ends_with("Init START")).map(|l| l.tid).collect();
    assert_eq!(tids.len(), 8, "one init thread per GPU");
    assert!(lines.iter().any(|l| l.msg == "P2P Chunksize set to 524288"));
    assert!(lines.iter().any(|l| l.msg == "Check P2P Type intraNodeP2pSupport 1 directMode 1"));
    assert!(lines.iter().any(|l| l.msg == "24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer"));
    assert!(lines.iter().any(|l| l.msg == "threadThresholds 8/8/64 | 64/8/64 | 512 | 512"));
    let p2p: Vec<_> = lines.iter().filter_map(|l| channel_line(&l.msg)).collect();
    assert!(!p2p.is_empty() && p2p.iter().all(|c| c.3 == "via P2P/direct pointer"));
    assert_eq!(lines.iter().filter(|l| l.msg.starts_with("Channel 00/24 : 0 1 2 3 4 5 6 7")).count(), 1);
    assert_every_rank_completes(&lines);
}

#[test]
fn environment_overrides_print_where_nccl_reads_them_and_take_effect() {
    let c = cluster("hgx-h100", &["gpu-001", "gpu-002"], "2.26.2");
    let out = run(&c, "NCCL_DEBUG=INFO NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_NET_GDR_LEVEL=PHB NCCL_NVLS_ENABLE=0 NCCL_MAX_NCHANNELS=8 NCCL_IB_QPS_PER_CONNECTION=4 srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8");
    let lines = infos(&out);
    let rank0 = of_rank(&lines, "gpu-001", lines[0].pid, 0);
    let mut at = 0;
    for step in [
        "NCCL_IB_HCA set to mlx5_0,mlx5_1",
        "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB",
        "NCCL_NET_GDR_LEVEL set by environment to PHB",
        "Setting affinity",
        "NCCL_NVLS_ENABLE set by environment to 0.",
        "comm 0x",
        "NCCL_MAX_NCHANNELS set by environment to 8.",
        "Channel 00/08 :",
        "NCCL_PROTO set by environment to Simple",
        "NCCL_ALGO set by environment to Ring",
        "8 coll channels, 8 collnet channels, 0 nvls channels, 8 p2p channels, 2 p2p channels per peer",
        "NCCL_IB_QPS_PER_CONNECTION set by environment to 4.",
        "Channel ",
    ] {
        at = find(&rank0, at, step) + 1;
    }
    assert!(!lines.iter().any(|l| l.msg.starts_with("NVLS")), "NVLS is off");
    // Parameters are read once per process; the algorithm once per communicator.
    assert_eq!(lines.iter().filter(|l| l.msg.starts_with("NCCL_NVLS_ENABLE")).count(), 9);
    assert_eq!(lines.iter().filter(|l| l.msg.starts_with("NCCL_ALGO")).count(), 9);
    let bad = run(&c, "NCCL_DEBUG=INFO NCCL_BUFFSIZE=99999999999999999999 srun -N1 --ntasks-per-node=2 all_reduce_perf -b 8 -e 8");
    assert!(bad.contains("NCCL INFO Invalid value 99999999999999999999 for NCCL_BUFFSIZE, using default -2."), "{bad}");
}

#[test]
fn only_nccl_debug_info_prints_the_initialisation() {
    let c = cluster("hgx-h100", &["gpu-001", "gpu-002"], "2.26.2");
    let line = "srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8";
    let quiet = run(&c, line);
    assert!(!quiet.contains("NCCL INFO") && !quiet.contains("NCCL version"), "{quiet}");
    for level in ["VERSION", "WARN"] {
        let out = run(&c, &format!("NCCL_DEBUG={level} {line}"));
        assert!(!out.contains("NCCL INFO"), "{out}");
        assert_eq!(out.lines().filter(|l| *l == "NCCL version 2.26.2+cuda12.8").count(), 1);
    }
    // NCCL_DEBUG_SUBSYS picks subsystems: GRAPH adds the rings per rank, ^INIT drops the init lines.
    let graph = run(&c, &format!("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH {line}"));
    assert!(graph.contains("NCCL INFO Ring 00 : 1 -> 0 -> 7"), "{graph}");
    let no_init = run(&c, &format!("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=^INIT {line}"));
    assert!(!no_init.contains("Init START") && no_init.contains("NCCL INFO NCCL version 2.26.2+cuda12.8") && no_init.contains("NCCL INFO Bootstrap: Using"));
}

#[test]
fn odd_jobs_and_bad_values_still_end_every_rank_with_init_complete() {
    let c = cluster("hgx-h100", &["gpu-001", "gpu-002", "gpu-003"], "2.26.2");
    for line in [
        "NCCL_DEBUG=INFO all_reduce_perf -b 8 -e 8",
        "NCCL_DEBUG=INFO srun -N2 all_reduce_perf -b 8 -e 8",
        "NCCL_DEBUG=INFO srun -N3 --ntasks-per-node=3 all_reduce_perf -b 8 -e 8",
        "NCCL_DEBUG=INFO mpirun -np 5 -H gpu-001:3,gpu-002:2 all_reduce_perf -b 8 -e 8",
        "NCCL_DEBUG=INFO NCCL_MIN_NCHANNELS=100000 NCCL_MAX_NCHANNELS=-4 NCCL_NVLS_NCHANNELS=zz NCCL_BUFFSIZE=1 NCCL_DEBUG_SUBSYS=,^, NCCL_SOCKET_IFNAME=^=, srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8",
        "NCCL_DEBUG=INFO NCCL_IB_HCA=nothing srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8",
    ] {
        let out = run(&c, line);
        let lines = infos(&out);
        if !line.contains("SUBSYS") {
            assert_every_rank_completes(&lines);
            assert_trees_agree(&lines);
        }
    }
    let socket = infos(&run(&c, "NCCL_DEBUG=INFO NCCL_IB_HCA=nothing srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8"));
    assert!(socket.iter().any(|l| l.msg == "NET/IB : No device found."));
    assert!(socket.iter().any(|l| l.msg.starts_with("NET/Socket : Using [0]enp170s0f0np0:")));
    assert!(socket.iter().any(|l| l.msg == "Using network Socket"));
    for version in ["2.19.3", "2.20.5", "2.23.4", "2.24.3", "2.25.1", "2.27.5", "2.28.9", "2.30.7"] {
        let c = cluster("hgx-h100", &["gpu-001", "gpu-002"], version);
        let lines = infos(&run(&c, "NCCL_DEBUG=INFO srun -N2 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8"));
        assert_every_rank_completes(&lines);
        assert_trees_agree(&lines);
    }
}

#[test]
fn large_jobs_print_a_bounded_log() {
    let names: Vec<String> = (0..128).map(|i| format!("n{i:03}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let c = cluster("hgx-h100", &refs, "2.26.2");
    let start = std::time::Instant::now();
    let out = run(&c, "NCCL_DEBUG=INFO srun -N128 --ntasks-per-node=8 all_reduce_perf -b 8 -e 8");
    let lines = infos(&out);
    let starts = lines.iter().filter(|l| l.msg.ends_with("Init START")).count();
    assert_eq!(starts, 8 + 15, "node 0's ranks and the first rank of 15 more nodes");
    assert!(out.len() < 2 << 20, "{} bytes", out.len());
    assert!(start.elapsed().as_secs_f64() < 5.0, "took {:?}", start.elapsed());
    assert_every_rank_completes(&lines);
}
