pub mod use_hash_route;
pub mod use_progress;

pub use use_hash_route::{use_hash_route, Route};
pub use use_progress::use_progress;
