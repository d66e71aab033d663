//! Progress saved by released builds loads in this one: every saved form
//! ClusterLab has written is kept here as a fixture (`tests/saved/`), made by
//! the build that wrote it, and must load with its answers, hints, terminal
//! and cluster intact. A change to a persisted type that breaks one fails
//! here; it needs a migration (and a new fixture for its own form).

use clusterlab_engine::shell::SessionJson;
use clusterlab_engine::store::{LabState, Loaded};
use clusterlab_engine::Session;

fn first_look() -> clusterlab_engine::Lab {
    clusterlab_engine::load(include_str!("../../../labs/first-look.toml")).expect("the lab loads")
}

/// Form 2, as written by the build of 2026-12-02 (commit fe46317): five
/// lines on first-look variant 3, a wrong answer and a hint.
#[test]
fn form_2_from_the_release_of_2026_12_02_loads_whole() {
    let lab = first_look();
    let text = include_str!("saved/state-v2-first-look.json");
    let initial = SessionJson::initial(lab.first_host());
    let state = match LabState::load(text, &lab, "digest-of-this-build", &initial) {
        // The lab's digest differs from the release's: the state is carried over.
        Loaded::Migrated(state, notice) => {
            assert!(notice.contains("Your answers and terminal were kept"), "{notice}");
            state
        }
        Loaded::Restored(_) => panic!("the digest differs: expected a migration"),
        Loaded::Unreadable(why) => panic!("progress saved by a released build no longer loads: {why}"),
    };
    assert_eq!(state.seed, 3);
    let lines: Vec<&str> = state.transcript.iter().map(|entry| entry.line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "nvidia-smi -L | head -3",
            "echo notes > findings.txt",
            "ssh gpu-002",
            "ibstat mlx5_0 | grep Rate",
            "sudo scontrol update nodename=gpu-002 state=drain reason=check"
        ]
    );
    assert!(state.transcript[0].text().starts_with("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-"), "{}", state.transcript[0].text());
    let answer = &state.answers["driver"];
    assert_eq!((answer.response.as_str(), answer.attempts), ("a wrong answer", 1));
    assert_eq!(state.hints_shown.get("driver"), Some(&1));
    // The shell and the cluster come back as they were left.
    let snapshot = state.session.snapshot().expect("the saved session reads");
    let mut session = Session::restore(lab.instantiate(state.seed), snapshot);
    assert_eq!(session.prompt(), "user@gpu-002:~$ ");
    let sinfo = session.run("sinfo -N").stdout();
    assert!(sinfo.contains("gpu-002       1 gpu*      drain"), "the drain is kept: {sinfo}");
    session.run("exit");
    assert_eq!(session.run("cat findings.txt").stdout(), "notes\n", "the file written is kept");
}
