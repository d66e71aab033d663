//! One node's own view: the kernel log, PCI devices, services, time, memory,
//! disks, CPUs and the network, and the data-centre technician (`dctech`).

pub mod clear;
pub mod curl;
pub mod date;
pub mod dctech;
pub mod df;
pub mod dmesg;
pub mod ethtool;
pub mod free;
pub mod fuser;
pub mod hostname;
pub mod identity;
pub mod ip;
pub mod ipmitool;
pub mod journalctl;
pub mod kill;
pub mod lsblk;
pub mod lscpu;
pub mod lspci;
pub mod man;
pub mod mount;
pub mod netplan;
pub mod node_exporter;
pub mod nproc;
pub mod numactl;
pub mod pci_ids;
pub mod ping;
pub mod ps;
pub mod reboot;
pub mod systemctl;
pub mod uname;
pub mod uptime;
pub mod which;
