//! Where each program is installed on the node image (Ubuntu 22.04, merged
//! /usr), for `which`, `type` and `command -v`: one table, so that every
//! tool names the same file.

/// infiniband-diags and the system administration programs live in /usr/sbin.
const SBIN: &[&str] = &[
    "ibdiagnet",
    "ibhosts",
    "iblinkinfo",
    "ibnetdiscover",
    "ibportstate",
    "ibqueryerrors",
    "ibstat",
    "ibstatus",
    "ibswitches",
    "ip",
    "netplan",
    "perfquery",
    "reboot",
    "shutdown",
    "sminfo",
];

/// What the site built or installed itself: nccl-tests, its own tools.
const LOCAL_BIN: &[&str] =
    &["all_gather_perf", "all_reduce_perf", "alltoall_perf", "broadcast_perf", "dctech", "reduce_perf", "reduce_scatter_perf", "sendrecv_perf"];

/// The directory `name` is installed in.
pub fn directory(name: &str) -> &'static str {
    if SBIN.contains(&name) {
        "/usr/sbin"
    } else if LOCAL_BIN.contains(&name) {
        "/usr/local/bin"
    } else {
        "/usr/bin"
    }
}

/// The program's file, `/usr/bin/nvidia-smi`.
pub fn path(name: &str) -> String {
    format!("{}/{name}", directory(name))
}

/// The program `name` as a lookup through `$PATH` finds it: None when it is
/// no program, or its directory is not on the path.
pub fn lookup(name: &str, search_path: &str) -> Option<String> {
    lookup_all(name, search_path).into_iter().next()
}

/// Every entry of `$PATH` that holds `name` (`which -a`).
pub fn lookup_all(name: &str, search_path: &str) -> Vec<String> {
    if super::find(name).is_none() {
        return Vec::new();
    }
    let directory = directory(name);
    // /bin and /sbin are links to /usr/bin and /usr/sbin.
    let holds = |entry: &str| entry == directory || (entry.matches('/').count() == 1 && format!("/usr{entry}") == directory);
    search_path.split(':').filter(|entry| holds(entry)).map(|entry| format!("{entry}/{name}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_where_the_image_installs_them() {
        let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        assert_eq!(lookup("nvidia-smi", path).as_deref(), Some("/usr/bin/nvidia-smi"));
        assert_eq!(lookup("ibstat", path).as_deref(), Some("/usr/sbin/ibstat"));
        assert_eq!(lookup("all_reduce_perf", path).as_deref(), Some("/usr/local/bin/all_reduce_perf"));
        assert_eq!(lookup("ibstat", "/bin:/sbin").as_deref(), Some("/sbin/ibstat"));
        assert_eq!(lookup("ibstat", "/usr/bin").as_deref(), None);
        assert_eq!(lookup("cd", path), None);
    }
}
