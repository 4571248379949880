//! Save: after every request that changes the session, the session's state
//! is committed to the lake as the table `meta.session`
//! (`meta/session/_delta_log/`), so that a playground can be opened again
//! from the lake alone ([`Playground::open`]).
//!
//! A version of `meta.session` adds one JSON file, `state-{v:06}.json`
//! ([`SavedState`]): the definition, Kafka topics and offsets, erasures, run history, checks, the last run's
//! results without their rows, and **the version of every table** at that
//! moment. Rows are never copied into it: they are read from each table's
//! own log, as are the batch log (`bronze::batch_log`) and the
//! watermarks (`meta.bronze_checkpoints`, `lake::checkpoints`, committed
//! by the run that moves them). The only rows
//! `meta.session` holds are the last run's typed
//! bronze (what silver read, `typed-{table}-{key}.parquet`), written again
//! only when the batches it was read from change.
//!
//! The session's commit is the lake's commit point: a table version newer
//! than the one the latest session state names belongs to a request that
//! did not finish, and opening the lake rolls it back (see `open.rs`).

use medallion_protocol::TableName;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api::{Erasure, Lang, ReplayReport, RunInfo, RunMode, RunRecord};
use crate::bronze::kafka::Topic;
use crate::checks::CheckResult;
use crate::error::{Diagnostic, Result};
use crate::lake::encode_parquet;
use crate::silver::source::{parsed_arrow_schema, SourceSchema};
use datafusion::arrow::array::StringArray;
use crate::lake::log::{Action, CommitInfo, TableLog};

use super::*;

/// Folder of the session's log in the lake.
pub const SESSION_DIR: &str = "meta/session";

/// Version of [`SavedState`]'s layout. This version also opens layout 2
/// (3 without [`SavedState::lineage_only`]); a lake saved with another one
/// is not opened (the page then rebuilds the session from its requests),
/// so an older engine never opens a layout-3 session missing typed bronze.
pub const SESSION_FORMAT: u32 = 3;

/// A session as `meta/session/state-{v:06}.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedState {
    pub format: u32,
    pub lang: Lang,
    /// The bundled example loaded (empty for a user's pipeline).
    pub example: String,
    pub def: PipelineDef,
    pub mode: RunMode,
    /// Kafka topics (messages and committed offset) by bronze table.
    pub topics: BTreeMap<String, Topic>,
    pub erasures: Vec<Erasure>,
    pub checks: Vec<CheckResult>,
    pub diagnostics: Vec<Diagnostic>,
    pub run_info: RunInfo,
    pub run_history: Vec<RunRecord>,
    pub replay: Option<ReplayReport>,
    /// What the last request said about its consequences (a table rebuilt
    /// by an incremental run, a restore behind the watermark), so a reload
    /// shows it as the page did.
    #[serde(default)]
    pub notice: Option<String>,
    /// The instructor's lab: its switches and timeline (the twin is rebuilt on open).
    #[serde(default)]
    pub lab: super::LabState,
    /// Where the id generator is (see [`crate::env::IdGenerator::position`]).
    pub ids_at: u64,
    /// The newest version of every table this state goes with.
    pub tables: BTreeMap<TableName, u64>,
    /// The last successful run without its rows; `None` before any.
    pub last_run: Option<RunOutput>,
    /// The last run's tables, in its order: `bronze.*` are
    /// the batches it read ([`RunOutput::bronze_batches`]), the others
    /// each table's version named in `tables`.
    pub run_tables: Vec<TableName>,
    /// The file (in [`SESSION_DIR`]) holding the last run's typed bronze rows,
    /// by bronze table (name without layer).
    pub typed_bronze: BTreeMap<String, String>,
    /// The last run's typed bronze of the tables that declare no column, by
    /// bronze table (see [`LineageOnly`]); not in layout 2.
    #[serde(default)]
    pub lineage_only: BTreeMap<String, LineageOnly>,
}

/// A table's typed bronze that is bronze's own rows: the lineage columns
/// of the records read, which a table that declares no column has. They
/// are not written again as a file (for a 31 MB CSV, that was a second
/// Parquet of the whole text); opening reads them from these batches again
/// (`parse_bronze`, which needs no parsing then) and checks they are the
/// very records the run read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineageOnly {
    /// The batches its rows came from, in order.
    pub batches: Vec<String>,
    pub rows: usize,
    /// SHA-256 (hex) of the rows' `_event_id`s, each followed by a line break.
    pub event_ids_sha256: String,
}

impl LineageOnly {
    /// Describes `rows` (typed bronze with `_batch_id` and `_event_id`).
    pub fn of(rows: &RecordBatch) -> Result<LineageOnly> {
        let column = |name: &str| {
            rows.column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| EngineError::Internal(format!("typed bronze without {name}")))
        };
        let mut batches: Vec<String> = Vec::new();
        for id in column("_batch_id")?.iter().flatten() {
            if batches.last().map(String::as_str) != Some(id) && !batches.iter().any(|b| b == id) {
                batches.push(id.to_string());
            }
        }
        let ids = column("_event_id")?;
        let mut text = Vec::with_capacity(ids.values().len() + rows.num_rows());
        for id in ids.iter() {
            text.extend_from_slice(id.unwrap_or_default().as_bytes());
            text.push(b'\n');
        }
        Ok(LineageOnly {
            batches,
            rows: rows.num_rows(),
            event_ids_sha256: crate::bronze::sha256_hex(&text),
        })
    }
}

