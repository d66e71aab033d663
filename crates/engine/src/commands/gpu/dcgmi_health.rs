//! `dcgmi group`, `dcgmi health` and `dcgmi nvlink`, as DCGM 3.3 prints
//! them: the host engine's groups (its two defaults and those an operator
//! makes, which live as long as the engine runs), its tree tables (`+---+` rules, `=` under the headers, children
//! behind `-> ` indented three per level, values wrapped on words), the
//! health watches a `-s` sets and a `-c` checks against the model (an
//! NVLink down, volatile double-bit ECC errors, an uncontained Xid 95),
//! and each GPU's 18 link states and error counters. The node's NVSwitches
//! are not in DCGM's view (its NVSwitch module is not loaded), as on the
//! HGX H100 captures: `None` and `No NvSwitches found.`

use crate::commands::Output;
use crate::model::change::Change;
use crate::model::{Gpu, Node};

/// One row of a tree table: its level (0 top), label and value.
pub struct Row {
    pub level: usize,
    pub label: String,
    pub value: String,
}

fn row(level: usize, label: impl Into<String>, value: impl Into<String>) -> Row {
    Row { level, label: label.into(), value: value.into() }
}

/// DCGM's tree table, `left` and `right` its column widths; the value
/// column wraps on words at 54 characters (health messages).
pub fn tree(left: usize, right: usize, headers: &[String], rows: &[Row]) -> String {
    let rule = |fill: char| format!("+{}+{}+\n", fill.to_string().repeat(left - 1), fill.to_string().repeat(right - 2));
    let mut out = rule('-');
    if !headers.is_empty() {
        for header in headers {
            out += &format!("| {header:<w$}|\n", w = left + right - 3);
        }
        out += &rule('=');
    }
    for r in rows {
        let prefix = if r.level == 0 { String::new() } else { format!("{:>w$}", "-> ", w = r.level * 3) };
        let mut lines = wrap(&r.value, 54).into_iter();
        out += &format!("| {:<lw$} | {:<rw$} |\n", format!("{prefix}{}", r.label), lines.next().unwrap_or_default(), lw = left - 3, rw = right - 4);
        for more in lines {
            out += &format!("| {:<lw$} | {:<rw$} |\n", "", more, lw = left - 3, rw = right - 4);
        }
    }
    out + &rule('-')
}

/// Words to lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// The GPUs DCGM watches on the node, by its GPU ids.
fn gpu_ids(node: &Node) -> Vec<u32> {
    node.gpus.iter().filter(|gpu| gpu.is_visible()).map(|gpu| gpu.index).collect()
}

/// The entities column: `GPU 0, GPU 1`, or `None`.
fn entities(gpus: &[u32]) -> String {
    if gpus.is_empty() {
        return "None".to_string();
    }
    gpus.iter().map(|id| format!("GPU {id}")).collect::<Vec<_>>().join(", ")
}

/// Every group the host engine holds: its own two (all GPUs, all
/// NVSwitches), then the operators', by id.
fn groups(node: &Node) -> Vec<(u32, String, Vec<u32>)> {
    let mut all = vec![(0, "DCGM_ALL_SUPPORTED_GPUS".to_string(), gpu_ids(node)), (1, "DCGM_ALL_SUPPORTED_NVSWITCHES".to_string(), Vec::new())];
    all.extend(node.dcgm_groups.iter().map(|group| (group.id, group.name.clone(), group.gpus.clone())));
    all
}

/// The GPUs of group `id` (DCGM's default group 0 is every GPU), None when
/// the host engine has no such group.
pub fn group_gpus(node: &Node, id: &str) -> Option<Vec<u32>> {
    let id: u32 = id.parse().ok()?;
    groups(node).into_iter().find(|(known, ..)| *known == id).map(|(_, _, gpus)| gpus)
}

