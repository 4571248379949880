//! Run: silver and gold from bronze, as a full refresh or incrementally from
//! the batches past the watermark (seed 000 §5); the checks, the run
//! history, and a new version of every table that changed.

use medallion_protocol::TableName;
use std::collections::{BTreeMap, HashSet};

use crate::api::{Checkpoint, RunMode};
use crate::checks::evaluate_reusing;
use crate::output::RunInput;
use crate::pipeline::run;

use super::*;

impl Playground {
    /// Runs the whole pipeline from bronze. On success the results replace the
    /// last good ones; on failure the last good results stay and the errors are
    /// kept for display.
    pub async fn run(&mut self) {
        self.run_with(self.mode == RunMode::Incremental).await;
    }

    /// The watermark of each bronze table: the largest `_ingest_ts` a
    /// successful run has processed.
    pub fn watermarks(&self) -> BTreeMap<TableName, i64> {
        crate::api::watermarks(&self.checkpoints)
    }

    /// Batches past the watermark of their table.
    pub(super) fn batches_past_watermark(&self) -> HashSet<String> {
        let w = self.watermarks();
        self.batches
            .iter()
            .filter(|b| {
                w.get(&TableName::bronze(&b.table))
                    .is_none_or(|ts| b.ingest_ts_micros > *ts)
            })
            .map(|b| b.batch_id.clone())
            .collect()
    }

    /// Runs the pipeline; returns whether it produced a new output (the
    /// last successful run): `false` when nothing could be built. A silver
    /// table whose rules fail keeps its last good version, as does what
    /// reads it ([`crate::pipeline`]); the rest is refreshed and committed.
    pub(super) async fn run_with(&mut self, incremental: bool) -> bool {
        self.run_over(incremental, None).await
    }