/// What this session last saved: the `meta.session` version and its files.
#[derive(Debug, Clone, Default)]
pub(super) struct Saved {
    pub version: Option<u64>,
    /// Paths (in the store) of the files the saved version holds.
    pub files: Vec<String>,
    /// The saved version's [`LineageOnly`] by bronze table, with the
    /// [`typed_key`] of the rows it describes: the same key means the same
    /// rows, so a save after a rule edit does not hash every event id again
    /// (about 40 ms in the browser for the 336,776 flights).
    pub lineage_only: BTreeMap<String, (String, LineageOnly)>,
}

impl Playground {
    /// Commits the session's state as the next version of `meta.session`:
    /// the typed bronze files that changed, the state file, then the log
    /// entry (which removes the files the previous version held and this
    /// one does not); then deletes those files.
    pub(super) async fn save_session(&mut self, request: &str) -> Result<()> {
        let log = TableLog::new(self.lake.store(), SESSION_DIR);
        let read_version = match self.saved.version {
            Some(v) => Some(v),
            None => log.latest().await?,
        };
        let version = read_version.map_or(0, |v| v + 1);
        let ts = self.clock.now_micros();
        let ms = ts.div_euclid(1000);
        let mut added: Vec<(String, u64)> = Vec::new();
        let mut files: Vec<String> = Vec::new();
        let mut typed_bronze = BTreeMap::new();
        let mut lineage_keyed = BTreeMap::new();
        let lineage_schema = parsed_arrow_schema(&SourceSchema::default());
        if let Some(out) = &self.last_good {
            for (table, rows) in &out.typed_bronze {
                let key = typed_key(table, out, &self.erasures);
                if rows.schema().fields() == lineage_schema.fields() {
                    let described = match self.saved.lineage_only.get(table) {
                        Some((k, saved)) if *k == key => saved.clone(),
                        _ => LineageOnly::of(rows)?,
                    };
                    lineage_keyed.insert(table.clone(), (key, described));
                    continue;
                }
                let file = format!("typed-{table}-{key}.parquet");
                let path = format!("{SESSION_DIR}/{file}");
                if !self.saved.files.contains(&path) {
                    let bytes = encode_parquet(rows.schema(), std::slice::from_ref(rows))?;
                    let size = bytes.len() as u64;
                    self.lake.put_bytes(&path, bytes.to_vec()).await?;
                    added.push((file.clone(), size));
                }
                files.push(path);
                typed_bronze.insert(table.clone(), file);
            }
        }
        let state = SavedState {
            format: SESSION_FORMAT,
            lang: self.lang,
            example: self.example.clone(),
            def: self.def.clone(),
            mode: self.mode,
            topics: self.topics.clone(),
            erasures: self.erasures.clone(),
            checks: self.checks.clone(),
            diagnostics: self.diagnostics.clone(),
            run_info: self.run_info.clone(),
            run_history: self.run_history.clone(),
            replay: self.replay.clone(),
            notice: self.notice.clone(),
            lab: self.lab.clone(),
            ids_at: self.ids.position(),
            tables: self
                .history
                .all()
                .into_iter()
                .filter_map(|(t, v)| Some((t, v.last()?.version)))
                .collect(),
            last_run: self.last_good.clone().map(|mut out| {
                out.tables.clear();
                out.typed_bronze.clear();
                out
            }),
            run_tables: self
                .last_good
                .iter()
                .flat_map(|o| o.tables.iter().map(|t| t.name.clone()))
                .collect(),
            typed_bronze,
            lineage_only: lineage_keyed
                .iter()
                .map(|(table, (_, described))| (table.clone(), described.clone()))
                .collect(),
        };
        let text = serde_json::to_vec(&state)
            .map_err(|e| EngineError::Internal(format!("session state: {e}")))?;
        let file = format!("state-{version:06}.json");
        let path = format!("{SESSION_DIR}/{file}");
        let size = text.len() as u64;
        self.lake.put_bytes(&path, text).await?;
        added.push((file, size));
        files.push(path);
        let doomed: Vec<String> = self
            .saved
            .files
            .iter()
            .filter(|p| !files.contains(p))
            .cloned()
            .collect();
        let mut actions = vec![Action::CommitInfo(
            CommitInfo::new(ts, "SESSION", request, 0, 0).with("request", request),
        )];
        for p in &doomed {
            let relative = p.strip_prefix(&format!("{SESSION_DIR}/")).unwrap_or(p);
            actions.push(Action::remove_file(relative, ms));
        }
        for (file, size) in added {
            actions.push(Action::add_file(file, size, ms, None));
        }
        log.commit(read_version, &actions).await?;
        self.saved = Saved {
            version: Some(version),
            files,
            lineage_only: lineage_keyed,
        };
        for p in doomed {
            self.lake.delete(&p).await?;
        }
        Ok(())
    }
}

/// Names the typed bronze of `table` by what it was read from: the live
/// batches the run read and the erasures so far (an erasure changes a
/// batch's rows, not its id). The same key means the same rows.
pub(super) fn typed_key(table: &str, out: &RunOutput, erasures: &[Erasure]) -> String {
    let mut text = format!("{table}\n{}\n", erasures.len());
    for id in out.bronze_batches.get(table).into_iter().flatten() {
        text.push_str(id);
        text.push('\n');
    }
    crate::bronze::sha256_hex(text.as_bytes())[..16].to_string()
}
