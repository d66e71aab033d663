//! A node's file system as the shell and the file tools see it: the files
//! the trainee wrote (kept in the model, `Node::files`) and read-only files
//! generated from the model (`/etc`, `/proc/driver/nvidia`,
//! `/sys/class/infiniband`, `/sys/class/net`, `/var/log`), in `generated`.
//! A generated file is a view: it says what the tool that reads the same
//! fact says (`ibstatus` reads its port files from here, as the real
//! script reads sysfs). The shared file system (`/lustre`) holds the jobs'
//! checkpoints, the same on every node (`shared`).

pub mod generated;
pub mod shared;

use std::borrow::Cow;

use crate::model::change::Change;
use crate::model::node::HOME;
use crate::model::time::EpochSeconds;
use crate::model::{Cluster, Node};

pub use generated::port_file;

/// The largest file a trainee may write, and how many files one node keeps.
pub const MAX_FILE_BYTES: usize = 1 << 20;
pub const MAX_FILES_PER_NODE: usize = 256;

/// root's home (`sudo -i` starts there).
pub const ROOT_HOME: &str = "/root";

/// Where the trainee may write: their home and /tmp, and as root root's
/// home and the network configuration (`model::network::NETPLAN_FILE`).
fn writable(path: &str, root: bool) -> bool {
    let under = |dir: &str| path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'));
    under(HOME) || path.starts_with("/tmp/") || under(RULES) || (root && (under(ROOT_HOME) || under("/etc/netplan")))
}

/// Directories every node has, beyond those that hold a generated or written file.
const DIRECTORIES: &[&str] = &[
    "/",
    "/dev",
    "/etc",
    "/home",
    HOME,
    "/lustre",
    CHECKPOINTS,
    "/lustre/monitoring",
    RULES,
    "/proc",
    "/proc/driver",
    "/root",
    "/sys",
    "/sys/class",
    "/tmp",
    "/var",
    "/var/log",
];

/// Where the cluster's Prometheus reads its rule files: the operators'
/// group (`adm`) writes them, as a monitoring team's shared directory.
pub const RULES: &str = crate::model::storage::RULES_DIR;

/// Where the jobs keep their checkpoints: open to every user, as scratch is.
const CHECKPOINTS: &str = "/lustre/checkpoints";

/// What a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    CharDevice,
}

/// A file's inode, as `stat` and `ls -l` show it.
#[derive(Clone, Debug)]
pub struct Metadata {
    pub path: String,
    pub kind: Kind,
    pub size: u64,
    /// Permission bits, with the sticky bit.
    pub mode: u32,
    pub owner: &'static str,
    pub group: &'static str,
    pub inode: u64,
    pub modified: EpochSeconds,
    /// On a kernel file system (procfs, sysfs, devtmpfs): no birth time.
    pub kernel: bool,
    /// A device's major and minor numbers.
    pub device: Option<(u32, u32)>,
}

impl Metadata {
    /// `-rw-r--r--`, `drwxrwxrwt`, `crw-rw-rw-`.
    pub fn mode_string(&self) -> String {
        let mut text = String::from(match self.kind {
            Kind::File => '-',
            Kind::Directory => 'd',
            Kind::CharDevice => 'c',
        });
        for shift in [6, 3, 0] {
            let bits = (self.mode >> shift) & 7;
            text.push(if bits & 4 != 0 { 'r' } else { '-' });
            text.push(if bits & 2 != 0 { 'w' } else { '-' });
            let execute = bits & 1 != 0;
            text.push(match (shift, self.mode & 0o1000 != 0, execute) {
                (0, true, true) => 't',
                (0, true, false) => 'T',
                (_, _, true) => 'x',
                _ => '-',
            });
        }
        text
    }

    pub fn uid(&self) -> u32 {
        match self.owner {
            "user" => 1000,
            "syslog" => 104,
            _ => 0,
        }
    }

    pub fn gid(&self) -> u32 {
        match self.group {
            "user" => 1000,
            "adm" => 4,
            _ => 0,
        }
    }

    /// `stat`'s `%F`.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::File if self.size == 0 => "regular empty file",
            Kind::File => "regular file",
            Kind::Directory => "directory",
            Kind::CharDevice => "character special file",
        }
    }
}

