//! The author module (the `author` binary, built with the `authoring`
//! feature): the author page (`#/author`, `#/author/KEY`) and labs opened
//! from share links (`#/shared/...`). Only those pages load it (see
//! `components/author_host.rs` and index.html's `clusterlabAuthor`), so the
//! trainee's module never carries the TOML parser, the checks or the
//! editor.
//!
//! It renders into `#author-root`. The checks run in a worker module of
//! their own (the `author_checker` binary, `checker.rs`), so that they
//! never block typing and this module carries no emulated command.

pub mod checker;
pub mod route;

use crate::components::author::app::AuthorApp;

/// The lab a new author page starts from.
pub const STARTER: &str = include_str!("starter.toml");

/// The module's entry point: the functions index.html calls to show and
/// leave the author pages.
pub fn start() {
    crate::mount::expose::<AuthorApp>("author-root", "clusterlabMountAuthor", "clusterlabUnmountAuthor");
}
