//! Commands that run other command lines, through the invocation's
//! [`Runner`](super::Runner): on other nodes (`pdsh`, `clush`), again and
//! again (`watch`), as root (`sudo`) or in a changed environment (`env`).

pub mod clush;
pub mod env;
pub mod pdsh;
pub mod sudo;
pub mod timeout;
pub mod watch;
pub mod xargs;
