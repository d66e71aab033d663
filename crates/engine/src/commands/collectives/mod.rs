//! Collectives: the nccl-tests programs and the launchers that start them
//! across nodes (`srun`'s job steps, Open MPI's `mpirun`).

pub mod launch;
mod nccl_init;
pub mod nccl_tests;
