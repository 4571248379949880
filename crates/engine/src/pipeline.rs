//! One pipeline run: bronze → silver (+ quarantine) → gold → checks.
//!
//! ```text
//!  bronze.<t> (raw_payload + audit)      parse with declared schema ─┐ rejected → quarantine (rule "parse")
//!        │                                                          ▼
//!        └──────────────────────────────► typed rows ── filters F* ─┤ rejected → quarantine (rule ids)
//!                                                         │
//!                                    normalizations N* (in place)  │
//!                                    enrichments E* (new columns, LEFT JOIN lookups)
//!                                                         ▼
//!                                            silver.<t>  (Parquet)  ──► gold.<m> = SQL over silver
//! ```
//!
//! Each rule runs on the materialized output of the previous one, so an error
//! (syntax, unknown column, type mismatch, runtime failure) is attributed to
//! exactly one rule. Silver tables are independent jobs (seed 003 §6, "monolithic
//! silver"): a table whose rules fail keeps its last good version, and so does
//! everything that reads it (a silver table looking it up, a gold model over
//! it; in an incremental run also the tables sharing its bronze source, whose
//! watermark cannot move); every other table is refreshed. The errors are
//! shown next to their rules. With [`crate::model::AntiPatterns::monolithic_silver`]
//! (the lab's twin) one failure stops the whole run, as one wide silver job would.
//!
//! The stages live with their layer: reading bronze, the rules and the
//! quarantine in [`crate::silver`], the models in [`crate::gold`]; what a run
//! reads and produces in [`crate::output`]; running SQL in [`crate::query`].
//! This module runs them in order (and holds the incremental run's choices).
//! Items that lived here are re-exported under their old paths.

use medallion_protocol::TableName;
use std::collections::BTreeMap;

use crate::lake::concat_batches;
use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;

use crate::bronze::BatchInfo;
use crate::error::pipeline_diag;
use crate::gold::build_gold;
use crate::model::SilverTableDef;
use crate::silver::build::build_silver;
use crate::silver::quarantine::{lineage_of, quarantine_history, snapshot_holds};
use crate::silver::select::select_item;
use crate::silver::source::{parse_bronze, Parsed, ReadAsUtc, Rejected};
use crate::silver::stage::Lookups;

pub use crate::error::Diagnostic;
pub use crate::output::{RunInput, RunOutput, TableData};
pub use crate::query::{register_table, GOLD_MAX_ROWS, MAX_EXPRESSION_TOKENS, MAX_SQL_TOKENS};
pub use crate::silver::quarantine::{open_quarantine, quarantine_schema};
pub use medallion_protocol::lineage::TraceEntry;
pub use medallion_protocol::rules::RuleStat;

