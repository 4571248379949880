//! Open: a playground from a lake saved by another one (the browser keeps
//! the lake in its storage across reloads). The newest `meta.session`
//! version ([`super::save`]) gives the state; every table's versions and
//! rows are read from its own log.
//!
//! A request that did not finish saving (the tab closed while the lake was
//! being written) can leave table versions newer than the ones the session
//! state names, files of batches the batch log does not have, or tables it
//! does not know. Opening rolls those back first: the lake is then exactly
//! as the last saved session left it.

use medallion_protocol::TableName;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use datafusion::arrow::array::{Array, StringArray, UInt32Array};
use datafusion::arrow::compute::take_record_batch;

use crate::bronze::{batch_log, BatchInfo};
use crate::error::{EngineError, Result};
use crate::lake::decode_parquet_table;
use crate::lake::log::{Action, TableLog};
use crate::output::TableData;

use super::save::{typed_key, LineageOnly, Saved, SavedState, SESSION_DIR, SESSION_FORMAT};
use super::*;

impl Playground {
    /// The session saved in `store`, opened with this clock and id
    /// generator (ids go on from where the saved session was); later
    /// loads make their lakes with `new_store`. `Ok(None)`: the store holds
    /// no saved session. Errors: the saved state cannot be read (another
    /// layout, a file missing), naming the file.
    pub async fn open(
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
        new_store: StoreFactory,
        store: Arc<dyn object_store::ObjectStore>,
    ) -> Result<Option<Playground>> {
        let lake = Lake::from_store(store);
        let log = TableLog::new(lake.store(), SESSION_DIR);
        let Some(version) = log.latest().await? else {
            return Ok(None);
        };
        let state_file = log
            .entry(version)
            .await?
            .into_iter()
            .rev()
            .find_map(|a| match a {
                Action::Add(a) if a.path.ends_with(".json") => Some(a.path),
                _ => None,
            })
            .ok_or_else(|| {
                EngineError::Storage(format!(
                    "{SESSION_DIR}: version {version} names no state file"
                ))
            })?;
        let path = format!("{SESSION_DIR}/{state_file}");
        let state: SavedState = serde_json::from_slice(&lake.get_bytes(&path).await?)
            .map_err(|e| EngineError::Storage(format!("{path}: {e}")))?;
        // Layout 2 is layout 3 without `lineage_only`.
        if !(2..=SESSION_FORMAT).contains(&state.format) {
            return Err(EngineError::Storage(format!(
                "{path}: saved in layout {}, this version reads layout {SESSION_FORMAT}",
                state.format
            )));
        }
        let mut files: Vec<String> = state
            .typed_bronze
            .values()
            .map(|f| format!("{SESSION_DIR}/{f}"))
            .collect();
        files.push(path);
        let batches = roll_back(&lake, &state, &files).await?;

        let mut pg = Playground::blank(clock, ids.clone(), new_store, lake)?;
        ids.resume(state.ids_at);
        pg.lang = state.lang;
        pg.example = state.example;
        pg.def = state.def;
        pg.mode = state.mode;
        pg.batches = batches;
        pg.topics = state.topics;
        pg.erasures = state.erasures;
        pg.checks = state.checks;
        pg.diagnostics = state.diagnostics;
        pg.run_info = state.run_info;
        pg.run_history = state.run_history;
        pg.replay = state.replay;
        pg.notice = state.notice;
        pg.lab = state.lab;
        pg.history = History::open(&pg.lake, state.tables.keys()).await?;
        if let Some(rows) = pg.history.current_data(&crate::lake::checkpoints::table()) {
            pg.checkpoints = crate::lake::checkpoints::from_batch(rows)?;
        }
        for b in pg.def.bronze.clone() {
            let rows = pg.read_bronze_batches(&b.name).await?;
            pg.bronze.insert(b.name.clone(), rows);
            pg.register_bronze(&b.name).await?;
        }
        let mut lineage_keyed = BTreeMap::new();
        if let Some(mut out) = state.last_run {
            out.tables = pg.committed_tables(&state.run_tables, &out.bronze_batches)?;
            for t in out.tables.iter().filter(|t| !t.name.is_bronze()) {
                register_table(&pg.ctx, &t.name, &t.batch).await?;
            }
            for (table, file) in &state.typed_bronze {
                let bytes = pg.lake.get_bytes(&format!("{SESSION_DIR}/{file}")).await?;
                out.typed_bronze
                    .insert(table.clone(), decode_parquet_table(bytes)?);
            }
            for (table, saved) in &state.lineage_only {
                let all = match pg.bronze.get(table) {
                    Some(batches) => batches.clone(),
                    None => pg.read_bronze_batches(table).await?,
                };
                let read: Vec<_> = all
                    .into_iter()
                    .filter(|(info, _)| saved.batches.contains(&info.batch_id))
                    .collect();
                let parsed = crate::silver::source::parse_bronze(&Default::default(), &read)?;
                let now = LineageOnly::of(&parsed.rows)?;
                if now != *saved {
                    return Err(EngineError::Storage(format!(
                        "{SESSION_DIR}: the records bronze.{table} gave its last run ({} rows) are not the ones it gives now ({} rows)",
                        saved.rows, now.rows
                    )));
                }
                out.typed_bronze.insert(table.clone(), parsed.rows);
                let key = typed_key(table, &out, &pg.erasures);
                lineage_keyed.insert(table.clone(), (key, now));
            }
            pg.last_good = Some(out);
        }
        pg.saved = Saved {
            version: Some(version),
            files,
            lineage_only: lineage_keyed,
        };
        // The lab's twin is never saved: it is built again from this state.
        Box::pin(pg.refresh_lab()).await;
        Ok(Some(pg))
    }