/// What `dcgmi group` was asked to do.
#[derive(Default)]
pub struct GroupRequest<'a> {
    pub list: bool,
    pub create: Option<&'a str>,
    pub all_gpus: bool,
    pub delete: Option<&'a str>,
    pub group: Option<&'a str>,
    pub info: bool,
    pub add: Option<&'a str>,
    pub remove: Option<&'a str>,
}

/// Return codes as the shell sees them: DCGM_ST_NOT_CONFIGURED (-5) and
/// DCGM_ST_BADPARAM (-1).
const NOT_FOUND: i32 = 251;
const BAD_PARAMETER: i32 = 255;

/// `dcgmi group -l | -c NAME [--default] [-a IDS] | -d ID | -g ID -i|-a IDS|-r IDS`
/// (DCGM 3.3.9's `dcgmi/Group.cpp` wording).
pub fn group(node: &Node, request: &GroupRequest) -> Output {
    let at = |text: String, status: i32| Output { status, ..Output::ok(text) };
    let not_found = |what: String| at(format!("{what} Return: The Group is not found.\n"), NOT_FOUND);
    if request.list {
        let all = groups(node);
        let mut rows = vec![row(0, "Groups", "")];
        for (id, name, gpus) in &all {
            rows.push(row(1, id.to_string(), ""));
            rows.push(row(2, "Group ID", id.to_string()));
            rows.push(row(2, "Group Name", name.clone()));
            rows.push(row(2, "Entities", entities(gpus)));
        }
        return Output::ok(tree(20, 60, &["GROUPS".to_string(), format!("{} groups found.", all.len())], &rows));
    }
    let visible = gpu_ids(node);
    // The GPU ids a `-a`/`-r` list names, or the first id that is no GPU.
    let parse_ids = |text: &str| -> Result<Vec<u32>, String> {
        text.split(',').map(|id| id.trim().strip_prefix("gpu:").unwrap_or(id.trim()).parse::<u32>().map_err(|_| id.trim().to_string())).collect()
    };
    if let Some(name) = request.create {
        let id = crate::model::node::next_dcgm_group(&node.dcgm_groups, node.dcgm_next_group);
        let mut gpus = if request.all_gpus { visible.clone() } else { Vec::new() };
        let mut text = format!("Successfully created group \"{name}\" with a group ID of {id}\n");
        if let (Some(list), false) = (request.add, request.all_gpus) {
            match parse_ids(list) {
                Ok(ids) if ids.iter().all(|gpu| visible.contains(gpu)) => {
                    gpus = ids;
                    text += "Add to group operation successful.\n";
                }
                _ => text += &format!("\nError: Unable to perform add of GPU {list} into group {id}. Return: Bad parameter passed to function.\nThe GPU was not found or is already in the group.\n"),
            }
        }
        let mut out = Output::ok(text);
        out.changes.push(Change::CreateDcgmGroup { node: node.hostname.clone(), name: name.to_string(), gpus });
        return out;
    }
    if let Some(id) = request.delete {
        return match node.dcgm_groups.iter().find(|group| group.id.to_string() == id) {
            Some(group) => {
                let mut out = Output::ok(format!("Successfully removed group {id}\n"));
                out.changes.push(Change::DeleteDcgmGroup { node: node.hostname.clone(), id: group.id });
                out
            }
            None => not_found(format!("Error: Cannot destroy group {id}.")),
        };
    }
    let Some(id) = request.group else {
        return super::dcgmi::parse_error("group", "One of -l, -c, -d, -i, -a or -r is required");
    };
    if request.info {
        let Some(gpus) = group_gpus(node, id) else { return not_found(format!("Error: Unable to retrieve information about group {id}.")) };
        let name = groups(node).into_iter().find(|(known, ..)| known.to_string() == id).map(|(_, name, _)| name).unwrap_or_default();
        let rows = [row(0, id, ""), row(1, "Group ID", id), row(1, "Group Name", name), row(1, "Entities", entities(&gpus))];
        return Output::ok(tree(20, 60, &["GROUP INFO".to_string()], &rows));
    }
    let (list, adding) = match (request.add, request.remove) {
        (Some(list), _) => (list, true),
        (None, Some(list)) => (list, false),
        (None, None) => return super::dcgmi::parse_error("group", "One of -l, -c, -d, -i, -a or -r is required"),
    };
    let Some(group) = node.dcgm_groups.iter().find(|group| group.id.to_string() == id) else {
        let verb = if adding { "add" } else { "remove" };
        return not_found(format!("\nError: Unable to perform {verb} of GPU {list} {} group {id}.", if adding { "into" } else { "in" }));
    };
    let mut gpus = group.gpus.clone();
    for (at_index, text) in list.split(',').enumerate() {
        let gpu = parse_ids(text).ok().and_then(|ids| ids.first().copied());
        let fits = gpu.filter(|gpu| visible.contains(gpu) && (gpus.contains(gpu) != adding));
        let Some(gpu) = fits else {
            let lead = if at_index == 0 { "" } else { "Operation partially successful." };
            let (verb, preposition, why) = if adding { ("add", "into", "is already in the group") } else { ("remove", "in", "is not part of the group") };
            let mut out = at(
                format!("{lead}\nError: Unable to perform {verb} of GPU {} {preposition} group {id}. Return: Bad parameter passed to function.\nThe GPU was not found or {why}.\n", text.trim()),
                BAD_PARAMETER,
            );
            if at_index > 0 {
                out.changes.push(Change::SetDcgmGroupGpus { node: node.hostname.clone(), id: group.id, gpus });
            }
            return out;
        };
        if adding {
            gpus.push(gpu);
        } else {
            gpus.retain(|known| *known != gpu);
        }
    }
    let mut out = Output::ok(if adding { "Add to group operation successful.\n" } else { "Remove from group operation successful.\n" });
    out.changes.push(Change::SetDcgmGroupGpus { node: node.hostname.clone(), id: group.id, gpus });
    out
}

