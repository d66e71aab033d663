//! Schedulers: Slurm's commands and Kubernetes' `kubectl`.

pub mod kubectl;
pub mod slurm;
