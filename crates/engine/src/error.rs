//! One error type for the engine, one variant per phase, in the style of
//! DataFusion's `DataFusionError`. Every message is written for the learner who
//! will read it in the UI: it names the table, file, rule or column involved.

use serde::{Deserialize, Serialize};

/// Result alias used across the engine.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// What went wrong, by phase. Each module's own error (`ConvertError`,
/// `RuleError`, `TrailError`, ...) converts into one of these with `From`;
/// the text the learner reads is the `Display` of that error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// A file could not be appended to bronze (unknown table, unreadable bytes).
    /// Nothing of the file was written.
    #[error("ingest failed: {0}")]
    Ingest(String),
    /// A rule of the registry is invalid (syntax error, unknown column, type
    /// mismatch). Carries the rule id so the UI can show it next to that rule.
    #[error("rule {rule_id}: {message}")]
    Rule { rule_id: String, message: String },
    /// A gold model could not be planned or run.
    #[error("gold model {model}: {message}")]
    Gold { model: String, message: String },
    /// The in-memory object store or the Parquet codec failed.
    #[error("storage: {0}")]
    Storage(String),
    /// The request does not fit the current playground (unknown table, ...).
    #[error("{0}")]
    Request(String),
    /// An internal error from DataFusion or Arrow that has no better home.
    #[error("internal: {0}")]
    Internal(String),
}

impl From<datafusion::error::DataFusionError> for EngineError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        EngineError::Internal(clean_datafusion_message(&e.to_string()))
    }
}

impl From<datafusion::arrow::error::ArrowError> for EngineError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        EngineError::Internal(e.to_string())
    }
}

impl From<datafusion::parquet::errors::ParquetError> for EngineError {
    fn from(e: datafusion::parquet::errors::ParquetError) -> Self {
        EngineError::Storage(e.to_string())
    }
}

impl From<object_store::Error> for EngineError {
    fn from(e: object_store::Error) -> Self {
        EngineError::Storage(e.to_string())
    }
}

/// Strips DataFusion's phase prefixes ("Error during planning: ", "Schema error: ")
/// and its backtrace hint so a rule error reads as one sentence.
pub fn clean_datafusion_message(raw: &str) -> String {
    if raw.contains("does not support logical expression") && raw.contains("Subquery") {
        return "subqueries (a SELECT inside an expression) are not supported here".to_string();
    }
    // Drop the optimizer's wrapper lines ("Optimizer rule 'x' failed", "caused by").
    let joined: Vec<&str> = raw
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && *l != "caused by"
                && !(l.starts_with("Optimizer rule '") && l.ends_with("failed"))
        })
        .collect();
    let joined = joined.join("\n");
    let mut msg = joined.trim();
    for prefix in [
        "Error during planning: ",
        "Schema error: ",
        "SQL error: ",
        "Optimizer rule 'type_coercion' failed\ncaused by\n",
        "type_coercion\ncaused by\n",
        "Arrow error: ",
        "Execution error: ",
        "External error: ",
        "This feature is not implemented: ",
    ] {
        while let Some(rest) = msg.strip_prefix(prefix) {
            msg = rest.trim();
        }
    }
    let msg = msg.split("\n\nBacktrace").next().unwrap_or(msg);
    // "No field named x. Did you mean '"?table?".y'?. Valid fields are ...": with a
    // suggestion, keep the first two sentences; drop the internal relation name.
    let msg = if msg.contains("Did you mean") {
        msg.split("Valid fields are")
            .next()
            .unwrap_or(msg)
            .trim_end()
    } else {
        msg
    };
    let msg = without_hidden_fields(msg);
    msg.replace("ParserError(\"", "")
        .replace("TokenizerError(\"", "")
        .replace("\")", "")
        .replace("\"?table?\".", "")
        .replace("?table?.", "")
        .replace("'?.", "'?")
        .trim()
        .to_string()
}