/// Runs silver and gold. Returns the output tables (written to the lake), or
/// every rule / pipeline diagnostic found if silver could not be built. Gold
/// model errors do not fail the run: they are in [`RunOutput::gold_errors`].
pub async fn run(input: RunInput<'_>) -> std::result::Result<RunOutput, Vec<Diagnostic>> {
    let ctx = input.ctx;
    let def = input.def;
    let incremental = match (input.new_batches, input.previous) {
        (Some(new), Some(base)) => Some((new, base)),
        _ => None,
    };
    let mut diagnostics = Vec::new();
    let mut tables = Vec::new();
    let mut typed_bronze = BTreeMap::new();
    let mut missing_columns = BTreeMap::new();
    let mut read_as_utc = BTreeMap::new();
    let mut parsed_tables: BTreeMap<String, Parsed> = BTreeMap::new();
    let mut superseded = BTreeMap::new();
    let mut bronze_batches = BTreeMap::new();

    for (i, b) in def.bronze.iter().enumerate() {
        let all_batches = input.bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
        bronze_batches.insert(
            b.name.clone(),
            all_batches
                .iter()
                .map(|(i, _)| i.batch_id.clone())
                .collect(),
        );
        input.progress.report(crate::progress::Progress::Parsing {
            table: TableName::bronze(&b.name),
            records: all_batches.iter().map(|(_, rb)| rb.num_rows() as u64).sum(),
            n: i as u32 + 1,
            of: def.bronze.len() as u32,
        });
        let rows: Vec<RecordBatch> = all_batches.iter().map(|(_, rb)| rb.clone()).collect();
        // Silver reads a file's latest read only (see `BatchInfo::superseded_by`).
        let batches = live_batches(all_batches);
        let set_aside: usize = all_batches
            .iter()
            .filter(|(i, _)| !live(i))
            .map(|(_, rb)| rb.num_rows())
            .sum();
        if set_aside > 0 {
            superseded.insert(TableName::bronze(&b.name), set_aside);
        }
        let batches = batches.as_slice();
        let all = concat_batches(&crate::bronze::table_schema(b), &rows)
            .map_err(|e| vec![pipeline_diag(e.into())])?;
        tables.push(TableData {
            name: TableName::bronze(&b.name),
            batch: all,
        });
        let parsed = match input.parse_cache {
            Some(cache) => cache.parse(&b.name, &b.schema, batches),
            None => parse_bronze(&b.schema, batches),
        }
        .map_err(|e| vec![pipeline_diag(e)])?;
        typed_bronze.insert(b.name.clone(), parsed.rows.clone());
        if !parsed.missing.is_empty() {
            missing_columns.insert(b.name.clone(), parsed.missing.clone());
        }
        if !parsed.read_as_utc.is_empty() {
            read_as_utc.insert(b.name.clone(), parsed.read_as_utc.clone());
        }
        parsed_tables.insert(b.name.clone(), parsed);
    }

    if let Some(c) = input.step_cache {
        c.retain(&def.silver.iter().map(|s| s.name.as_str()).collect::<Vec<_>>());
    }
    let mut quarantine: Vec<(String, Rejected)> = Vec::new();
    let mut rule_stats = Vec::new();
    let mut silver_out = Vec::new();
    let mut removed = BTreeMap::new();
    let mut merge_log = BTreeMap::new();
    let mut merge_state = BTreeMap::new();
    let mut notes = Vec::new();
    // Silver tables an incremental run rebuilt from all of their bronze.
    let mut rebuilt = std::collections::HashSet::new();
    let mut silver_done: BTreeMap<TableName, RecordBatch> = BTreeMap::new();
    let mut exploded_stats = BTreeMap::new();
    let mut exploded_read_as_utc = BTreeMap::new();
    // Silver tables (names without the layer) this run did not refresh:
    // failed ones, and those that read a table that was not refreshed.
    let mut failed: std::collections::BTreeSet<String> = Default::default();
    let mut blocked: BTreeMap<String, String> = BTreeMap::new();
    for s in &def.silver {
        if let Some(upstream) = reads_not_refreshed(s, &failed, &blocked) {
            blocked.insert(s.name.clone(), upstream);
            continue;
        }
        if input.fail_silver == Some(s.name.as_str()) {
            diagnostics.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: crate::api::tr(
                    input.lang,
                    format!(
                        "{}: the job failed halfway (the lab's injected failure: an executor was lost); press Run now or re-run the job to retry",
                        TableName::silver(&s.name)
                    ),
                    format!(
                        "{}: джоба упала на полпути (сбой внесён лабораторией: потерян executor); нажмите «Запустить» или перезапустите джобу, чтобы повторить",
                        TableName::silver(&s.name)
                    ),
                ),
                table: String::new(),
            });
            failed.insert(s.name.clone());
            continue;
        }
        // A child table reads an array of each record instead (crate::silver::explode).
        let exploded = if s.explode.is_some() {
            let batches: Vec<(BatchInfo, RecordBatch)> = input
                .bronze
                .get(&s.source)
                .map(|v| {
                    v.iter()
                        .filter(|(i, _)| {
                            live(i) && incremental.is_none_or(|(new, _)| new.contains(&i.batch_id))
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            match crate::silver::explode::for_silver(s, def.bronze_table(&s.source), &batches) {
                Some(Ok(e)) => Some(e),
                Some(Err(e)) => {
                    diagnostics.push(Diagnostic {
                        scope: "pipeline".into(),
                        id: s.name.clone(),
                        message: e.to_string(),
                        table: String::new(),
                    });
                    failed.insert(s.name.clone());
                    continue;
                }
                None => None,
            }
        } else {
            None
        };
        // An incremental run reads only the new batches of the silver table's
        // own source; lookups still see their whole bronze table.
        let filtered = match (&incremental, def.bronze_table(&s.source)) {
            _ if exploded.is_some() => None,
            (Some((new_batches, _)), Some(b)) => {
                let batches: Vec<(BatchInfo, RecordBatch)> = input
                    .bronze
                    .get(&s.source)
                    .map(|v| {
                        v.iter()
                            .filter(|(i, _)| live(i) && new_batches.contains(&i.batch_id))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                Some(parse_bronze(&b.schema, &batches).map_err(|e| vec![pipeline_diag(e)])?)
            }
            _ => None,
        };
        let Some(parsed) = exploded
            .as_ref()
            .map(|e| &e.parsed)
            .or(filtered.as_ref())
            .or_else(|| parsed_tables.get(&s.source))
        else {
            diagnostics.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: format!(
                    "{} reads {}, which does not exist",
                    TableName::silver(&s.name),
                    TableName::bronze(&s.source)
                ),
                table: String::new(),
            });
            failed.insert(s.name.clone());
            continue;
        };
        let name = TableName::silver(&s.name);
        if let Some(e) = &exploded {
            let before = incremental.and_then(|(_, b)| b.exploded.get(&name));
            exploded_stats.insert(name.clone(), e.stats.plus(before));
            let before = incremental.and_then(|(_, b)| b.exploded_read_as_utc.get(&name));
            let counted = read_as_utc_plus(&e.parsed.read_as_utc, before);
            if !counted.is_empty() {
                exploded_read_as_utc.insert(name.clone(), counted);
            }
        }
        let lookups = Lookups {
            bronze: &parsed_tables,
            silver: &silver_done,
        };
        if incremental.is_some() {
            let refused = values_from_other_rows(ctx, s);
            if !refused.is_empty() {
                diagnostics.extend(refused);
                failed.insert(s.name.clone());
                continue;
            }
        }
        // An incremental run merges the new rows into the current table when
        // that gives what a full refresh would; otherwise (a late or tied
        // row, see `MergeState::late_row`) it rebuilds the table from all of
        // its bronze, in this same run.
        let mut parsed = parsed;
        let mut whole = incremental.is_none();
        // A child table rebuilt in an incremental run explodes every batch.
        let mut exploded_all: Option<crate::silver::explode::Exploded> = None;
        let first_stat = rule_stats.len();
        let done = loop {
            rule_stats.truncate(first_stat);
            let base = incremental
                .filter(|_| !whole)
                .and_then(|(_, b)| b.table(&name));
            // A full run's rules over the table's whole typed bronze are
            // kept for the next run (a rule edit recomputes what it changed).
            let mut steps = match input.step_cache {
                Some(c) if incremental.is_none() && exploded.is_none() => {
                    c.take(&s.name, &parsed.rows).ok()
                }
                _ => None,
            };
            let built = build_silver(
                ctx,
                s,
                parsed,
                &lookups,
                &mut rule_stats,
                None,
                input.progress,
                steps.as_mut(),
            )
            .await;
            if let (Some(c), Some(steps)) = (input.step_cache, steps) {
                c.put(&s.name, steps);
            }
            for st in &mut rule_stats[first_stat..] {
                st.silver_table = s.name.clone();
            }
            let built = match built {
                Ok(b) => b,
                Err(d) => {
                    break Err(d
                        .into_iter()
                        .map(|mut d| {
                            d.table = s.name.clone();
                            d
                        })
                        .collect::<Vec<_>>());
                }
            };
            let mut rejected: Vec<Rejected> = parsed
                .rejected
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r.reason = format!("{}: {}", r.rule_id, r.reason);
                    r
                })
                .collect();
            rejected.extend(built.rejected);
            let Some(spec) = &s.merge else {
                let batch = match base {
                    Some(old) => match append_rows(&name, old, &built.rows) {
                        Ok(b) => b,
                        Err(d) => break Err(vec![d]),
                    },
                    None => built.rows,
                };
                break Ok((batch, rejected));
            };
            // INSERT INTO instead of MERGE INTO (the lab's anti-pattern)
            // merges the run's rows among themselves only, and appends them.
            let inserting = def.anti_patterns.insert_into.contains(&s.name);
            let base = base.filter(|_| !inserting);
            let previous_state = incremental
                .filter(|_| !whole)
                .and_then(|(_, b)| b.merge_state.get(&name));
            if !whole && !inserting {
                let late = match previous_state {
                    None => Some("no earlier merge of this table".to_string()),
                    Some(st) => match st.late_row(spec, &built.rows) {
                        Ok(late) => late,
                        Err(m) => break Err(vec![merge_diag(s, m)]),
                    },
                };
                if let Some(why) = late {
                    notes.push(format!(
                        "{name} was rebuilt from all of {} in this incremental run: {why} is not newer than the rows merged before, and only a merge of every row gives the table a full refresh would",
                        TableName::bronze(&s.source)
                    ));
                    if s.explode.is_some() {
                        let batches = input
                            .bronze
                            .get(&s.source)
                            .map(Vec::as_slice)
                            .unwrap_or(&[]);
                        match crate::silver::explode::for_silver(
                            s,
                            def.bronze_table(&s.source),
                            batches,
                        ) {
                            Some(Ok(e)) => {
                                exploded_stats.insert(name.clone(), e.stats.plus(None));
                                exploded_read_as_utc.remove(&name);
                                if !e.parsed.read_as_utc.is_empty() {
                                    exploded_read_as_utc
                                        .insert(name.clone(), e.parsed.read_as_utc.clone());
                                }
                                parsed = &exploded_all.insert(e).parsed;
                            }
                            Some(Err(m)) => break Err(vec![merge_diag(s, m)]),
                            None => break Err(vec![merge_diag(s, "its bronze table is missing")]),
                        }
                    } else {
                        let Some(all) = parsed_tables.get(&s.source) else {
                            break Err(vec![merge_diag(s, "its bronze table is missing")]);
                        };
                        parsed = all;
                    }
                    whole = true;
                    continue;
                }
            }
            let holds = spec
                .from_snapshots
                .then(|| snapshot_holds(s, spec, parsed, &rejected));
            let merged = crate::silver::merge::merge(crate::silver::merge::MergeInput {
                spec,
                base,
                new: &built.rows,
                deletes: &built.deletes,
                holds: holds.as_ref(),
            });
            let m = match merged {
                Ok(m) => m,
                Err(message) => break Err(vec![merge_diag(s, message)]),
            };
            let state = previous_state
                .cloned()
                .unwrap_or_default()
                .observe(spec, &built.rows);
            match state {
                Ok(st) => {
                    merge_state.insert(name.clone(), st);
                }
                Err(message) => break Err(vec![merge_diag(s, message)]),
            }
            // Ambiguous ties go to the quarantine with their bronze lineage.
            let lineage = lineage_of(parsed);
            for a in &m.ambiguous {
                let (raw_payload, source_file) = lineage
                    .get(a.event_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                rejected.push(Rejected {
                    event_id: a.event_id.clone(),
                    batch_id: a.batch_id.clone(),
                    source_file,
                    raw_payload,
                    rule_id: "merge".into(),
                    reason: a.reason.clone(),
                });
            }
            let rows_in = built.rows.num_rows() + base.map_or(0, |b| b.num_rows());
            // An INSERT table is never rebuilt: what each run removed adds up.
            let base_removed = match inserting {
                true => input.previous.and_then(|p| p.removed.get(&name).copied()),
                false => incremental
                    .filter(|_| !whole)
                    .and_then(|(_, b)| b.removed.get(&name).copied()),
            }
            .unwrap_or(0);
            removed.insert(
                name.clone(),
                base_removed + rows_in.saturating_sub(m.batch.num_rows() + m.ambiguous.len()),
            );
            merge_log.insert(name.clone(), m.removed);
            // INSERT INTO: the run's rows, deduplicated by key among
            // themselves, are appended to the table the last run left, so
            // the same job run twice holds every row twice, and a batch
            // delivered twice is inserted twice.
            if inserting {
                if let Some(old) = input.previous.and_then(|p| p.table(&name)) {
                    match append_rows(&name, old, &m.batch) {
                        Ok(b) => break Ok((b, rejected)),
                        Err(d) => break Err(vec![d]),
                    }
                }
            }
            break Ok((m.batch, rejected));
        };
        if whole && incremental.is_some() {
            rebuilt.insert(s.name.clone());
        }
        match done {
            Ok((batch, rejected)) => {
                quarantine.extend(rejected.into_iter().map(|r| (s.name.clone(), r)));
                silver_done.insert(name.clone(), batch.clone());
                silver_out.push(TableData { name, batch });
            }
            Err(d) => {
                diagnostics.extend(d);
                failed.insert(s.name.clone());
            }
        }
    }
    if !failed.is_empty() && def.anti_patterns.monolithic_silver {
        return Err(diagnostics);
    }
    hold_back_readers(def, &failed, &mut blocked);
    let not_refreshed: std::collections::HashSet<String> =
        failed.iter().chain(blocked.keys()).cloned().collect();
    if !not_refreshed.is_empty() {
        // Each keeps the last good run's table and what was counted with it.
        let previous = input.previous;
        silver_out.retain(|t| !not_refreshed.contains(t.name.name()));
        quarantine.retain(|(t, _)| !not_refreshed.contains(t));
        rule_stats.retain(|r| !not_refreshed.contains(&r.silver_table));
        rebuilt.retain(|t| !not_refreshed.contains(t));
        for s in def
            .silver
            .iter()
            .filter(|s| not_refreshed.contains(&s.name))
        {
            let name = TableName::silver(&s.name);
            let before = previous.and_then(|p| p.table(&name));
            if let Some(batch) = before {
                silver_done.insert(name.clone(), batch.clone());
                silver_out.push(TableData {
                    name: name.clone(),
                    batch: batch.clone(),
                });
            }
            removed.remove(&name);
            merge_log.remove(&name);
            merge_state.remove(&name);
            exploded_stats.remove(&name);
            exploded_read_as_utc.remove(&name);
            if let Some(p) = previous {
                if let Some(v) = p.removed.get(&name) {
                    removed.insert(name.clone(), *v);
                }
                if let Some(v) = p.merge_state.get(&name) {
                    merge_state.insert(name.clone(), v.clone());
                }
                if let Some(v) = p.exploded.get(&name) {
                    exploded_stats.insert(name.clone(), v.clone());
                }
                if let Some(v) = p.exploded_read_as_utc.get(&name) {
                    exploded_read_as_utc.insert(name.clone(), v.clone());
                }
                rule_stats.extend(
                    p.rule_stats
                        .iter()
                        .filter(|r| r.silver_table == s.name)
                        .cloned(),
                );
            }
        }
        // Keep the definition's table order.
        silver_out.sort_by_key(|t| def.silver.iter().position(|s| s.name == t.name.name()));
    }
    for (table, upstream) in &blocked {
        diagnostics.push(Diagnostic {
            scope: "pipeline".into(),
            id: table.clone(),
            message: {
                let (t, up) = (TableName::silver(table), TableName::silver(upstream));
                let reads = reads_table(def, table, upstream);
                crate::api::tr(
                    input.lang,
                    format!(
                        "{t} was not refreshed: it {} {up}, which this run could not build; it stays at its last good version",
                        if reads {
                            "reads"
                        } else {
                            "appends, and shares its bronze source (one watermark, which stays) with"
                        }
                    ),
                    format!(
                        "{t} не обновлена: она {} {up}, которую этот запуск не смог построить; остаётся на последней успешной версии",
                        if reads {
                            "читает"
                        } else {
                            "дописывает строки и делит источник bronze (один watermark, он стоит) с"
                        }
                    ),
                )
            },
            table: String::new(),
        });
    }
    let silver_errors = diagnostics;
    let mut diagnostics = Vec::new();
    tables.extend(silver_out);
    let previous_quarantine = input
        .previous
        .and_then(|p| p.table(TableName::quarantine()));
    tables.push(TableData {
        name: TableName::quarantine(),
        batch: quarantine_history(
            previous_quarantine,
            &quarantine,
            input.run_id as i64,
            incremental.map(|_| &rebuilt),
            &not_refreshed,
        )
        .map_err(|e| vec![pipeline_diag(e)])?,
    });

    // Silver goes to the lake before gold runs: gold reads silver's Parquet files.
    // (Bronze files are written and registered at ingest.)
    for t in tables.iter().filter(|t| !t.name.is_bronze()) {
        if let Err(e) = register_table(ctx, &t.name, &t.batch).await {
            return Err(vec![pipeline_diag(e)]);
        }
    }
    let gold = build_gold(
        ctx,
        def,
        input.previous,
        input.progress,
        &not_refreshed,
        input.lang,
    )
    .await?;
    tables.extend(gold.tables);
    diagnostics.extend(gold.errors);
    let gold_reads_bronze = gold.reads_bronze;
    // A broken gold model does not hold silver back: silver, quarantine and the
    // other models are fresh; the caller keeps that model's last good table.
    Ok(RunOutput {
        tables,
        typed_bronze,
        bronze_batches,
        rule_stats,
        missing_columns,
        read_as_utc,
        gold_errors: diagnostics,
        silver_errors,
        not_refreshed: def
            .silver
            .iter()
            .filter(|s| not_refreshed.contains(&s.name))
            .map(|s| TableName::silver(&s.name))
            .chain(gold.blocked)
            .collect(),
        removed,
        merge_log,
        merge_state,
        notes,
        gold_reads_bronze,
        exploded: exploded_stats,
        superseded,
        exploded_read_as_utc,
    })
}

/// Adds to `blocked` (silver table → the table that holds it back, names
/// without the layer) every silver table that cannot be refreshed when the
/// tables in `failed` and `blocked` were not: one that looks one of them up,
/// and an appending one that shares a bronze source with one of them. A
/// bronze table's watermark moves for all of its silver tables at once, so
/// it stays while one of them was not refreshed, and the next run reads
/// those batches again: a MERGE table takes them once (equal rows merge to
/// the same table), an appending one would take them twice, so it waits.
pub fn hold_back_readers(
    def: &crate::model::PipelineDef,
    failed: &std::collections::BTreeSet<String>,
    blocked: &mut BTreeMap<String, String>,
) {
    loop {
        let stuck: Vec<(String, String)> = def
            .silver
            .iter()
            .filter(|s| !failed.contains(&s.name) && !blocked.contains_key(&s.name))
            .filter_map(|s| {
                if let Some(up) = reads_not_refreshed(s, failed, blocked) {
                    return Some((s.name.clone(), up));
                }
                if s.merge.is_some() {
                    return None;
                }
                let sibling = def
                    .silver
                    .iter()
                    .find(|o| {
                        o.source == s.source
                            && (failed.contains(&o.name) || blocked.contains_key(&o.name))
                    })
                    .map(|o| o.name.clone())?;
                Some((s.name.clone(), sibling))
            })
            .collect();
        if stuck.is_empty() {
            break;
        }
        blocked.extend(stuck);
    }
}

/// The first silver table `s` looks up (an enabled rule's lookup) that
/// this run did not refresh: `s` cannot be built from it.
fn reads_not_refreshed(
    s: &SilverTableDef,
    failed: &std::collections::BTreeSet<String>,
    blocked: &BTreeMap<String, String>,
) -> Option<String> {
    s.rules
        .rules
        .iter()
        .filter(|r| r.enabled)
        .filter_map(|r| r.lookup.as_ref())
        .filter(|l| l.table.is_silver_table())
        .map(|l| l.table.name().to_string())
        .find(|t| failed.contains(t) || blocked.contains_key(t))
}

/// Does silver table `table` look up silver table `upstream`?
fn reads_table(def: &crate::model::PipelineDef, table: &str, upstream: &str) -> bool {
    def.silver.iter().filter(|s| s.name == table).any(|s| {
        s.rules
            .rules
            .iter()
            .filter_map(|r| r.lookup.as_ref())
            .any(|l| l.table == TableName::silver(upstream))
    })
}

/// Does silver read this batch (it was not read again as another batch)?
fn live(batch: &BatchInfo) -> bool {
    batch.superseded_by.is_none()
}

/// The batches of a bronze table that silver reads: each file's latest
/// read (see [`BatchInfo::superseded_by`]), in batch order.
pub(crate) fn live_batches(all: &[(BatchInfo, RecordBatch)]) -> Vec<(BatchInfo, RecordBatch)> {
    all.iter().filter(|(i, _)| live(i)).cloned().collect()
}

/// `now`'s counts of values read as UTC plus a previous run's (an
/// incremental run), per column, in `now`'s order then the previous ones.
fn read_as_utc_plus(now: &[ReadAsUtc], before: Option<&Vec<ReadAsUtc>>) -> Vec<ReadAsUtc> {
    let mut all: Vec<ReadAsUtc> = now.to_vec();
    for b in before.into_iter().flatten() {
        match all.iter_mut().find(|a| a.column == b.column) {
            Some(a) => {
                a.without_offset += b.without_offset;
                a.values += b.values;
            }
            None => all.push(b.clone()),
        }
    }
    all
}

/// An incremental run refuses expressions whose value for a row depends on
/// the other rows (a window, an aggregate): it sees only the new batches, so
/// they would give other values than a full refresh, silently. Spark
/// Structured Streaming refuses such windows on streams for the same reason.
fn values_from_other_rows(ctx: &SessionContext, s: &SilverTableDef) -> Vec<Diagnostic> {
    let why = "uses a window or an aggregate: its value for a row depends on the other rows, and an incremental run sees only the new batches, so it would give other values than a full refresh (Spark Structured Streaming refuses such windows on streams too). Run a full refresh, or write it without OVER (...) / aggregates.";
    let mut out: Vec<Diagnostic> = s
        .rules
        .rules
        .iter()
        .filter(|r| {
            r.enabled && crate::silver::eval::uses_other_rows(ctx, &r.resolved_expression())
        })
        .map(|r| Diagnostic {
            table: s.name.clone(),
            ..Diagnostic::rule(&r.id, format!("{} {why}", r.id))
        })
        .collect();
    for (what, sql) in s.select.iter().map(|x| ("select", x)).chain(
        s.merge
            .iter()
            .filter_map(|m| m.delete_when.as_ref())
            .map(|x| ("delete_when", x)),
    ) {
        // A select item is an expression with an optional `AS` name.
        let expr = match what {
            "select" => select_item(sql).map_or_else(|_| sql.clone(), |(e, _)| e),
            _ => sql.clone(),
        };
        if crate::silver::eval::uses_other_rows(ctx, &expr) {
            out.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: format!("{} {what}: {sql} {why}", TableName::silver(&s.name)),
                table: String::new(),
            });
        }
    }
    out
}

fn merge_diag(s: &SilverTableDef, message: impl std::fmt::Display) -> Diagnostic {
    Diagnostic {
        scope: "pipeline".into(),
        id: s.name.clone(),
        message: format!("{} (merge): {message}", TableName::silver(&s.name)),
        table: String::new(),
    }
}

/// `old` rows then `new` rows; refused when the rules changed the table's columns.
fn append_rows(
    name: &TableName,
    old: &RecordBatch,
    new: &RecordBatch,
) -> std::result::Result<RecordBatch, Diagnostic> {
    if old.schema().fields() != new.schema().fields() {
        let names = |b: &RecordBatch| {
            b.schema()
                .fields()
                .iter()
                .map(|f| format!("{} {}", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Diagnostic {
            scope: "pipeline".into(),
            id: String::new(),
            message: format!(
                "an incremental run cannot append to {name}: the rules changed its columns (now: {}; before: {}). Run a full refresh to rebuild it from bronze.",
                names(new),
                names(old)
            ),
            table: String::new(),
        });
    }
    concat_batches(&old.schema(), [old, new]).map_err(|e| pipeline_diag(e.into()))
}
