//! The instructor's lab: anti-patterns of the course switched on in a twin of
//! the session, the twin run on the same bronze input, and the two compared
//! (seed `000_87b8dd7200a8cd99.txt` §6, seed `003_d5c9e63b9bc06e62.txt` §6).
//!
//! The session itself stays the correct pipeline. With one or more
//! [`AntiPattern`]s on, the engine builds a *twin* after every change: the
//! same bronze input (every batch the session holds, in order) taken in
//! with the anti-patterns, the same rules and gold SQL, run the same way,
//! and [`LabEvent`]s (the orchestrator re-running the job) replayed on both.
//! [`LabView`] shows the difference: row counts per table, gold side by side
//! with the changed cells, each gold measure's total and ratio, the checks
//! whose status differs, and what exposes the damage.

use serde::{Deserialize, Serialize};

use crate::checks::CheckStatus;
use crate::table::TableName;

/// An anti-pattern the lab can switch on (one switch each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AntiPattern {
    /// `dropDuplicates` by business key at ingest (seed 000 §6, §3 on CDC):
    /// the twin's bronze keeps only the first record of each key of the
    /// silver table's MERGE (the whole record when it has none), so a Kafka
    /// re-delivery and a CDC history are gone before silver sees them.
    DedupAtIngest,
    /// A business filter at ingest (`WHERE status = 'OK'`, seed 000 §6,
    /// seed 003 §6 anti-pattern 2): the twin's bronze keeps only the records
    /// silver's rules pass, so nothing is quarantined and the records an
    /// audit asks for later exist nowhere.
    FilterAtIngest,
    /// `INSERT INTO` instead of `MERGE INTO` in silver (seed 003 §6
    /// anti-pattern 4): the twin's silver tables with a MERGE key append
    /// each run's rows (deduplicated within the run) instead of merging
    /// them, so an orchestrator's re-run ([`LabEvent::RerunJob`]) doubles them.
    InsertInsteadOfMerge,
    /// `mode("overwrite")` of a partition at ingest (seed 000 §6, §1): a
    /// batch replaces the earlier batches of its bronze table that landed
    /// the same day (the `_ingest_ts` partition), so their records, their
    /// versions for time travel and the replay of that day are gone.
    OverwritePartition,
    /// Spark's DROPMALFORMED read at ingest (seed 001, PERMISSIVE vs the
    /// other modes): a record that does
    /// not fit the declared schema is dropped instead of kept with its
    /// reason, so bronze no longer holds what the source sent.
    DropMalformed,
    /// A weekly "fix" job that runs `UPDATE` / `DELETE` on raw records
    /// (seed 000 §6: it breaks immutability and replay). Gold is published
    /// from the bronze the source sent; then the job rewrites bronze in
    /// place: a record silver rejected for a negative amount is UPDATEd to
    /// the absolute value ("someone typed a minus"), every other rejected
    /// record is DELETEd. A replay from the fixed bronze no longer gives the
    /// gold that was published, and the records the source sent are gone.
    FixJobInBronze,
    /// The security officer's weekly `DELETE FROM bronze.… WHERE user_id = ?`
    /// (seed 000 §7): every record of one customer is deleted from every
    /// bronze table after gold was published, as a routine batch instead
    /// of tokenization or crypto-shredding. The published gold cannot be
    /// rebuilt by replay, and the customer's history is gone for every
    /// purpose, not only the one the law names.
    WeeklyDelete,
    /// A JOIN at ingest (seed 000 §6): the bronze job joins each record
    /// with a lookup (the columns a silver enrichment reads from it) and
    /// stores them in the record (`joined_country`), as the lookup stood
    /// when the record landed; silver then reads them from bronze. When the
    /// lookup changes later ([`LabEvent::DimensionChange`]), yesterday's
    /// bronze keeps the old values and a replay of the ingest would store
    /// today's: bronze's meaning depends on when it was written.
    JoinAtIngest,
    /// The shortcut (seed 003 §6, anti-pattern 1): two gold models each
    /// read bronze and clean it their own way (one drops repeated payloads,
    /// the other keeps the newest record of each business key, neither
    /// applies silver's rules), and their totals of the same measure
    /// disagree by a percentage nobody can explain.
    Shortcut,
    /// Monolithic silver (seed 003 §6, anti-pattern 3): every silver table
    /// is one job, so a failure in any of them stops all of them and every
    /// gold model waits ([`LabEvent::SilverJobFails`] shows it). The correct
    /// session runs each silver table as its own job: a failure holds back
    /// only that table and what reads it.
    MonolithicSilver,
}

