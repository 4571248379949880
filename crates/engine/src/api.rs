//! The boundary between the engine and its callers (the Yew UI, the
//! wasm-bindgen facade, tests): plain serde requests and responses, never
//! Arrow or DataFusion types, so the engine can move into a web worker
//! without touching the panels. The types live in [`medallion_protocol`]
//! (which the UI links without the engine) and are re-exported here.

pub use medallion_protocol::forget::Erasure;
pub use medallion_protocol::request::{Lang, Request, Response};
pub use medallion_protocol::runs::{
    watermarks, Checkpoint, ReplayReport, ReplayTable, RunInfo, RunMode, RunRecord, RUN_HISTORY,
};
pub use medallion_protocol::view::{
    ColumnView, GoldView, PipelineView, ReadAsUtcView, RuleView, SilverView, TableView,
};

use crate::error::Diagnostic;

pub(crate) fn diagnostics_for<'a>(
    diags: impl Iterator<Item = &'a Diagnostic>,
    scope: &'a str,
    id: &'a str,
) -> Option<String> {
    let msgs: Vec<&str> = diags
        .filter(|d| d.scope == scope && d.id == id)
        .map(|d| d.message.as_str())
        .collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}

/// A text the engine writes in the session's language (`en` or `ru`).
pub(crate) fn tr(lang: Lang, en: String, ru: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}