/// DataFusion's "Valid fields are a, b, c." without the columns the engine
/// keeps out of sight (silver's `_arrival`): a rule's author could not use
/// them, and would wonder what they are.
fn without_hidden_fields(msg: &str) -> String {
    const LIST: &str = "Valid fields are ";
    let Some(at) = msg.find(LIST) else {
        return msg.to_string();
    };
    let (head, list) = msg.split_at(at + LIST.len());
    let (list, end) = match list.strip_suffix('.') {
        Some(l) => (l, "."),
        None => (list, ""),
    };
    let hidden = |field: &str| {
        let bare = field.rsplit('.').next().unwrap_or(field).trim_matches('"');
        bare == crate::silver::stage::ARRIVAL
    };
    let kept: Vec<&str> = list.split(", ").filter(|f| !hidden(f)).collect();
    format!("{head}{}{end}", kept.join(", "))
}

/// An error attached to the thing that caused it, for display next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `rule`, `gold` or `pipeline`.
    pub scope: String,
    /// Rule id or gold model name (empty for `pipeline`).
    pub id: String,
    pub message: String,
    /// For a rule: its silver table (name without the layer); rule ids are
    /// unique per table only.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table: String,
}

impl Diagnostic {
    pub(crate) fn rule(id: &str, message: impl Into<String>) -> Self {
        Self {
            scope: "rule".into(),
            id: id.into(),
            message: message.into(),
            table: String::new(),
        }
    }
}

pub(crate) fn pipeline_diag(e: EngineError) -> Diagnostic {
    Diagnostic {
        scope: "pipeline".into(),
        id: String::new(),
        message: e.to_string(),
        table: String::new(),
    }
}

/// The messages of `diags`, `; `-separated: a run that failed, told as one
/// error (a replay's rebuild, a row trail's replay of the rules).
pub(crate) fn joined_messages(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_column_message_is_one_readable_sentence() {
        assert_eq!(
            clean_datafusion_message(
                "Schema error: No field named total_amout. Did you mean '\"?table?\".total_amount'?. Valid fields are \"?table?\"._event_id, \"?table?\".fare_amount."
            ),
            "No field named total_amout. Did you mean 'total_amount'?"
        );
    }

    #[test]
    fn the_valid_fields_leave_out_silvers_hidden_arrival_order() {
        assert_eq!(
            clean_datafusion_message(
                "Schema error: No field named zzz. Valid fields are \"?table?\"._event_id, \"?table?\"._arrival, \"?table?\".fare_amount."
            ),
            "No field named zzz. Valid fields are _event_id, fare_amount."
        );
        assert_eq!(
            clean_datafusion_message("Schema error: No field named q. Valid fields are t._arrival, t.a"),
            "No field named q. Valid fields are t.a"
        );
    }

    #[test]
    fn optimizer_wrappers_and_tokenizer_noise_are_removed() {
        assert_eq!(
            clean_datafusion_message("Optimizer rule 'simplify_expressions' failed\ncaused by\nArrow error: Cast error: Cannot cast string 'abc' to value of Float64 type"),
            "Cast error: Cannot cast string 'abc' to value of Float64 type"
        );
        assert_eq!(
            clean_datafusion_message(
                "SQL error: TokenizerError(\"Unterminated string literal at Line: 1, Column: 96\")"
            ),
            "Unterminated string literal at Line: 1, Column: 96"
        );
    }

    #[test]
    fn strips_phase_prefixes() {
        assert_eq!(
            clean_datafusion_message(
                "Schema error: No field named fare. Did you mean 'fare_amount'?."
            ),
            "No field named fare. Did you mean 'fare_amount'?"
        );
    }

    #[test]
    fn a_rule_error_names_its_rule() {
        let e = EngineError::Rule {
            rule_id: "F1".into(),
            message: "No field named fare. Did you mean 'fare_amount'?".into(),
        };
        assert_eq!(
            e.to_string(),
            "rule F1: No field named fare. Did you mean 'fare_amount'?"
        );
    }
}
