//! Schedulers: Slurm's commands and Kubernetes' `kubectl`, and the log a
//! lab's training job writes under srun.

pub mod go_template;
pub mod job_log;
pub mod kubectl;
pub mod kubectl_pods;
pub mod kubectl_print;
pub mod serving_log;
pub mod slurm;
