//! One component per panel.
pub mod checks;
pub mod pipeline;
pub mod rules;
pub mod table;
