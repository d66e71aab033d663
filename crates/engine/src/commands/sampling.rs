//! Tools that read the model at intervals: `nvidia-smi dmon` and `-l`,
//! `dcgmi dmon`, `watch`. One rule for all: the first sample at once, one
//! every interval after, each reading a copy of the cluster advanced to its
//! own instant (a job that stalls, a fault that strikes, shows from that
//! sample on). A run with a count ends with its last sample; a tool that
//! loops until Ctrl-C shows its first [`UNTIL_INTERRUPTED`] samples and
//! lasts their intervals, so an interrupt at any instant cuts it there.

use crate::model::time::EpochSeconds;
use crate::model::Cluster;

/// Samples shown of a tool that loops until Ctrl-C.
pub const UNTIL_INTERRUPTED: u64 = 10;

/// The most samples a count may ask for.
pub const MAX_SAMPLES: u64 = 1_000;

/// Reading and printing one sample.
const SAMPLE_MS: u64 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    pub interval_ms: u64,
    /// `Some(n)`: `-c n`; None: until Ctrl-C.
    pub count: Option<u64>,
}

impl Sampling {
    /// How many samples the run shows.
    pub fn samples(&self) -> u64 {
        self.count.map_or(UNTIL_INTERRUPTED, |count| count.min(MAX_SAMPLES))
    }

    /// How long a run that took `taken` samples lasts on the simulated clock.
    fn duration_ms(&self, taken: u64) -> u64 {
        match self.count {
            Some(_) => taken.saturating_sub(1).saturating_mul(self.interval_ms).saturating_add(SAMPLE_MS),
            None => taken.saturating_mul(self.interval_ms),
        }
    }

    /// Calls `sample` with each sample's number, instant and view of the
    /// cluster (which it may change: a later sample sees it); `sample`
    /// returns false to stop. Returns the run's duration.
    pub fn run(&self, cluster: &Cluster, mut sample: impl FnMut(u64, EpochSeconds, &mut Cluster) -> bool) -> u64 {
        let mut view = cluster.clone();
        let mut taken = 0;
        for index in 0..self.samples() {
            let at = cluster.now.saturating_add(i64::try_from(index.saturating_mul(self.interval_ms) / 1000).unwrap_or(i64::MAX / 4));
            view.advance_to(at);
            taken += 1;
            if !sample(index, at, &mut view) {
                break;
            }
        }
        self.duration_ms(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_start_at_once_and_one_rule_gives_the_duration() {
        let cluster = crate::testing::cluster();
        let mut instants = Vec::new();
        let counted = Sampling { interval_ms: 1500, count: Some(3) }.run(&cluster, |_, at, _| {
            instants.push(at - cluster.now);
            true
        });
        assert_eq!(instants, [0, 1, 3]);
        assert_eq!(counted, 3_100);
        let endless = Sampling { interval_ms: 2000, count: None };
        assert_eq!(endless.run(&cluster, |_, _, _| true), 20_000);
        assert_eq!(endless.run(&cluster, |index, _, _| index < 2), 6_000);
        assert_eq!(Sampling { interval_ms: 1, count: Some(u64::MAX) }.samples(), MAX_SAMPLES);
    }
}
