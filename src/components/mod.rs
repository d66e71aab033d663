pub mod app;
pub mod catalog_page;
pub mod lab_page;
pub mod markdown;
pub mod notices;
pub mod question_card;
pub mod simulation_notice;
pub mod terminal;