    /// [`Self::run_with`]; an incremental run reads the batches `only`
    /// when given (the lab's INSERT twin inserts a re-delivered batch
    /// again), else those past the watermark.
    pub(super) async fn run_over(
        &mut self,
        incremental: bool,
        only: Option<HashSet<String>>,
    ) -> bool {
        let started = web_time::Instant::now();
        self.run_info.runs += 1;
        self.run_info.errors.clear();
        self.run_info.not_refreshed.clear();
        let new_batches = only.unwrap_or_else(|| self.batches_past_watermark());
        let result = run(RunInput {
            ctx: &self.ctx,
            def: &self.def,
            bronze: &self.bronze,
            run_id: self.run_info.runs,
            previous: self.last_good.as_ref(),
            new_batches: incremental.then_some(&new_batches),
            progress: self.reporter(),
            fail_silver: self.fail_silver_once.as_deref(),
            lang: self.lang,
            parse_cache: Some(&self.parse_cache),
            step_cache: self.reuse_last_run.then_some(&self.step_cache),
        })
        .await;
        // The lab's injected job failure happens once; the retry succeeds.
        self.fail_silver_once = None;
        let produced = match result {
            Ok(mut out) => {
                // A silver table this run did not refresh holds its batches
                // back: its source's watermark stays, so the next run reads them.
                let held_sources: HashSet<&str> = self
                    .def
                    .silver
                    .iter()
                    .filter(|s| out.not_refreshed.contains(&TableName::silver(&s.name)))
                    .map(|s| s.source.as_str())
                    .collect();
                let new_batches: HashSet<String> = self
                    .batches
                    .iter()
                    .filter(|b| {
                        new_batches.contains(&b.batch_id)
                            && !held_sources.contains(b.table.as_str())
                    })
                    .map(|b| b.batch_id.clone())
                    .collect();
                // A failed gold model keeps showing its last good table (marked in the UI).
                for d in &out.gold_errors {
                    let name = TableName::gold(&d.id);
                    if let Some(old) = self
                        .last_good
                        .as_ref()
                        .and_then(|o| o.tables.iter().find(|t| t.name == name))
                    {
                        out.tables.push(old.clone());
                    }
                }
                let ts = self.clock.now_micros();
                let detail = format!(
                    "run {}{}",
                    self.run_info.runs,
                    if incremental { " (incremental)" } else { "" }
                );
                let changed = self.keep_unchanged(&mut out).await;
                // Shown before the versions are written, the checks with it.
                let previewed = match self.preview.take() {
                    Some(listener) => {
                        let checks = self.evaluate_checks(&out).await;
                        listener(self.preview_view(&out, &checks, &changed, started));
                        Some(checks)
                    }
                    None => None,
                };
                let written: Vec<_> = out.tables.iter().filter(|t| !t.name.is_bronze()).collect();
                let mut not_committed: Vec<TableName> = Vec::new();
                let mut held: Vec<TableName> = Vec::new();
                let mut n = 0;
                for t in &written {
                    // The quarantine and gold were computed from this run's
                    // silver: if a silver table did not commit, no version of
                    // it holds the rows they were computed from, so they stay
                    // where they were (silver tables are written first).
                    if (t.name.is_gold() || t.name.is_quarantine())
                        && not_committed.iter().any(TableName::is_silver_table)
                    {
                        held.push(t.name.clone());
                        not_committed.push(t.name.clone());
                        continue;
                    }
                    // Its current version holds these rows: nothing to write.
                    if !changed.contains(&t.name) {
                        continue;
                    }
                    n += 1;
                    self.reporter().report(crate::progress::Progress::Writing {
                        table: t.name.clone(),
                        n,
                        of: changed.len() as u32,
                    });
                    if let Err(e) = self
                        .history
                        .commit_changed_snapshot(
                            &self.lake,
                            &t.name,
                            ts,
                            "WRITE",
                            detail.clone(),
                            &t.batch,
                        )
                        .await
                    {
                        self.run_info.errors.push(e.to_string());
                        not_committed.push(t.name.clone());
                    }
                }
                // A table an erasure could not rebuild kept its version from
                // before it; once a run writes a newer one, that one expires.
                if let Some(erased_at) = self.erasures.iter().map(|e| e.ts_micros).max() {
                    let names: Vec<TableName> = written.iter().map(|t| t.name.clone()).collect();
                    for name in names {
                        if let Err(e) = self
                            .history
                            .expire_before(&self.lake, &name, erased_at)
                            .await
                        {
                            self.run_info.errors.push(e.to_string());
                        }
                    }
                }
                if let Some(silver) = not_committed.iter().find(|n| n.is_silver_table()) {
                    if !held.is_empty() {
                        self.run_info.errors.push(held_back(silver, &held));
                    }
                }
                // The watermark moves only when silver holds the batches:
                // a silver table whose commit failed gets them next time.
                if !not_committed.iter().any(TableName::is_silver) {
                    if let Err(e) = self.save_watermarks(&new_batches, incremental, ts).await {
                        self.run_info.errors.push(e.to_string());
                        self.run_info.errors.push(format!(
                            "{} was not saved, so the watermarks did not move: the next incremental run reads {} again (a MERGE table takes them once, an appending one twice: run a full refresh then)",
                            crate::lake::checkpoints::table(),
                            match new_batches.len() {
                                1 => "this batch".to_string(),
                                n => format!("these {n} batches"),
                            }
                        ));
                    }
                }
                // The checks of the preview hold when every table committed.
                let previewed = previewed.filter(|_| not_committed.is_empty());
                // A table whose commit failed is still at its previous version:
                // show (and query) that, never rows no version holds.
                for name in not_committed {
                    let committed = self.history.current_data(&name).cloned();
                    let Some(i) = out.tables.iter().position(|t| t.name == name) else {
                        continue;
                    };
                    match committed {
                        Some(batch) => {
                            if let Err(e) =
                                crate::query::register_table(&self.ctx, &name, &batch).await
                            {
                                self.run_info.errors.push(e.to_string());
                            }
                            out.tables[i].batch = batch;
                        }
                        None => {
                            out.tables.remove(i);
                        }
                    }
                }
                self.checks = match previewed {
                    Some(checks) => checks,
                    None => self.evaluate_checks(&out).await,
                };
                self.run_history.push(crate::api::RunRecord {
                    run: self.run_info.runs,
                    ts_micros: ts,
                    incremental,
                    rules: out.rule_stats.clone(),
                    checks: self
                        .checks
                        .iter()
                        .map(|c| (c.id.clone(), c.status))
                        .collect(),
                });
                if self.run_history.len() > crate::api::RUN_HISTORY {
                    self.run_history.remove(0);
                }
                if !out.notes.is_empty() {
                    self.notice = Some(out.notes.join(" "));
                }
                self.run_info.errors.extend(
                    out.silver_errors
                        .iter()
                        .filter(|d| d.scope == "pipeline")
                        .map(|d| d.message.clone()),
                );
                self.run_info.not_refreshed = out.not_refreshed.clone();
                // The retry of the lab's failed job: every silver table built.
                if out.silver_errors.is_empty() {
                    self.lab.job_failed = None;
                }
                let mut diagnostics = std::mem::take(&mut out.silver_errors);
                diagnostics.append(&mut out.gold_errors);
                self.diagnostics = diagnostics;
                self.run_info.ok = self.diagnostics.is_empty() && self.run_info.errors.is_empty();
                self.last_good = Some(out);
                true
            }
            Err(diags) => {
                self.run_info.ok = false;
                self.run_info.errors = diags
                    .iter()
                    .filter(|d| d.scope == "pipeline")
                    .map(|d| d.message.clone())
                    .collect();
                self.diagnostics = diags;
                false
            }
        };
        self.run_info.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        produced
    }