/// One node's files, read from a working directory.
pub struct View<'a> {
    cluster: &'a Cluster,
    node: Option<&'a Node>,
    cwd: &'a str,
    /// Whether the one looking is root (who may also write in /root).
    root: bool,
    /// The generated files' paths, worked out once per view: a walk
    /// (`find`, `ls -R`) asks for every entry whether it is a directory.
    generated: std::cell::OnceCell<Vec<String>>,
    /// The shared file system's files, worked out once per view.
    shared: std::cell::OnceCell<Vec<shared::SharedFile>>,
}

impl<'a> View<'a> {
    pub fn new(cluster: &'a Cluster, host: &str, cwd: &'a str) -> View<'a> {
        View { cluster, node: cluster.node(host), cwd, root: false, generated: Default::default(), shared: Default::default() }
    }

    pub fn of(cluster: &'a Cluster, node: &'a Node, cwd: &'a str) -> View<'a> {
        View { cluster, node: Some(node), cwd, root: false, generated: Default::default(), shared: Default::default() }
    }

    /// The same files, seen by root or not.
    pub fn as_root(self, root: bool) -> View<'a> {
        View { root, ..self }
    }

    /// The files a command sees: its node's, relative paths from the shell's
    /// working directory.
    pub fn for_command(invocation: &crate::commands::Invocation<'a>) -> View<'a> {
        let cwd = invocation.env.get("PWD").map_or("/", String::as_str);
        View::of(invocation.cluster, invocation.node, cwd).as_root(crate::commands::is_root(invocation.env))
    }

    /// `2026-03-09 08:40:00.000000000 +0000`: a file's time as `stat` and
    /// `diff -u` print it (the lab's clock is UTC, in whole seconds).
    pub fn full_time(at: EpochSeconds) -> String {
        let c = crate::model::time::civil(at);
        format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.000000000 +0000", c.year, c.month, c.day, c.hour, c.minute, c.second)
    }

    /// An absolute, normalised path (`.`, `..` and repeated `/` resolved).
    pub fn resolve(&self, path: &str) -> String {
        let joined = if path.starts_with('/') { path.to_string() } else { format!("{}/{path}", self.cwd) };
        let mut parts: Vec<&str> = Vec::new();
        for part in joined.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                part => parts.push(part),
            }
        }
        format!("/{}", parts.join("/"))
    }

    /// The text of the file at `path`, or the reason there is none
    /// (`No such file or directory`, `Is a directory`).
    pub fn read(&self, path: &str) -> Result<Cow<'a, str>, &'static str> {
        let path = self.resolve(path);
        if !self.reachable(&path) {
            return Err("Permission denied");
        }
        if let Some(text) = self.node.and_then(|node| node.files.get(&path)) {
            if !self.permits(&path, Kind::File, 4) {
                return Err("Permission denied");
            }
            return Ok(Cow::Borrowed(text.as_str()));
        }
        if let Some(text) = self.generated(&path) {
            return Ok(Cow::Owned(text));
        }
        if let Some(file) = self.shared_file(&path) {
            return file.text.clone().map(Cow::Owned).ok_or(shared::BINARY);
        }
        if self.is_directory(&path) {
            return Err("Is a directory");
        }
        Err("No such file or directory")
    }

    /// None when nothing is at `path`; Some(true) for a directory.
    pub fn kind(&self, path: &str) -> Option<bool> {
        let path = self.resolve(path);
        if self.is_directory(&path) {
            return Some(true);
        }
        let written = self.node.is_some_and(|node| node.files.contains_key(&path));
        (written || self.shared_file(&path).is_some() || self.generated(&path).is_some()).then_some(false)
    }

    /// The names in a directory, sorted, with whether each is a directory.
    pub fn list(&self, dir: &str) -> Option<Vec<(String, bool)>> {
        let dir = self.resolve(dir);
        if !self.is_directory(&dir) || !self.listable(&dir) {
            return None;
        }
        let prefix = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
        // One pass over every path (files, and the fixed directories): a
        // name is a directory when some path goes on below it.
        let mut names: std::collections::BTreeMap<String, bool> = std::collections::BTreeMap::new();
        let fixed = DIRECTORIES.iter().map(|d| (d.to_string(), true));
        for (path, is_dir) in self.all_paths().into_iter().map(|p| (p, false)).chain(fixed) {
            if let Some(rest) = path.strip_prefix(&prefix) {
                if rest.is_empty() {
                    continue;
                }
                let (name, below) = match rest.split_once('/') {
                    Some((name, _)) => (name, true),
                    None => (rest, is_dir),
                };
                *names.entry(name.to_string()).or_insert(false) |= below;
            }
        }
        Some(names.into_iter().collect())
    }

    /// What `stat` says of the file at `path`; None when there is nothing.
    pub fn metadata(&self, path: &str) -> Option<Metadata> {
        let path = self.resolve(path);
        let device = if path.starts_with("/dev/") { self.node.and_then(|node| generated::devices(node).into_iter().find(|d| d.path == path)) } else { None };
        let kind = if device.is_some() {
            Kind::CharDevice
        } else if self.kind(&path)? {
            Kind::Directory
        } else {
            Kind::File
        };
        let written = self.node.is_some_and(|node| node.files.contains_key(&path));
        let kernel = path.starts_with("/proc") || path.starts_with("/sys") || path.starts_with("/dev");
        let size = match kind {
            Kind::CharDevice => 0,
            // procfs reports no sizes; sysfs one page per attribute.
            Kind::Directory if path.starts_with("/proc") => 0,
            Kind::Directory => 4096,
            Kind::File if path.starts_with("/proc") => 0,
            Kind::File if path.starts_with("/sys") && !written => 4096,
            Kind::File => match self.shared_file(&path) {
                Some(file) => file.bytes,
                // Its size, whoever looks: what reading it would give.
                None => self.node.and_then(|node| node.files.get(&path)).map(String::len).or_else(|| self.generated(&path).map(|text| text.len())).unwrap_or(0)
                    as u64,
            },
        };
        let (mode, owner, group) = self.access(&path, kind, device.as_ref().map(|device| device.mode));
        let inode = crate::rng::stable_hash(path.as_bytes()) % 4_000_000 + 1_000;
        let device = device.map(|device| (device.major, device.minor));
        Some(Metadata { path: path.clone(), kind, size, mode, owner, group, inode, modified: self.modified(&path), kernel, device })
    }

    /// A file's permission bits, owner and group.
    fn access(&self, path: &str, kind: Kind, device_mode: Option<u32>) -> (u32, &'static str, &'static str) {
        let written = self.node.is_some_and(|node| node.files.contains_key(path));
        let kernel = path.starts_with("/proc") || path.starts_with("/sys") || path.starts_with("/dev");
        let checkpoint = path.strip_prefix(CHECKPOINTS).is_some_and(|rest| rest.starts_with('/'));
        let user_owned = path.starts_with(HOME) || (written && (path.starts_with("/tmp/") || path.starts_with(RULES))) || checkpoint;
        let mode = match kind {
            Kind::CharDevice => device_mode.unwrap_or(0o666),
            Kind::Directory if path == "/tmp" || path == CHECKPOINTS => 0o1777,
            Kind::Directory if path == RULES => 0o2775,
            // What a job writes, with Ubuntu's umask for users (002).
            Kind::Directory if checkpoint => 0o775,
            Kind::Directory if path == HOME => 0o750,
            Kind::Directory if path == ROOT_HOME => 0o700,
            Kind::Directory => 0o755,
            Kind::File if user_owned => 0o664,
            Kind::File if path.starts_with("/var/log/") => 0o640,
            Kind::File if kernel => 0o444,
            Kind::File => 0o644,
        };
        let owner = if user_owned {
            "user"
        } else if path.starts_with("/var/log/") {
            "syslog"
        } else {
            "root"
        };
        // syslog and kern.log belong to group adm, as rsyslog leaves them.
        let group = if user_owned {
            "user"
        } else if path.starts_with("/var/log/") {
            "adm"
        } else {
            "root"
        };
        (mode, owner, group)
    }

    /// Whether the one looking may do `want` (4 read, 1 search) to `path`:
    /// root may do anything; the user (in the groups `user`, `adm` and
    /// `sudo`) as the bits of its class say.
    fn permits(&self, path: &str, kind: Kind, want: u32) -> bool {
        if self.root {
            return true;
        }
        let (mode, owner, group) = self.access(path, kind, None);
        let bits = if owner == crate::model::node::USER {
            mode >> 6
        } else if crate::model::node::GROUPS.iter().any(|(_, name)| *name == group) {
            mode >> 3
        } else {
            mode
        };
        bits & want == want
    }

    /// Whether every directory on the way to `path` (absolute) may be searched.
    pub fn reachable(&self, path: &str) -> bool {
        let mut at = 0;
        while let Some(slash) = path[at + 1..].find('/') {
            let dir = &path[..at + 1 + slash];
            if !self.permits(if dir.is_empty() { "/" } else { dir }, Kind::Directory, 1) {
                return false;
            }
            at += 1 + slash;
        }
        true
    }

    /// Why nothing is found at `path`: a directory on the way that may not
    /// be searched, or nothing there.
    pub fn missing_reason(&self, path: &str) -> &'static str {
        if self.reachable(&self.resolve(path)) {
            "No such file or directory"
        } else {
            "Permission denied"
        }
    }

    /// Whether the directory at `path` may be listed: reached, read and searched.
    pub fn listable(&self, path: &str) -> bool {
        let path = self.resolve(path);
        self.reachable(&path) && self.permits(&path, Kind::Directory, 5)
    }

    /// Its hard links, as `stat` and `ls -l` count them: a directory has
    /// its entry, its `.` and each subdirectory's `..`.
    pub fn links(&self, meta: &Metadata) -> usize {
        match meta.kind {
            Kind::Directory => 2 + self.list(&meta.path).map_or(0, |names| names.iter().filter(|(_, dir)| *dir).count()),
            _ => 1,
        }
    }

    /// When the file at `path` last changed (simulated UTC seconds): a
    /// written file when it was last written, a kernel file (`/proc`,
    /// `/sys`, `/dev`) now, a log when its last entry came, the rest when
    /// the node was installed (two weeks before it last booted).
    pub fn modified(&self, path: &str) -> EpochSeconds {
        let path = self.resolve(path);
        let Some(node) = self.node else { return self.cluster.now };
        let written = self.cluster.changes().iter().rev().find_map(|(at, change)| match change {
            Change::WriteFile { node: host, path: p, .. } if *host == node.hostname && *p == path => Some(*at),
            _ => None,
        });
        if let Some(at) = written {
            return at;
        }
        if let Some(file) = self.shared_file(&path) {
            return file.modified;
        }
        if path.starts_with(&format!("{CHECKPOINTS}/")) {
            // A directory changes when an entry is written into it.
            let prefix = format!("{path}/");
            return self.shared_files().iter().filter(|file| file.path.starts_with(&prefix)).map(|file| file.modified).max().unwrap_or(node.booted_at);
        }
        if ["/proc/", "/sys/", "/dev/"].iter().any(|root| path.starts_with(root)) || node.files.contains_key(&path) {
            return self.cluster.now;
        }
        if path.starts_with("/var/log/") {
            // The last entry: the newest kernel line, or Fabric Manager's last start or stop.
            let kernel = node.kernel_log.last().map_or(node.booted_at, |line| node.booted_at + (line.uptime_us / 1_000_000) as i64);
            return self.cluster.now.min(kernel.max(node.fabric_manager_since));
        }
        // Installed two weeks before the node last booted.
        node.booted_at - 14 * 86_400
    }

    /// Whether the trainee may write `path` (absolute).
    /// The change a write of `text` to a kernel attribute (`path` under
    /// /sys that takes writes, root's alone) makes, or the error the write
    /// gets; None when `path` is no such attribute.
    pub fn attribute_write(&self, path: &str, text: &str) -> Option<Result<crate::model::change::Change, &'static str>> {
        generated::attribute_write(self.node?, path, text)
    }

    pub fn is_attribute(&self, path: &str) -> bool {
        self.attribute_write(path, "1").is_some()
    }

    pub fn check_writable(&self, path: &str) -> Result<(), &'static str> {
        if self.is_directory(path) {
            return Err("Is a directory");
        }
        if !writable(path, self.root) {
            return Err("Permission denied");
        }
        let parent = &path[..path.rfind('/').unwrap_or(0).max(1)];
        if !self.is_directory(parent) {
            return Err("No such file or directory");
        }
        Ok(())
    }

    /// Whether `bytes` more fit in the file at `path`.
    pub fn check_room(&self, path: &str, bytes: usize, append: bool) -> Result<(), &'static str> {
        let files = self.node.map(|node| &node.files);
        let existing = files.and_then(|files| files.get(path)).map_or(0, String::len);
        let size = if append { existing + bytes } else { bytes };
        let new_file = files.is_some_and(|files| !files.contains_key(path));
        if size > MAX_FILE_BYTES || (new_file && files.is_some_and(|files| files.len() >= MAX_FILES_PER_NODE)) {
            return Err("No space left on device");
        }
        Ok(())
    }

    fn is_directory(&self, path: &str) -> bool {
        if DIRECTORIES.contains(&path) {
            return true;
        }
        let prefix = format!("{path}/");
        let written = self.node.is_some_and(|node| node.files.keys().any(|p| p.starts_with(&prefix)));
        written || self.generated_paths().iter().any(|p| p.starts_with(&prefix)) || self.shared_files().iter().any(|file| file.path.starts_with(&prefix))
    }

    /// Every file's path: written and generated.
    fn all_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.node.map(|node| node.files.keys().cloned().collect()).unwrap_or_default();
        paths.extend(self.generated_paths().iter().cloned());
        paths.extend(self.shared_files().iter().map(|file| file.path.clone()));
        paths
    }

    fn shared_files(&self) -> &[shared::SharedFile] {
        self.shared.get_or_init(|| shared::files(self.cluster))
    }

    fn shared_file(&self, path: &str) -> Option<&shared::SharedFile> {
        if !path.starts_with("/lustre/") {
            return None;
        }
        self.shared_files().iter().find(|file| file.path == path)
    }

    fn generated_paths(&self) -> &[String] {
        self.generated.get_or_init(|| self.node.map(|node| generated::paths(self.cluster, node)).unwrap_or_default())
    }

    fn generated(&self, path: &str) -> Option<String> {
        generated::text(self.cluster, self.node?, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::lab;

    #[test]
    fn paths_resolve_and_list() {
        let cluster = lab().instantiate(1);
        let view = View::new(&cluster, "gpu-001", "/home/user");
        assert_eq!(view.resolve("../user/./notes"), "/home/user/notes");
        assert_eq!(view.resolve("/tmp//x/.."), "/tmp");
        assert_eq!(view.read("/etc/hostname").unwrap(), "gpu-001\n");
        assert_eq!(view.read("/etc"), Err("Is a directory"));
        assert_eq!(view.read("nope"), Err("No such file or directory"));
        let ports = view.list("/sys/class/infiniband/mlx5_0/ports/1").unwrap();
        assert!(ports.contains(&("rate".to_string(), false)), "{ports:?}");
        assert!(view.list("/sys/class/infiniband").unwrap().iter().all(|(_, dir)| *dir));
        assert_eq!(view.check_writable("/etc/x"), Err("Permission denied"));
        assert_eq!(view.check_writable("/home/user/x"), Ok(()));
        assert_eq!(view.check_writable("/home/user/no/x"), Err("No such file or directory"));
    }

    #[test]
    fn a_user_is_refused_roots_home_as_ubuntu_refuses_it() {
        let mut shell = crate::testing::session();
        let ls = shell.run("ls /root");
        assert_eq!((ls.stderr(), ls.status), ("ls: cannot open directory '/root': Permission denied\n".to_string(), 2));
        assert_eq!(shell.run("cat /root/.bashrc").stderr(), "cat: /root/.bashrc: Permission denied\n");
        assert_eq!(shell.run("stat /root/x").stderr(), "stat: cannot stat '/root/x': Permission denied\n");
        let du = shell.run("du -s /root");
        assert_eq!((du.stdout(), du.stderr(), du.status), ("4\t/root\n".to_string(), "du: cannot read directory '/root': Permission denied\n".to_string(), 1));
        assert_eq!(shell.run("find /root").stderr(), "find: \u{2018}/root\u{2019}: Permission denied\n");
        // The shell's glob finds nothing it may not read: the word stays.
        assert_eq!(shell.run("echo /root/*").stdout(), "/root/*\n");
        // Root reads it; the user's own home and the logs (group adm) stay readable.
        let sudo = shell.run("sudo ls -a /root");
        assert_eq!((sudo.stdout(), sudo.status), (".\n..\n".to_string(), 0));
        assert_eq!(shell.run("ls -d ~").status, 0);
        assert_eq!(shell.run("head -c 3 /var/log/syslog").status, 0);
    }
}
