//! The shared file system's files, from the model's checkpoints
//! (`model::storage::checkpoints`): each job's directory in Megatron-LM's
//! layout for the `torch_dist` format. A save writes `iter_NNNNNNN/` with
//! `common.pt` first, two `__RANK_N.distcp` shards per rank (the writer's
//! two threads) growing as the save goes on, then `.metadata` and
//! `metadata.json`; only then does `latest_checkpointed_iteration.txt`
//! name it. Shards hold tensors, not text: reading one says so.

use crate::model::storage::{checkpoints, Checkpoint};
use crate::model::time::EpochSeconds;
use crate::model::Cluster;
use crate::rng::Rng;

/// The tracker Megatron rewrites after each complete save.
pub const TRACKER: &str = "latest_checkpointed_iteration.txt";

/// Shards each rank writes (the distributed checkpoint's writer threads).
const SHARDS_PER_RANK: u32 = 2;

/// The backends a `torch_dist` checkpoint records in `metadata.json`.
const METADATA_JSON: &str = r#"{"sharded_backend": "torch_dist", "sharded_backend_version": 1, "common_backend": "torch", "common_backend_version": 1}"#;

/// A file on the shared file system: its size, when it last changed, and
/// its text when it is text (None: tensors).
#[derive(Clone, Debug, PartialEq)]
pub struct SharedFile {
    pub path: String,
    pub bytes: u64,
    pub modified: EpochSeconds,
    pub text: Option<String>,
}

/// What reading a shard says: its bytes are tensors, not emulated.
pub const BINARY: &str = "tensor data is not emulated (try ls -l or du)";

/// Every checkpoint file the cluster's jobs have written by now.
pub fn files(cluster: &Cluster) -> Vec<SharedFile> {
    let mut files = Vec::new();
    let mut newest: Vec<(&str, u32, EpochSeconds)> = Vec::new();
    let saved = checkpoints(cluster);
    for checkpoint in &saved {
        files.extend(checkpoint_files(cluster, checkpoint));
        if let Some(ended) = checkpoint.ended {
            newest.retain(|(dir, ..)| *dir != checkpoint.dir);
            newest.push((&checkpoint.dir, checkpoint.iteration, ended));
        }
    }
    for (dir, iteration, ended) in newest {
        // Megatron writes the number alone, with no newline.
        let text = iteration.to_string();
        files.push(SharedFile { path: format!("{dir}/{TRACKER}"), bytes: text.len() as u64, modified: ended, text: Some(text) });
    }
    files
}

/// The files of one checkpoint's `iter_NNNNNNN/` as far as its save has gone.
fn checkpoint_files(cluster: &Cluster, checkpoint: &Checkpoint) -> Vec<SharedFile> {
    let dir = format!("{}/iter_{:07}", checkpoint.dir, checkpoint.iteration);
    let written_until = checkpoint.ended.unwrap_or(cluster.now);
    let mut rng = Rng::derive(cluster.seed, &["checkpoint", &checkpoint.job]);
    // Rank 0 writes the common state (arguments, iteration, RNG) first.
    let common = 18_000 + rng.range_u64(0, 6_000);
    let mut files = vec![SharedFile { path: format!("{dir}/common.pt"), bytes: common, modified: checkpoint.began + 1, text: None }];
    // Whole tensors go to one shard or another, so shards differ a little
    // in size (the same for every save of the job); together they are the checkpoint.
    let shards = checkpoint.ranks.saturating_mul(SHARDS_PER_RANK).max(1);
    let weights: Vec<f64> = (0..shards).map(|_| 0.97 + 0.06 * rng.unit_f64()).collect();
    let total: f64 = weights.iter().sum();
    for (index, weight) in weights.iter().enumerate() {
        let full = checkpoint.bytes as f64 * weight / total;
        let bytes = (full * checkpoint.written_permille as f64 / 1000.0) as u64;
        let (rank, thread) = (index as u32 / SHARDS_PER_RANK, index as u32 % SHARDS_PER_RANK);
        files.push(SharedFile { path: format!("{dir}/__{rank}_{thread}.distcp"), bytes, modified: written_until, text: None });
    }
    if let Some(ended) = checkpoint.ended {
        // The global metadata: every tensor's shape and where its pieces are.
        let entries = u64::from(checkpoint.layers) * 12 + 4;
        files.push(SharedFile { path: format!("{dir}/.metadata"), bytes: entries * u64::from(checkpoint.ranks) * 180, modified: ended, text: None });
        files.push(SharedFile {
            path: format!("{dir}/metadata.json"),
            bytes: METADATA_JSON.len() as u64,
            modified: ended,
            text: Some(METADATA_JSON.to_string()),
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_is_its_shards_and_its_metadata() {
        let checkpoint = Checkpoint {
            job: "llama3-8b".into(),
            dir: "/lustre/checkpoints/llama3-8b".into(),
            iteration: 500,
            ranks: 16,
            bytes: 112_423_657_472,
            layers: 32,
            began: 1_000,
            ended: Some(1_040),
            written_permille: 1000,
        };
        let cluster = crate::testing::lab().instantiate(1);
        let files = checkpoint_files(&cluster, &checkpoint);
        assert_eq!(files.len(), 1 + 32 + 2);
        assert!(files.iter().any(|f| f.path == "/lustre/checkpoints/llama3-8b/iter_0000500/__15_1.distcp"));
        let shards: u64 = files.iter().filter(|f| f.path.ends_with(".distcp")).map(|f| f.bytes).sum();
        assert!(shards.abs_diff(checkpoint.bytes) < 64, "{shards}");
        // Cut off halfway: half the bytes, and no metadata yet.
        let half = Checkpoint { ended: None, written_permille: 500, ..checkpoint.clone() };
        let files = checkpoint_files(&cluster, &half);
        assert!(!files.iter().any(|f| f.path.ends_with("metadata.json") || f.path.ends_with(".metadata")));
        let shards: u64 = files.iter().filter(|f| f.path.ends_with(".distcp")).map(|f| f.bytes).sum();
        assert!(shards.abs_diff(checkpoint.bytes / 2) < 64, "{shards}");
    }
}
