//! The InfiniBand and RoCE fabric: rdma-core and infiniband-diags state
//! tools, NVIDIA's `mlxlink`, and the perftest bandwidth and latency tests.

pub mod discovery;
pub mod ib_common;
pub mod ibdev2netdev;
pub mod ibdiagnet;
pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod ibportstate;
pub mod ibqueryerrors;
pub mod ibstat;
pub mod ibstatus;
pub mod ibswitches;
pub mod ibtracert;
pub mod ibv_devices;
pub mod ibv_devinfo;
pub mod mlnx_qos;
pub mod mlxlink;
pub mod perfquery;
pub mod perftest;
pub mod rdma;
pub mod roce;
pub mod saquery;
pub mod show_gids;
pub mod sminfo;
