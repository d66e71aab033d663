//! The results module (the `results` binary): the review page of a lab a
//! trainee has worked (`#/review/ID`), with the evidence bundle and the
//! results to download. Only that page loads it (index.html's
//! `showResults`), so the trainee's lab page carries none of it.
//!
//! It renders into `#results-root`, beside the app's `#app`; a lab an LMS
//! launched (cmi5) gets its session bar from here too, in `#cmi5-root`.

use crate::components::cmi5_bar::Cmi5Bar;
use crate::components::review_page::ReviewApp;

/// The module's entry point: the functions index.html calls to show and
/// leave the review page, and to run a session an LMS launched (cmi5: the
/// bar above the lab, in `#cmi5-root`).
pub fn start() {
    crate::mount::expose::<ReviewApp>("results-root", "clusterlabMountResults", "clusterlabUnmountResults");
    crate::mount::expose::<Cmi5Bar>("cmi5-root", "clusterlabMountCmi5", "clusterlabUnmountCmi5");
}