/// The health systems, in DCGM's bit order, with their names in `-f` and in `-c`.
const SYSTEMS: &[(&str, &str)] = &[
    ("PCIe", "PCIe system"),
    ("NVLINK", "NVLINK system"),
    ("Memory", "Memory system"),
    ("SM", "SM system"),
    ("InfoROM", "InfoROM system"),
    ("Thermal", "Thermal system"),
    ("Power", "Power system"),
    ("Driver", "Driver"),
];

/// `-s`'s letters as DCGM 3.3.9 reads them: p(cie), m(emory), i(nforom),
/// t(hermal and power), n(vlink); `a` (all of those) only alone. A letter
/// given twice or any other is refused.
fn watch_bits(letters: &str) -> Option<u16> {
    if letters == "a" {
        return Some(1 | 2 | 4 | 16 | 32 | 64);
    }
    let mut seen = String::new();
    letters.chars().try_fold(0u16, |bits, letter| {
        if seen.contains(letter) {
            return None;
        }
        seen.push(letter);
        Some(
            bits | match letter {
                'p' => 1,
                'n' => 2,
                'm' => 4,
                'i' => 16,
                't' => 32 | 64,
                _ => return None,
            },
        )
    })
}

/// What one GPU's watched systems report: (system bit, a failure rather
/// than a warning, message). Messages are DCGM's `dcgm_errors.h` text and
/// its next step. Thermal and power report a warning when the GPU spent
/// time throttled for that reason in the last minute (DcgmHealthWatch's
/// violation counters), as a GPU slowed by heat or by its power limit does.
fn incidents(gpu: &Gpu, watches: u16) -> Vec<(u16, bool, String)> {
    let mut found = Vec::new();
    if watches & 4 != 0 && gpu.ecc.volatile_uncorrected > 0 {
        found.push((
            4,
            true,
            format!(
                "Detected {} volatile double-bit ECC error(s) in GPU {}. Drain the GPU and reset it or reboot the node.",
                gpu.ecc.volatile_uncorrected, gpu.index
            ),
        ));
    }
    if watches & 4 != 0 && gpu.xids.contains(&95) && gpu.needs_reset {
        found.push((4, true, "GPU had an uncontained error (XID 95) Drain the GPU and reset it or reboot the node.".to_string()));
    }
    if watches & 2 != 0 {
        for (link, _) in gpu.nvlinks.iter().enumerate().filter(|(_, l)| !l.active) {
            found.push((
                2,
                true,
                format!(
                    "GPU {}'s NvLink link {link} is currently down Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics.",
                    gpu.index
                ),
            ));
        }
    }
    // Clock event reasons: 0x20 SW thermal, 0x40 HW thermal; 0x04 SW power cap, 0x80 HW power brake.
    if watches & 32 != 0 && gpu.throttle_reasons & 0x60 != 0 {
        found.push((
            32,
            false,
            format!(
                "Detected clock throttling due to thermal violation in GPU {}. Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components.",
                gpu.index
            ),
        ));
    }
    if watches & 64 != 0 && gpu.throttle_reasons & 0x84 != 0 {
        found.push((
            64,
            false,
            format!(
                "Detected clock throttling due to power violation in GPU {}. Monitor the power conditions. This GPU can still perform workload.",
                gpu.index
            ),
        ));
    }
    crate::sort::sort_by_key(&mut found, |(bit, _, _)| *bit);
    found
}