    /// Bronze `table`'s batches (the batch log's order) with their rows,
    /// read from the files its log holds now.
    async fn read_bronze_batches(&self, table: &str) -> Result<Vec<(BatchInfo, RecordBatch)>> {
        let dir = TableName::bronze(table).path();
        let snapshot = TableLog::new(self.lake.store(), dir.clone())
            .snapshot(None)
            .await?;
        let mut parts = Vec::new();
        for f in snapshot.map(|s| s.files).unwrap_or_default() {
            parts.push(decode_parquet_table(
                self.lake.get_bytes(&format!("{dir}/{}", f.path)).await?,
            )?);
        }
        let schema = parts
            .first()
            .map(|p| p.schema())
            .unwrap_or_else(|| self.bronze_schema_of(table));
        let all = concat_batches(&schema, &parts)?;
        let ids = all
            .column_by_name("_batch_id")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .ok_or_else(|| {
                EngineError::Storage(format!("{dir}: the files have no _batch_id column"))
            })?;
        let mut rows_of: HashMap<&str, Vec<u32>> = HashMap::new();
        for r in 0..ids.len() {
            rows_of.entry(ids.value(r)).or_default().push(r as u32);
        }
        let mut out = Vec::new();
        for info in self.batches.iter().filter(|b| b.table == table) {
            let rows = rows_of.remove(info.batch_id.as_str()).unwrap_or_default();
            let batch = take_record_batch(&all, &UInt32Array::from(rows))?;
            out.push((info.clone(), batch));
        }
        if let Some(id) = rows_of.keys().next() {
            return Err(EngineError::Storage(format!(
                "{dir}: rows of batch {id}, which the batch log does not have"
            )));
        }
        Ok(out)
    }

    /// The tables `names` of a run as the lake holds them: a bronze one's
    /// rows of the batches the run read (`bronze_batches`, by table name
    /// without layer), a silver or gold one's current version (left out
    /// when it has none).
    pub(super) fn committed_tables(
        &self,
        names: &[TableName],
        bronze_batches: &BTreeMap<String, Vec<String>>,
    ) -> Result<Vec<TableData>> {
        let mut tables = Vec::new();
        for name in names {
            let batch = if name.is_bronze() {
                self.rows_of_batches(name.name(), bronze_batches.get(name.name()))?
            } else {
                match self.history.current_data(name) {
                    Some(b) => b.clone(),
                    None => continue,
                }
            };
            tables.push(TableData {
                name: name.clone(),
                batch,
            });
        }
        Ok(tables)
    }

    /// The rows of bronze `table`'s batches `ids` (all of them when `None`), in that order.
    fn rows_of_batches(&self, table: &str, ids: Option<&Vec<String>>) -> Result<RecordBatch> {
        let batches = self.bronze.get(table).map(Vec::as_slice).unwrap_or(&[]);
        let rows: Vec<&RecordBatch> = match ids {
            Some(ids) => ids
                .iter()
                .filter_map(|id| {
                    batches
                        .iter()
                        .find(|(i, _)| &i.batch_id == id)
                        .map(|(_, r)| r)
                })
                .collect(),
            None => batches.iter().map(|(_, r)| r).collect(),
        };
        Ok(concat_batches(&self.bronze_schema_of(table), rows)?)
    }
}

