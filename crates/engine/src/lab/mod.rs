//! The instructor's lab (seed 000 §6, seed 003 §6): what the twin of a
//! session is built from and how it is compared with the session. The
//! protocol's [`medallion_protocol::lab`] has the shapes; the
//! [`crate::Playground`] builds the twin (`playground/lab.rs`).
//!
//! - `twin_bronze`: the twin's bronze, the session's batches taken in with
//!   an ingest anti-pattern (`dropDuplicates`, a business filter).
//! - `compare`: row counts, gold side by side, measures and checks of the
//!   two sides.

pub mod compare;
pub mod events;
pub mod health;
pub mod twin_bronze;

pub use medallion_protocol::lab::*;

use crate::api::Lang;

/// A text the lab writes, in the session's language.
pub(crate) fn tr(lang: Lang, en: String, ru: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}
