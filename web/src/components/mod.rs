//! One component per panel.
pub mod banners;
pub mod batches;
pub mod checks;
pub mod export;
pub mod forget;
pub mod history;
pub mod kafka;
pub mod pipeline;
pub mod rules;
pub mod runbar;
pub mod status;
pub mod table;
pub mod topbar;
pub mod trail;