/// DCGM's name of a health result.
fn verdict(failure: bool) -> &'static str {
    if failure {
        "Failure"
    } else {
        "Warning"
    }
}

/// `dcgmi health -s LETTERS | -f | -c`.
pub fn health(node: &Node, set: Option<&str>, fetch: bool, check: bool) -> Output {
    if let Some(letters) = set {
        let Some(systems) = watch_bits(letters) else {
            return Output::error("Error: Invalid flags detected for arg set.\nAn error occurred trying to parse the command line.\n", 254);
        };
        let mut out = Output::ok("Health monitor systems set successfully.\n");
        out.changes.push(Change::SetHealthWatches { node: node.hostname.clone(), systems });
        return out;
    }
    let watches = node.health_watches;
    if fetch {
        let rows: Vec<Row> = SYSTEMS
            .iter()
            .enumerate()
            .map(|(bit, (name, _))| row(0, *name, if watches & (1 << bit) != 0 { "On" } else { "Off" }))
            .chain([row(0, "NvSwitch NF", "Off"), row(0, "NvSwitch F", "Off")])
            .collect();
        return Output::ok(format!("Health monitor systems report\n{}", tree(18, 70, &[], &rows)));
    }
    if !check {
        return Output::error("Error: One of --set, --fetch or --check is required.\n", 254);
    }
    if watches == 0 {
        return Output::error("Error: Health watches not enabled. Please enable watches. \n", 253);
    }
    let mut rows = Vec::new();
    // The worst result: None (healthy), Some(false) a warning, Some(true) a failure.
    let mut worst: Option<bool> = None;
    let mut gpu_rows = Vec::new();
    for gpu in node.gpus.iter().filter(|gpu| gpu.is_visible()) {
        let found = incidents(gpu, watches);
        if found.is_empty() {
            continue;
        }
        let failed = found.iter().any(|(_, failure, _)| *failure);
        worst = Some(worst.unwrap_or(false) || failed);
        gpu_rows.push(row(1, gpu.index.to_string(), verdict(failed)));
        gpu_rows.push(row(2, "Errors", ""));
        let mut bits: Vec<u16> = found.iter().map(|(bit, _, _)| *bit).collect();
        bits.dedup();
        for bit in bits {
            let name = SYSTEMS.get(bit.trailing_zeros() as usize).map_or("Internal error", |(_, name)| name);
            let of_system: Vec<&(u16, bool, String)> = found.iter().filter(|(b, _, _)| *b == bit).collect();
            let text: Vec<&str> = of_system.iter().map(|(_, _, t)| t.as_str()).collect();
            gpu_rows.push(row(3, name, verdict(of_system.iter().any(|(_, failure, _)| *failure))));
            // The message sits under its system, with no label of its own.
            gpu_rows.push(row(0, "", text.join(", ")));
        }
    }
    rows.push(row(0, "Overall Health", worst.map_or("Healthy", verdict)));
    if worst.is_some() {
        rows.push(row(0, "GPU", ""));
        rows.extend(gpu_rows);
    }
    Output::ok(tree(28, 60, &["Health Monitor Report".to_string()], &rows))
}