impl AntiPattern {
    /// Every anti-pattern, in the order the panel lists them.
    pub const ALL: &'static [AntiPattern] = &[
        AntiPattern::DedupAtIngest,
        AntiPattern::FilterAtIngest,
        AntiPattern::OverwritePartition,
        AntiPattern::DropMalformed,
        AntiPattern::JoinAtIngest,
        AntiPattern::FixJobInBronze,
        AntiPattern::WeeklyDelete,
        AntiPattern::InsertInsteadOfMerge,
        AntiPattern::MonolithicSilver,
        AntiPattern::Shortcut,
    ];

    /// The snake_case key (as in JSON): `insert_instead_of_merge`.
    pub fn key(self) -> &'static str {
        match self {
            AntiPattern::DedupAtIngest => "dedup_at_ingest",
            AntiPattern::FilterAtIngest => "filter_at_ingest",
            AntiPattern::InsertInsteadOfMerge => "insert_instead_of_merge",
            AntiPattern::OverwritePartition => "overwrite_partition",
            AntiPattern::DropMalformed => "drop_malformed",
            AntiPattern::FixJobInBronze => "fix_job_in_bronze",
            AntiPattern::WeeklyDelete => "weekly_delete",
            AntiPattern::Shortcut => "shortcut",
            AntiPattern::JoinAtIngest => "join_at_ingest",
            AntiPattern::MonolithicSilver => "monolithic_silver",
        }
    }

    /// The course section it comes from (`seed 000 §6`).
    pub fn seed(self) -> &'static str {
        match self {
            // Seed 003 §6 calls the same filter "business logic in bronze".
            AntiPattern::FilterAtIngest => "seed 000 §6, seed 003 §6",
            AntiPattern::DedupAtIngest
            | AntiPattern::OverwritePartition
            | AntiPattern::JoinAtIngest
            | AntiPattern::FixJobInBronze => "seed 000 §6",
            AntiPattern::WeeklyDelete => "seed 000 §7",
            AntiPattern::DropMalformed => "seed 001",
            AntiPattern::InsertInsteadOfMerge
            | AntiPattern::MonolithicSilver
            | AntiPattern::Shortcut => "seed 003 §6",
        }
    }

    /// The layer it breaks (`bronze`, `silver` or `gold`).
    pub fn layer(self) -> &'static str {
        match self {
            AntiPattern::InsertInsteadOfMerge | AntiPattern::MonolithicSilver => "silver",
            AntiPattern::Shortcut => "gold",
            _ => "bronze",
        }
    }

    /// Does it rewrite bronze after gold was published (so the published
    /// gold is compared with a replay of the rewritten bronze)?
    pub fn rewrites_bronze(self) -> bool {
        matches!(
            self,
            AntiPattern::FixJobInBronze | AntiPattern::WeeklyDelete
        )
    }
}

/// Something a real pipeline meets, injected into the session and its twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabEvent {
    /// The orchestrator runs the job again after a transient failure
    /// (at-least-once): the same input, processed a second time.
    RerunJob,
    /// The source sends its newest file again (the same bytes, a new batch).
    ResendFile,
    /// The Kafka consumer crashes after writing its last micro-batch to
    /// bronze and before committing the offsets: it is delivered again.
    KafkaRedelivery,
    /// The source renames a column (`amount` → `amount_v2`) and adds one
    /// (`source_version`) in a new file, or new messages on a Kafka topic.
    SchemaDrift,
    /// A business error: the newest record again with its amount at -100.
    BusinessError,
    /// A technical failure: the object store answers 503 halfway through
    /// writing the source's newest file again (nothing becomes visible),
    /// and the platform's retry succeeds.
    TechnicalFailure,
    /// Late records (seed 000 §5): the newest records again as new keys
    /// whose business date is three days back, arriving now. The watermark
    /// is on `_ingest_ts`, so the incremental job takes them and the old
    /// day's gold changes; a watermark on the business date would skip them.
    LateRecords,
    /// A slowly changing dimension: the source of a table another silver
    /// table looks up sends a changed record (a customer moves to another
    /// country), the same key with a new value.
    DimensionChange,
    /// A silver job fails halfway (seed 003 §6: the recompute dies at hour
    /// seven): new records arrive, and the next run fails one silver
    /// table's job, once. Independent jobs refresh everything that does not
    /// read that table; a monolithic one ([`AntiPattern::MonolithicSilver`])
    /// refreshes nothing. Re-running the job is the retry.
    SilverJobFails,
}