    /// Finds the silver, quarantine and gold tables of `out` whose rows
    /// their current version already holds: each takes that version's
    /// arrays (shown and queried as before: the run's copy is freed, and
    /// checks over it keep their results, [`crate::checks::CheckCache`]).
    /// Returns the others, the tables this run writes a version of. This is
    /// the one comparison of a run's tables with their versions.
    async fn keep_unchanged(&mut self, out: &mut crate::output::RunOutput) -> Vec<TableName> {
        let mut changed = Vec::new();
        for t in out.tables.iter_mut().filter(|t| !t.name.is_bronze()) {
            match self.history.current_data(&t.name) {
                Some(v) if crate::silver::parse_cache::same_arrays(v, &t.batch) => {}
                Some(v) if *v == t.batch => {
                    let v = v.clone();
                    // Registered first: if DataFusion refuses, SQL and the
                    // view keep reading the run's (equal) rows.
                    if crate::query::register_table(&self.ctx, &t.name, &v)
                        .await
                        .is_ok()
                    {
                        t.batch = v;
                    }
                }
                _ => changed.push(t.name.clone()),
            }
        }
        changed
    }

    /// The checks over `out`, taking the results of those whose tables
    /// are unchanged from the last evaluation when reuse is on
    /// ([`Playground::set_reuse_last_run`]).
    async fn evaluate_checks(&mut self, out: &crate::output::RunOutput) -> Vec<CheckResult> {
        let kept = self.reuse_last_run.then_some(&self.check_cache);
        let (checks, cache) = evaluate_reusing(&self.ctx, &self.def, out, self.lang, kept).await;
        self.check_cache = cache;
        checks
    }

    /// The view once `out` is committed, with `checks` evaluated on it:
    /// its tables that get a new version (`changed`, from
    /// [`Self::keep_unchanged`]) are named in [`PipelineView::saving`],
    /// their `version` `None` (no version holds those rows yet). The
    /// session is left as it was.
    fn preview_view(
        &mut self,
        out: &crate::output::RunOutput,
        checks: &[CheckResult],
        changed: &[TableName],
        started: web_time::Instant,
    ) -> PipelineView {
        let mut diagnostics = out.silver_errors.clone();
        diagnostics.extend(out.gold_errors.iter().cloned());
        let mut run_info = self.run_info.clone();
        run_info.not_refreshed = out.not_refreshed.clone();
        run_info.ok = diagnostics.is_empty() && run_info.errors.is_empty();
        run_info.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        let last_good = std::mem::replace(&mut self.last_good, Some(out.clone()));
        let checks = std::mem::replace(&mut self.checks, checks.to_vec());
        let diagnostics = std::mem::replace(&mut self.diagnostics, diagnostics);
        let run_info = std::mem::replace(&mut self.run_info, run_info);
        let mut view = self.view();
        self.last_good = last_good;
        self.checks = checks;
        self.diagnostics = diagnostics;
        self.run_info = run_info;
        // A table whose rows its current version holds commits nothing.
        view.saving = changed.to_vec();
        for t in &mut view.tables {
            if view.saving.contains(&t.name) {
                t.version = None;
            }
        }
        view
    }

    /// Appends a checkpoint row for every bronze table whose watermark
    /// moves and commits them as a new version of `meta.bronze_checkpoints`
    /// (`lake::checkpoints`), after silver holds the batches (seed 000 §5).
    /// Errors: the commit failed; the watermarks then stay where they were
    /// (what the log holds).
    pub(super) async fn save_watermarks(
        &mut self,
        processed: &HashSet<String>,
        incremental: bool,
        ts: i64,
    ) -> crate::error::Result<()> {
        let mut per_table: BTreeMap<TableName, (i64, usize, usize)> = BTreeMap::new();
        for b in self
            .batches
            .iter()
            .filter(|b| processed.contains(&b.batch_id))
        {
            let e = per_table
                .entry(TableName::bronze(&b.table))
                .or_insert((i64::MIN, 0, 0));
            e.0 = e.0.max(b.ingest_ts_micros);
            e.1 += 1;
            e.2 += b.records;
        }
        if per_table.is_empty() {
            return Ok(());
        }
        let mut all = self.checkpoints.clone();
        for (table, (last, batches, rows)) in per_table {
            all.push(Checkpoint {
                bronze_table: table,
                last_ingest_ts_micros: last,
                batches,
                rows,
                mode: if incremental {
                    RunMode::Incremental
                } else {
                    RunMode::Full
                },
                run: self.run_info.runs,
            });
        }
        let table = crate::lake::checkpoints::table();
        let rows = crate::lake::checkpoints::to_batch(&all)?;
        let committed = self
            .history
            .commit_snapshot(
                &self.lake,
                &table,
                ts,
                "WRITE",
                format!("run {}: watermarks saved", self.run_info.runs),
                &rows,
            )
            .await;
        committed?;
        self.checkpoints = all;
        Ok(())
    }
}

/// Why the tables `held` (the quarantine, gold) were not written: `silver`,
/// which this run computed them from, could not be saved.
fn held_back(silver: &TableName, held: &[TableName]) -> String {
    let names: Vec<String> = held.iter().map(TableName::to_string).collect();
    format!(
        "not refreshed: {}, because {silver} could not be saved and this run computed them from it; they stay at their versions until a run succeeds",
        names.join(", ")
    )
}
