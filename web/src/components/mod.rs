//! One component per panel.
pub mod batches;
pub mod checks;
pub mod forget;
pub mod history;
pub mod kafka;
pub mod pipeline;
pub mod rules;
pub mod runbar;
pub mod status;
pub mod table;
pub mod trail;