impl LabEvent {
    /// Every event, in the order the panel lists them.
    pub const ALL: &'static [LabEvent] = &[
        LabEvent::RerunJob,
        LabEvent::ResendFile,
        LabEvent::KafkaRedelivery,
        LabEvent::SchemaDrift,
        LabEvent::BusinessError,
        LabEvent::TechnicalFailure,
        LabEvent::LateRecords,
        LabEvent::DimensionChange,
        LabEvent::SilverJobFails,
    ];

    /// The snake_case key (as in JSON): `resend_file`.
    pub fn key(self) -> &'static str {
        match self {
            LabEvent::RerunJob => "rerun_job",
            LabEvent::ResendFile => "resend_file",
            LabEvent::KafkaRedelivery => "kafka_redelivery",
            LabEvent::SchemaDrift => "schema_drift",
            LabEvent::BusinessError => "business_error",
            LabEvent::TechnicalFailure => "technical_failure",
            LabEvent::LateRecords => "late_records",
            LabEvent::DimensionChange => "dimension_change",
            LabEvent::SilverJobFails => "silver_job_fails",
        }
    }
}

/// One event on the lab's timeline, with what it did on each side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabEventRecord {
    /// 1 for the first event since the lab was switched on.
    pub n: u32,
    pub event: LabEvent,
    /// What it did to the correct session (`no table changed`).
    pub correct: String,
    /// What it did to the twin (`silver.orders: 2 → 4 rows`).
    pub anti: String,
    /// Both texts in both languages (the two above are the session's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts: Option<LabEventTexts>,
}

/// An event's texts in English and Russian, kept so a language switch
/// translates the timeline (entries saved before they existed keep theirs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabEventTexts {
    pub correct_en: String,
    pub correct_ru: String,
    pub anti_en: String,
    pub anti_ru: String,
}

impl LabEventRecord {
    /// Shows the entry in `lang` (when it has both languages).
    pub fn in_lang(&mut self, lang: crate::request::Lang) {
        if let Some(t) = &self.texts {
            let (c, a) = match lang {
                crate::request::Lang::En => (&t.correct_en, &t.anti_en),
                crate::request::Lang::Ru => (&t.correct_ru, &t.anti_ru),
            };
            self.correct = c.clone();
            self.anti = a.clone();
        }
    }
}

/// A table's row count on both sides (`None`: the side has no such table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabCount {
    pub table: TableName,
    pub correct: Option<usize>,
    pub anti: Option<usize>,
}

/// One gold row as the two sides hold it: cells as text, `None` for NULL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabRow {
    /// The correct side's cells; empty when only the twin has the row.
    pub correct: Vec<Option<String>>,
    /// The twin's cells; empty when only the correct side has the row.
    pub anti: Vec<Option<String>>,
    /// Indexes of the cells that differ (every cell when one side lacks the row).
    pub changed: Vec<usize>,
}

/// A numeric gold column summed on both sides (exact for integers and decimals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabMeasure {
    pub column: String,
    pub correct: String,
    pub anti: String,
    /// `anti / correct` (`2.0`: exactly doubled); `None` when the correct
    /// total is 0 or NULL.
    pub ratio: Option<f64>,
}

/// One gold model compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabGold {
    pub model: TableName,
    pub columns: Vec<String>,
    /// The columns rows are matched on (the model's GROUP BY or MERGE ON
    /// columns; every column when it has neither).
    pub key: Vec<String>,
    /// Rows in the correct side's order, then rows only the twin has.
    pub rows: Vec<LabRow>,
    /// Rows with at least one changed cell.
    pub changed_rows: usize,
    pub measures: Vec<LabMeasure>,
    /// The model failed on this side (its message), so no rows are compared.
    pub error: Option<String>,
}

