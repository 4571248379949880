//! What a caller asks the engine and what it answers.

use crate::table::TableName;
use serde::{Deserialize, Serialize};

use crate::bronze::IngestOptions;
use crate::forget::ErasurePlan;
use crate::kafka::KafkaMessage;
use crate::lab::{AntiPattern, LabEvent};
use crate::lineage::RowTrail;
use crate::pii::{PiiMethod, PiiView};
use crate::pipeline_def::{AntiPatterns, BronzeMode, PipelineDef};
use crate::rules::Rule;
use crate::runs::RunMode;
use crate::view::{PipelineView, TableView};

/// Language of the texts the engine writes (check observations, example rationales).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    En,
    Ru,
}

impl Lang {
    /// A number written with `.` (`format!("{x:.2}")`) as this language
    /// writes it: `7.14` in English, `7,14` in Russian (decimal comma).
    pub fn decimal(self, number: String) -> String {
        match self {
            Lang::En => number,
            Lang::Ru => number.replace('.', ","),
        }
    }

    /// A count written with its thousands grouped as this language groups
    /// them (CLDR): `336,776` in English, `336 776` in Russian (a no-break
    /// space, U+00A0, so the number never wraps).
    pub fn grouped(self, n: usize) -> String {
        let digits = n.to_string();
        let sep = match self {
            Lang::En => ",",
            Lang::Ru => "\u{a0}",
        };
        let mut out = String::with_capacity(digits.len() + digits.len() / 3 * sep.len());
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push_str(sep);
            }
            out.push(d);
        }
        out
    }
}