/// `dcgmi nvlink -s`: every GPU's 18 link states.
pub fn nvlink_status(node: &Node) -> Output {
    let mut out = String::from("+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n");
    let gpus: Vec<&Gpu> = node.gpus.iter().filter(|gpu| gpu.is_visible()).collect();
    if gpus.is_empty() {
        out += "    No GPUs found.\n";
    }
    for gpu in gpus {
        let states: Vec<&str> = (0..18).map(|link| gpu.nvlinks.get(link).map_or("_", |l| if l.active { "U" } else { "D" })).collect();
        out += &format!("    gpuId {}:\n        {}\n", gpu.index, states.join(" "));
    }
    out += "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n";
    Output::ok(out)
}

/// `dcgmi nvlink -e -g GPU`: each link's error counters.
pub fn nvlink_errors(node: &Node, gpu: Option<&str>) -> Output {
    let Some(id) = gpu else {
        return Output::error("Error: GPU ID is required (--gpuid) for arg errors.\nAn error occurred trying to parse the command line.\n", 254);
    };
    let Some(found) = id.parse::<u32>().ok().and_then(|id| node.gpus.iter().find(|g| g.index == id && g.is_visible())) else {
        return Output::error(format!("Error: Unable to get the NvLink link status from DCGM for GPU {id}. Return: Bad parameter passed to function.\n"), 255);
    };
    let mut rows = Vec::new();
    for (index, link) in found.nvlinks.iter().enumerate() {
        rows.push(row(0, format!("Link {index}"), ""));
        rows.push(row(1, "CRC FLIT Error", link.crc_errors.to_string()));
        rows.push(row(1, "CRC Data Error", "0"));
        rows.push(row(1, "Replay Error", link.replay_errors.to_string()));
        rows.push(row(1, "Recovery Error", link.recovery_errors.to_string()));
    }
    Output::ok(tree(30, 50, &["NVLINK Error Counts".to_string(), format!("GPU {}", found.index)], &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_lays_out_as_dcgm_does() {
        let table = tree(28, 60, &["Health Monitor Report".to_string()], &[row(0, "Overall Health", "Healthy")]);
        assert_eq!(
            table,
            "+---------------------------+----------------------------------------------------------+\n\
             | Health Monitor Report                                                                |\n\
             +===========================+==========================================================+\n\
             | Overall Health            | Healthy                                                  |\n\
             +---------------------------+----------------------------------------------------------+\n"
        );
        let nested = tree(20, 60, &[], &[row(2, "Group ID", "0")]);
        assert!(nested.contains("\n|    -> Group ID    | 0                                                        |\n"), "{nested}");
    }

    #[test]
    fn groups_are_made_filled_shown_and_removed_while_the_engine_runs() {
        let mut shell = crate::testing::session();
        assert_eq!(shell.run("dcgmi group -c training").stdout(), "Successfully created group \"training\" with a group ID of 2\n");
        assert_eq!(shell.run("dcgmi group -g 2 -a 0,1").stdout(), "Add to group operation successful.\n");
        let info = shell.run("dcgmi group -g 2 -i").stdout();
        assert!(
            info.contains("| GROUP INFO ") && info.contains("| -> Group Name     | training ") && info.contains("| -> Entities       | GPU 0, GPU 1 "),
            "{info}"
        );
        let again = shell.run("dcgmi group -g 2 -a 1");
        assert_eq!(again.status, 255);
        assert!(again.stdout().contains("Error: Unable to perform add of GPU 1 into group 2. Return: Bad parameter passed to function.\nThe GPU was not found or is already in the group.\n"));
        let listed = shell.run("dcgmi group -l").stdout();
        assert!(listed.contains("| 3 groups found. ") && listed.contains("|    -> Group Name  | training "), "{listed}");
        assert_eq!(shell.run("dcgmi group -c all --default").stdout(), "Successfully created group \"all\" with a group ID of 3\n");
        assert!(shell.run("dcgmi group -g 3 -i").stdout().contains("GPU 0, GPU 1, GPU 2, GPU 3, GPU 4, GPU 5, GPU 6, GPU 7"));
        assert_eq!(shell.run("dcgmi group -d 2").stdout(), "Successfully removed group 2\n");
        let gone = shell.run("dcgmi group -d 2");
        assert_eq!((gone.status, gone.stdout()), (251, "Error: Cannot destroy group 2. Return: The Group is not found.\n".to_string()));
        // Ids are not reused while the engine runs; a restart forgets the groups.
        assert!(shell.run("dcgmi group -c next").stdout().ends_with("group ID of 4\n"));
        shell.run("sudo systemctl restart nvidia-dcgm");
        assert!(shell.run("dcgmi group -l").stdout().contains("| 2 groups found. "));
        assert!(shell.run("dcgmi group -c fresh").stdout().ends_with("group ID of 2\n"));
    }

    #[test]
    fn subsystem_help_is_dcgms_own_and_needs_no_engine() {
        let help = crate::testing::run_on_first_node("dcgmi group -h");
        assert_eq!(help.status, 0);
        assert!(help.stdout.starts_with("\n group -- Used to create and maintain groups of GPUs."), "{}", help.stdout);
        assert!(help.stdout.contains("\n   dcgmi group --host <IP/FQDN> -l -j \n"), "trailing space kept: {}", help.stdout);
        assert!(crate::testing::run_on_first_node("dcgmi health --help")
            .stdout
            .contains("  -s  --set        flags      Set the watches to be monitored. [default = pm] \n"));
        assert_eq!(crate::testing::run_on_first_node("dcgmi health -s pw").status, 254, "no w in DCGM 3.3's letters");
        assert_eq!(crate::testing::run_on_first_node("dcgmi health -s pp").status, 254, "a letter twice");
        let mut shell = crate::testing::session();
        shell.run("sudo systemctl stop nvidia-dcgm");
        assert!(shell.run("dcgmi diag -h").stdout().contains("Usage: dcgmi diag"));
    }

    #[test]
    fn heat_warns_and_a_dead_link_fails() {
        use crate::model::fault::Fault;
        let mut cluster = crate::testing::cluster();
        Fault::GpuThermalSlowdown { node: "gpu-001".into(), gpu: 3 }.apply(&mut cluster).unwrap();
        let mut shell = crate::testing::shell(cluster.clone());
        assert_eq!(shell.run("dcgmi health -c").status, 253, "no watches yet");
        let report = shell.run("dcgmi health -s a && dcgmi health -c").stdout();
        assert!(report.contains("| Overall Health            | Warning "), "{report}");
        assert!(
            report.contains("-> Thermal system   | Warning ") && report.contains("| Detected clock throttling due to thermal violation in    |"),
            "{report}"
        );
        assert!(!report.contains("Failure"), "{report}");
        Fault::NvlinkDown { node: "gpu-001".into(), gpu: 5, links: vec![1] }.apply(&mut cluster).unwrap();
        let report = crate::testing::shell(cluster).run("dcgmi health -s a && dcgmi health -c").stdout();
        assert!(report.contains("| Overall Health            | Failure "), "{report}");
        assert!(report.contains("Warning") && report.contains("Failure"), "{report}");
    }
}
