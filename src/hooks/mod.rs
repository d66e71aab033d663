pub mod use_announcement;
pub mod use_command_line;
pub mod use_fetched;
pub mod use_hash_route;
pub mod use_lab_store;
pub mod use_scrollback;

pub use use_announcement::use_announcement;
pub use use_command_line::{use_command_line, CommandLine};
pub use use_fetched::use_fetched;
pub use use_hash_route::{use_hash_route, CatalogView, Route};
pub use use_lab_store::use_lab_store;
pub use use_scrollback::{use_scrollback, OpenPager};