/// A check whose status differs between the two sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabCheck {
    pub id: String,
    pub description: String,
    pub correct: CheckStatus,
    pub anti: CheckStatus,
    /// The twin's observation (what failed there).
    pub observation: String,
}

/// The five signs of a healthy medallion (seed 003 §8), evaluated live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthSign {
    /// Bronze never loses data: duplicates, errors and "garbage" included.
    BronzeKeepsEverything,
    /// Silver is the single source of truth: nothing reads bronze for analytics.
    NothingReadsBronze,
    /// Gold speaks business language: no technical column names (`_fk`,
    /// `_id` on a measure, audit and lineage columns).
    GoldSpeaksBusiness,
    /// Any gold can be rebuilt from scratch: a replay from bronze through
    /// silver gives the same gold.
    GoldRebuildable,
    /// Lineage is known for every table: its inputs and its commit log.
    LineageKnown,
}

impl HealthSign {
    /// The five, in the seed's order.
    pub const ALL: [HealthSign; 5] = [
        HealthSign::BronzeKeepsEverything,
        HealthSign::NothingReadsBronze,
        HealthSign::GoldSpeaksBusiness,
        HealthSign::GoldRebuildable,
        HealthSign::LineageKnown,
    ];

    /// The snake_case key (as in JSON).
    pub fn key(self) -> &'static str {
        match self {
            HealthSign::BronzeKeepsEverything => "bronze_keeps_everything",
            HealthSign::NothingReadsBronze => "nothing_reads_bronze",
            HealthSign::GoldSpeaksBusiness => "gold_speaks_business",
            HealthSign::GoldRebuildable => "gold_rebuildable",
            HealthSign::LineageKnown => "lineage_known",
        }
    }
}

/// One sign on one side: green (`ok`) or red, with a one-line reason in
/// the session's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignState {
    pub ok: bool,
    pub reason: String,
}

/// One sign for the session and, with an anti-pattern on, for the twin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthCheck {
    pub sign: HealthSign,
    pub correct: SignState,
    pub anti: Option<SignState>,
}

/// The lab's state and its comparison (in [`crate::PipelineView::lab`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LabView {
    /// Anti-patterns switched on (the twin has them all).
    pub on: Vec<AntiPattern>,
    /// Why the twin could not be built or run; the comparison is then empty.
    pub error: Option<String>,
    /// Bronze, silver, the quarantine's open rows and gold, per table.
    pub counts: Vec<LabCount>,
    pub gold: Vec<LabGold>,
    pub checks: Vec<LabCheck>,
    /// What exposes the damage, one sentence each, in the session's
    /// language (a count bronze can no longer explain, an audit query that
    /// finds nothing, a re-run that changed a table).
    pub findings: Vec<String>,
    /// Events since the lab was switched on, oldest first.
    pub timeline: Vec<LabEventRecord>,
    /// The five signs of a healthy medallion, in [`HealthSign::ALL`]'s order.
    #[serde(default)]
    pub health: Vec<HealthCheck>,
}

/// A ratio as the lab prints it: `2` for exactly 2, else up to 3 decimals,
/// marked `≈` when they round it (`≈1.333`, `≈2` for 2.0001), so a ratio
/// that only looks exact is never shown as exact.
pub fn ratio_text(r: f64) -> String {
    let s = format!("{r:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    match s.parse::<f64>() {
        Ok(shown) if (shown - r).abs() <= f64::EPSILON * r.abs().max(1.0) => s,
        _ => format!("≈{s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::ratio_text;

    #[test]
    fn a_rounded_ratio_says_so() {
        assert_eq!(ratio_text(2.0), "2");
        assert_eq!(ratio_text(0.5), "0.5");
        assert_eq!(ratio_text(199.99 / 99.99), "≈2");
        assert_eq!(ratio_text(4.0 / 3.0), "≈1.333");
        assert_eq!(ratio_text(0.0), "0");
    }
}
