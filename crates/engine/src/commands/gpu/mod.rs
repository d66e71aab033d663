//! GPU tools: NVIDIA's `nvidia-smi` and DCGM's `dcgmi`.

pub mod dcgm_exporter;
pub mod dcgm_fields;
pub mod dcgmi;
pub mod dcgmi_dmon;
pub mod dcgmi_health;
pub mod dcgmi_help;
pub mod nvidia_smi;