/// What a caller can ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Replace everything with a bundled example (see [`crate::examples::EXAMPLES`]) and run it.
    LoadExample {
        example: String,
        lang: Lang,
        /// Store every bronze table of the example in this mode (default: as the example declares, raw).
        #[serde(default)]
        bronze_mode: Option<BronzeMode>,
    },
    /// Replace everything with this pipeline (empty bronze tables) and run it.
    LoadPipeline { pipeline: PipelineDef },
    /// Append a file to a bronze table as a new batch, then rerun.
    Ingest {
        /// Bronze table, with or without the `bronze.` prefix.
        table: String,
        file_name: String,
        bytes: Vec<u8>,
        /// Format and CSV dialect overrides; anything unset is detected.
        #[serde(default)]
        options: IngestOptions,
    },
    /// Read a batch's file again from the landing zone with other options and
    /// append it as a new batch (the old batch stays), then rerun.
    Reingest {
        batch_id: String,
        #[serde(default)]
        options: IngestOptions,
        /// Keep `options` as the table's settings for its next files.
        #[serde(default)]
        remember: bool,
    },
    /// Make an earlier version of a silver or gold table current (a new RESTORE version).
    Restore { table: TableName, version: u64 },
    /// Rebuild silver and gold from bronze alone and compare with the current tables.
    Replay,
    /// Append messages to the Kafka topic in front of a bronze table (nothing reaches bronze yet).
    KafkaProduce {
        table: String,
        messages: Vec<KafkaMessage>,
    },
    /// Poll up to `max` messages from the committed offset into bronze as one
    /// micro-batch, then commit, then rerun. With `crash_before_commit` the
    /// consumer dies after writing and before committing: the next poll
    /// delivers the same messages again.
    KafkaPoll {
        table: String,
        #[serde(default)]
        max: Option<usize>,
        #[serde(default)]
        crash_before_commit: bool,
    },
    /// Right to be forgotten (seed 000 §7): delete the bronze rows where the SQL
    /// `predicate` over bronze's columns is TRUE, from every version, with the
    /// landed files they came from and silver / gold snapshots that held them.
    /// Logged with `reason`; then a full refresh.
    Forget {
        table: String,
        predicate: String,
        reason: String,
        /// The bronze row count the plan showed ([`Request::PlanForget`]):
        /// the delete is refused if the condition now matches another number.
        #[serde(default)]
        expected_rows: Option<usize>,
        /// The session state the plan was made on ([`crate::ErasurePlan::state`]):
        /// the delete is refused if anything changed since (a file, a rule,
        /// a version, a Kafka message), so it never does other than the plan showed.
        #[serde(default)]
        plan_state: Option<String>,
    },
    /// What a [`Request::Forget`] with this condition would erase, per table
    /// with a sample of the rows (a dry run; nothing changes). Answered with
    /// [`Response::ErasurePlan`].
    PlanForget { table: String, predicate: String },
    /// Choose how runs process bronze: everything, or only batches past the watermark.
    SetRunMode { mode: RunMode },
    /// Run now, in the current mode; `full_refresh` rebuilds from all of bronze once.
    Run {
        #[serde(default)]
        full_refresh: bool,
    },
    /// Replace the rule registry of a silver table, then rerun.
    SetRules {
        silver_table: String,
        rules: Vec<Rule>,
    },
    /// Replace a gold model's SQL, then rerun.
    SetGoldSql { model: String, sql: String },
    /// Switch anti-patterns on or off (seed 003 §6), then rerun.
    SetAntiPatterns { anti_patterns: AntiPatterns },
    /// Switch the lab's anti-patterns (seed 000 §6, seed 003 §6): the twin
    /// is built with all of `on` and compared with the session (see
    /// [`crate::lab`]); the timeline goes on, except that empty switches
    /// the lab off and clears it.
    SetLab { on: Vec<AntiPattern> },
    /// Inject an event a real pipeline meets into the session and, with the
    /// lab on, its twin; logged on the lab's timeline.
    LabEvent { event: LabEvent },
    /// The right to be forgotten three ways (seed 000 §7, [`crate::pii`]):
    /// the three throw-away lakes (built on first use) for `customer`
    /// (`U-2`; `None`: the first). Answered with [`Response::Pii`].
    PiiLab {
        #[serde(default)]
        customer: Option<String>,
    },
    /// Forget `customer` in the lake of `method` (`None`: all three), then
    /// show them ([`Response::Pii`]). The lakes are scratch: the session
    /// does not change.
    PiiForget {
        customer: String,
        #[serde(default)]
        method: Option<PiiMethod>,
    },
    /// Build the three lakes again from the bundled data (every customer
    /// back), then show `customer` ([`Response::Pii`]).
    PiiReset {
        #[serde(default)]
        customer: Option<String>,
    },
    /// Change the language of engine-written texts.
    SetLang { lang: Lang },
    /// A page of one table's rows.
    GetTable {
        table: TableName,
        offset: usize,
        limit: usize,
        /// An earlier version (time travel); `None` is the current one.
        #[serde(default)]
        version: Option<u64>,
        /// Only bronze rows with a `_corrupt_reason`.
        #[serde(default)]
        corrupt_only: bool,
    },
    /// The rule registry of a silver table as a markdown table.
    ExportRules { silver_table: String },
    /// The row trail of row `row` (0-based, in the current version) of a
    /// silver, quarantine or gold table: its bronze records and every rule's
    /// outcome on them, or the silver rows behind a gold row.
    Trail { table: TableName, row: usize },
    /// The current state, unchanged.
    Snapshot,
}

impl Request {
    /// Does it change what the engine holds? Those requests are what a new
    /// engine must be given again (after a reload or a cancel) to reach the
    /// same state; the others only read.
    pub fn changes_state(&self) -> bool {
        !matches!(
            self,
            Request::GetTable { .. }
                | Request::ExportRules { .. }
                | Request::Trail { .. }
                | Request::PlanForget { .. }
                | Request::PiiLab { .. }
                | Request::PiiForget { .. }
                | Request::PiiReset { .. }
                | Request::Snapshot
        )
    }