/// Deletes what a request that did not finish saving left in the lake:
/// table versions newer than `state` names (their entries and the files
/// only they added), tables `state` does not know, data files no version
/// of their table's log names ([`delete_unlogged_files`]), landed files of
/// batches not in the batch log, and `meta.session` files other than
/// `keep`. Gives the batch log, in the session's order, as the bronze
/// tables' logs hold it once rolled back ([`batch_log::read`]).
async fn roll_back(lake: &Lake, state: &SavedState, keep: &[String]) -> Result<Vec<BatchInfo>> {
    let all = lake.list("").await?;
    let logged: BTreeSet<String> = all
        .iter()
        .filter_map(|p| p.split_once("/_delta_log/").map(|(dir, _)| dir.to_string()))
        .filter(|dir| dir != SESSION_DIR)
        .collect();
    for dir in logged {
        let Some(&saved) = TableName::from_path(&dir).and_then(|t| state.tables.get(&t)) else {
            for p in all.iter().filter(|p| p.starts_with(&format!("{dir}/"))) {
                lake.delete(p).await?;
            }
            continue;
        };
        let log = TableLog::new(lake.store(), dir.clone());
        let later: Vec<u64> = log
            .versions()
            .await?
            .into_iter()
            .filter(|v| *v > saved)
            .collect();
        if later.is_empty() {
            continue;
        }
        let live: HashSet<String> = log
            .snapshot(Some(saved))
            .await?
            .map(|s| s.files.into_iter().map(|f| f.path).collect())
            .unwrap_or_default();
        for v in later.into_iter().rev() {
            for action in log.entry(v).await? {
                if let Action::Add(a) = action {
                    let p = format!("{dir}/{}", a.path);
                    if !live.contains(&a.path) && all.contains(&p) {
                        lake.delete(&p).await?;
                    }
                }
            }
            lake.delete(&format!("{dir}/_delta_log/{v:020}.json"))
                .await?;
        }
    }
    delete_unlogged_files(lake).await?;
    let mut logged = Vec::new();
    for b in &state.def.bronze {
        let log = TableLog::new(lake.store(), TableName::bronze(&b.name).path());
        logged.extend(batch_log::read(&log).await?);
    }
    logged.sort_by_key(|(ordinal, _)| *ordinal);
    let logged: Vec<BatchInfo> = logged.into_iter().map(|(_, b)| b).collect();
    let batches: HashSet<&str> = logged.iter().map(|b| b.batch_id.as_str()).collect();
    for p in &all {
        if let Some(rest) = p.strip_prefix("landing/") {
            let batch = rest.split('/').nth(1).unwrap_or_default();
            if !batches.contains(batch) {
                lake.delete(p).await?;
            }
        } else if p.starts_with(&format!("{SESSION_DIR}/"))
            && !p.contains("/_delta_log/")
            && !keep.contains(p)
        {
            lake.delete(p).await?;
        }
    }
    Ok(logged)
}

/// Deletes the files under a table's folder (`silver/orders/…`, not its
/// `_delta_log`) that no version of the table's log adds: the data files
/// a save wrote before it was cut short (the browser's copy is written data
/// files first, then the logs; a Cancel or a closed tab in between leaves
/// them), and every file of a table folder with no log at all. A table's
/// log is the truth about its versions, so nothing a version can be read
/// at is deleted (nor a bronze table's empty `part-000000.parquet`, which
/// the load writes outside the log). `meta.session` and the landing zone
/// have their own rules (see [`roll_back`]).
async fn delete_unlogged_files(lake: &Lake) -> Result<()> {
    let mut by_table: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in lake.list("").await? {
        let mut parts = p.splitn(3, '/');
        let (Some(layer), Some(name), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let dir = format!("{layer}/{name}");
        if dir == SESSION_DIR || p.contains("/_delta_log/") || TableName::from_path(&dir).is_none() {
            continue;
        }
        by_table.entry(dir).or_default().push(p);
    }
    for (dir, files) in by_table {
        let log = TableLog::new(lake.store(), dir.clone());
        let mut named = HashSet::new();
        for v in log.versions().await? {
            for action in log.entry(v).await? {
                if let Action::Add(a) = action {
                    named.insert(format!("{dir}/{}", a.path));
                }
            }
        }
        // A bronze table's empty first part is written for SQL at load,
        // outside the log (`register_bronze`).
        let empty_part = format!("{dir}/part-000000.parquet");
        let kept = |p: &String| named.contains(p) || (dir.starts_with("bronze/") && *p == empty_part);
        for p in files.iter().filter(|p| !kept(p)) {
            lake.delete(p).await?;
        }
    }
    Ok(())
}
