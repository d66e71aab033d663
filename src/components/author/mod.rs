//! The author module's components (the `authoring` feature only).

pub mod app;
pub mod code_editor;
pub mod editor_page;
pub mod preview;
pub mod problem_list;
pub mod reference_page;
pub mod room_page;
pub mod shared_lab;