    /// Is its one run's result shown before its versions are written?
    /// These requests run the pipeline once (a scenario or pipeline load
    /// runs it once, after its bronze is in); the engine's worker then
    /// posts [`crate::wire::FromEngine::Preview`] (the tables as computed,
    /// [`crate::PipelineView::saving`]) before the request's answer (the
    /// state as committed, after the versions and the browser's copy of
    /// the lake are written). An ingest runs the pipeline once its batch
    /// is committed to bronze: its preview shows that batch and the run
    /// over it (the page opens the bronze table when the file is dropped,
    /// not on the answer, which would undo what the learner did on the
    /// preview meanwhile).
    pub fn previews(&self) -> bool {
        matches!(
            self,
            Request::Ingest { .. }
                | Request::SetRules { .. }
                | Request::SetGoldSql { .. }
                | Request::Run { .. }
                | Request::LoadExample { .. }
                | Request::LoadPipeline { .. }
        )
    }

    /// Does it replace the whole session, so that earlier requests no longer
    /// matter (a scenario or a pipeline is loaded)?
    pub fn starts_over(&self) -> bool {
        matches!(
            self,
            Request::LoadExample { .. } | Request::LoadPipeline { .. }
        )
    }

    /// Its name in the protocol (`ingest`, `set_rules`, ...): the `type`
    /// tag it is serialized with. Named here, not read back from its JSON:
    /// an ingest's JSON holds the whole file (a 30 MB file was 30 million
    /// JSON numbers built and freed for its name).
    pub fn kind(&self) -> String {
        match self {
            Request::LoadExample { .. } => "load_example",
            Request::LoadPipeline { .. } => "load_pipeline",
            Request::Ingest { .. } => "ingest",
            Request::Reingest { .. } => "reingest",
            Request::Restore { .. } => "restore",
            Request::Replay => "replay",
            Request::KafkaProduce { .. } => "kafka_produce",
            Request::KafkaPoll { .. } => "kafka_poll",
            Request::Forget { .. } => "forget",
            Request::PlanForget { .. } => "plan_forget",
            Request::SetRunMode { .. } => "set_run_mode",
            Request::Run { .. } => "run",
            Request::SetRules { .. } => "set_rules",
            Request::SetGoldSql { .. } => "set_gold_sql",
            Request::SetAntiPatterns { .. } => "set_anti_patterns",
            Request::SetLab { .. } => "set_lab",
            Request::LabEvent { .. } => "lab_event",
            Request::PiiLab { .. } => "pii_lab",
            Request::PiiForget { .. } => "pii_forget",
            Request::PiiReset { .. } => "pii_reset",
            Request::SetLang { .. } => "set_lang",
            Request::GetTable { .. } => "get_table",
            Request::ExportRules { .. } => "export_rules",
            Request::Trail { .. } => "trail",
            Request::Snapshot => "snapshot",
        }
        .to_string()
    }
}

