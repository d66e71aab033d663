//! The results module (the `results` binary): the review page of a lab a
//! trainee has worked (`#/review/ID`), with the evidence bundle and the
//! results to download. Only that page loads it (index.html's
//! `showResults`), so the trainee's lab page carries none of it.
//!
//! It renders into `#results-root`, beside the app's `#app`.

use crate::components::review_page::ReviewApp;

/// The module's entry point: the functions index.html calls to show and
/// leave the review page.
pub fn start() {
    crate::mount::expose::<ReviewApp>("results-root", "clusterlabMountResults", "clusterlabUnmountResults");
}