/// What the engine answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Snapshot(PipelineView),
    Table(TableView),
    /// Answer to [`Request::Trail`].
    Trail(RowTrail),
    /// Answer to [`Request::PlanForget`].
    ErasurePlan(ErasurePlan),
    /// Answer to [`Request::PiiLab`], [`Request::PiiForget`] and [`Request::PiiReset`].
    Pii(PiiView),
    Text {
        text: String,
    },
    /// The request could not be carried out; nothing changed.
    Error {
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::Request;

    /// One request of each kind, as JSON.
    const ONE_OF_EACH: &[&str] = &[
        r#"{"type":"load_example","example":"nyc_taxi","lang":"en"}"#,
        r#"{"type":"load_pipeline","pipeline":{"title":"t","bronze":[],"silver":[],"gold":[],"checks":[]}}"#,
        r#"{"type":"ingest","table":"t","file_name":"f.csv","bytes":[97,10,49]}"#,
        r#"{"type":"reingest","batch_id":"b"}"#,
        r#"{"type":"restore","table":"silver.t","version":2}"#,
        r#"{"type":"replay"}"#,
        r#"{"type":"kafka_produce","table":"t","messages":[]}"#,
        r#"{"type":"kafka_poll","table":"t"}"#,
        r#"{"type":"forget","table":"t","predicate":"id = 1","reason":"asked"}"#,
        r#"{"type":"plan_forget","table":"t","predicate":"id = 1"}"#,
        r#"{"type":"set_run_mode","mode":"incremental"}"#,
        r#"{"type":"run"}"#,
        r#"{"type":"set_rules","silver_table":"t","rules":[]}"#,
        r#"{"type":"set_gold_sql","model":"m","sql":"SELECT 1"}"#,
        r#"{"type":"set_anti_patterns","anti_patterns":{}}"#,
        r#"{"type":"set_lab","on":[]}"#,
        r#"{"type":"lab_event","event":"rerun_job"}"#,
        r#"{"type":"pii_lab"}"#,
        r#"{"type":"pii_forget","customer":"U-2"}"#,
        r#"{"type":"pii_reset"}"#,
        r#"{"type":"set_lang","lang":"ru"}"#,
        r#"{"type":"get_table","table":"silver.t","offset":0,"limit":10}"#,
        r#"{"type":"export_rules","silver_table":"t"}"#,
        r#"{"type":"trail","table":"silver.t","row":0}"#,
        r#"{"type":"snapshot"}"#,
    ];

    /// The variant's position in the enum: a new variant fails to compile
    /// here until it is given a line in [`ONE_OF_EACH`].
    fn position(r: &Request) -> usize {
        match r {
            Request::LoadExample { .. } => 0,
            Request::LoadPipeline { .. } => 1,
            Request::Ingest { .. } => 2,
            Request::Reingest { .. } => 3,
            Request::Restore { .. } => 4,
            Request::Replay => 5,
            Request::KafkaProduce { .. } => 6,
            Request::KafkaPoll { .. } => 7,
            Request::Forget { .. } => 8,
            Request::PlanForget { .. } => 9,
            Request::SetRunMode { .. } => 10,
            Request::Run { .. } => 11,
            Request::SetRules { .. } => 12,
            Request::SetGoldSql { .. } => 13,
            Request::SetAntiPatterns { .. } => 14,
            Request::SetLab { .. } => 15,
            Request::LabEvent { .. } => 16,
            Request::PiiLab { .. } => 17,
            Request::PiiForget { .. } => 18,
            Request::PiiReset { .. } => 19,
            Request::SetLang { .. } => 20,
            Request::GetTable { .. } => 21,
            Request::ExportRules { .. } => 22,
            Request::Trail { .. } => 23,
            Request::Snapshot => 24,
        }
    }

    #[test]
    fn kind_is_the_serialized_type_tag_of_every_variant() {
        let mut seen = vec![false; ONE_OF_EACH.len()];
        for text in ONE_OF_EACH {
            let request: Request = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let json = serde_json::to_value(&request).unwrap();
            assert_eq!(request.kind(), json["type"].as_str().unwrap(), "{text}");
            let at = position(&request);
            assert!(!seen[at], "{text}: a second line for the same variant");
            seen[at] = true;
        }
        assert!(seen.iter().all(|s| *s), "a variant has no line in ONE_OF_EACH");
        // The ingest's name does not depend on its file.
        let big = Request::Ingest {
            table: "t".into(),
            file_name: "f.csv".into(),
            bytes: vec![b'x'; 1 << 20],
            options: Default::default(),
        };
        assert_eq!(big.kind(), "ingest");
    }

    #[test]
    fn counts_are_grouped_as_each_language_groups_them() {
        use super::Lang;
        let cases = [(0, "0", "0"), (999, "999", "999"), (1_000, "1,000", "1\u{a0}000"), (336_776, "336,776", "336\u{a0}776"), (3_000_000, "3,000,000", "3\u{a0}000\u{a0}000")];
        for (n, en, ru) in cases {
            assert_eq!(Lang::En.grouped(n), en);
            assert_eq!(Lang::Ru.grouped(n), ru);
        }
    }
}
