//! The twin: the session's definition and bronze with the anti-patterns,
//! run in a throw-away lake of its own.

use super::*;

impl Playground {
    /// The twin: this session's definition and bronze with the lab's
    /// anti-patterns, run once, then once per re-run on the timeline.
    /// Returns it with the records its ingest left out, per bronze table.
    pub(super) async fn build_twin(&self) -> Result<Twin> {
        let mut def = self.def.clone();
        def.anti_patterns.monolithic_silver = self.lab.has(AntiPattern::MonolithicSilver);
        if self.lab.has(AntiPattern::InsertInsteadOfMerge) {
            def.anti_patterns.insert_into = self
                .inserted_tables()
                .into_iter()
                .map(|t| t.name().to_string())
                .collect();
        }
        let mut bronze = self.bronze.clone();
        // Records each ingest anti-pattern left out, per table (each counted once, by the first that drops it).
        let mut left_out = LeftOut::new();
        if self.lab.has(AntiPattern::DedupAtIngest) {
            let (b, n) = drop_duplicates(&self.def, &bronze)?;
            bronze = b;
            left_out.insert(AntiPattern::DedupAtIngest, n);
        }
        if self.lab.has(AntiPattern::DropMalformed) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(Some(PARSE_RULE_ID)))?;
            bronze = b;
            left_out.insert(AntiPattern::DropMalformed, n);
        }
        if self.lab.has(AntiPattern::FilterAtIngest) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(None))?;
            bronze = b;
            left_out.insert(AntiPattern::FilterAtIngest, n);
        }
        let mut overwritten = 0;
        if self.lab.has(AntiPattern::OverwritePartition) {
            let (b, n, gone) = overwrite_partitions(&bronze);
            bronze = b;
            overwritten = gone.len();
            left_out.insert(AntiPattern::OverwritePartition, n);
        }
        let could_not_run = |why: String| {
            EngineError::Request(tr(
                self.lang,
                format!("the twin with the anti-pattern could not run: {why}"),
                format!("двойник с антипаттерном не смог выполниться: {why}"),
            ))
        };
        // A rewrite of bronze comes after gold was published from it.
        let published = if self.lab.on.iter().any(|a| a.rewrites_bronze()) {
            Some(
                self.run_copy_boxed(def.clone(), bronze.clone(), self.lab.reruns())
                    .await
                    .map_err(could_not_run)?,
            )
        } else {
            None
        };
        let mut fixed = BTreeMap::new();
        if self.lab.has(AntiPattern::FixJobInBronze) {
            let amount: BTreeMap<String, String> = self
                .def
                .bronze
                .iter()
                .filter_map(|b| Some((b.name.clone(), amount_column(b)?)))
                .collect();
            let (b, f) = fix_job(&bronze, &self.rejected_events(None), &amount)?;
            bronze = b;
            left_out.insert(
                AntiPattern::FixJobInBronze,
                f.iter()
                    .map(|(t, f)| (t.clone(), f.updated + f.deleted))
                    .collect(),
            );
            fixed = f;
        }
        let mut deleted_customer = None;
        if self.lab.has(AntiPattern::WeeklyDelete) {
            let mut n = BTreeMap::new();
            // The request names a customer the source sent (the session's bronze).
            if let Some((column, value)) = customer_to_delete(&self.def, &self.bronze)? {
                let (b, gone) = weekly_delete(&self.def, &bronze, &column, &value)?;
                bronze = b;
                n = gone;
                deleted_customer = Some((column, value));
            }
            left_out.insert(AntiPattern::WeeklyDelete, n);
        }
        let mut joined = Vec::new();
        let mut join_replay = None;
        if self.lab.has(AntiPattern::JoinAtIngest) {
            let mut now_bronze = bronze.clone();
            for j in self.ingest_joins() {
                let Some(facts) = self.def.bronze_table(&j.facts).cloned() else {
                    continue;
                };
                // A typed bronze keeps no raw record to write the lookup into.
                if facts.mode != crate::model::BronzeMode::Raw {
                    continue;
                }
                let declared = |f: &String| facts.schema.columns.iter().any(|c| &c.name == f);
                if !j.on.iter().all(|(f, _)| declared(f)) {
                    continue;
                }
                let Some(batches) = bronze.get(&j.facts).cloned() else {
                    continue;
                };
                // Each fact record's `on` key, by event id, and its batch.
                let parsed = crate::silver::source::parse_bronze(&facts.schema, &batches)?;
                let text = |n: &str| crate::lab::twin_bronze::column_text(&parsed.rows, n);
                let ids = text("_event_id")?;
                let batch_ids = text("_batch_id")?;
                let cols =
                    j.on.iter()
                        .map(|(f, _)| text(f))
                        .collect::<Result<Vec<_>>>()?;
                let keys: std::collections::HashMap<String, Vec<Option<String>>> = ids
                    .iter()
                    .enumerate()
                    .filter_map(|(r, id)| {
                        Some((id.clone()?, cols.iter().map(|c| c[r].clone()).collect()))
                    })
                    .collect();
                // The lookup as it stood when each fact batch landed, and today.
                let today = self.lookup_rows(&j, self.last_good.as_ref())?;
                let position = |id: &str| self.batches.iter().position(|b| b.batch_id == id);
                let mut as_of = Vec::new();
                for (info, _) in &batches {
                    let upto = position(&info.batch_id).unwrap_or(usize::MAX);
                    let earlier: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>> = self
                        .bronze
                        .iter()
                        .map(|(t, bs)| {
                            let kept = bs
                                .iter()
                                .filter(|(i, _)| position(&i.batch_id).is_some_and(|p| p <= upto))
                                .cloned()
                                .collect();
                            (t.clone(), kept)
                        })
                        .collect();
                    let copy = self
                        .run_copy_boxed(self.def.clone(), earlier, 0)
                        .await
                        .map_err(could_not_run)?;
                    as_of.push((
                        info.batch_id.clone(),
                        self.lookup_rows(&j, copy.last_good.as_ref())?,
                    ));
                }
                let stale = (0..ids.len())
                    .filter(|&r| {
                        let (Some(id), Some(batch)) = (&ids[r], &batch_ids[r]) else {
                            return false;
                        };
                        let k = keys.get(id);
                        as_of
                            .iter()
                            .find(|(b, _)| b == batch)
                            .is_some_and(|(_, then)| {
                                k.and_then(|k| then.get(k)) != k.and_then(|k| today.get(k))
                            })
                    })
                    .count();
                let (b, n) = bake_joined(&bronze, &j, &keys, |bi| {
                    Ok(as_of.get(bi).map(|(_, v)| v.clone()).unwrap_or_default())
                })?;
                bronze = b;
                let (b, _) = bake_joined(&now_bronze, &j, &keys, |_| Ok(today.clone()))?;
                now_bronze = b;
                // Silver reads the stored columns instead of the lookup.
                if let Some(f) = def.bronze.iter_mut().find(|b| b.name == j.facts) {
                    for c in &j.columns {
                        f.schema.columns.push(crate::model::SourceColumn::new(
                            &j.field(c),
                            crate::model::ColumnType::String,
                        ));
                    }
                }
                // One enrichment per column (only a lookup enrichment adds several).
                if let Some(s) = def.silver.iter_mut().find(|s| s.name == j.silver) {
                    if let Some(at) = s.rules.rules.iter().position(|r| r.id == j.rule) {
                        let r = s.rules.rules.remove(at);
                        let expr = r
                            .resolved_expression()
                            .replace(&format!("{}.", j.alias), &format!("joined_{}_", j.alias));
                        let cols = r.output_columns();
                        let exprs =
                            crate::silver::enrich::split_expressions(&expr).unwrap_or_default();
                        let pairs: Vec<(String, String)> = if cols.len() == exprs.len() {
                            cols.into_iter().zip(exprs).collect()
                        } else {
                            vec![(r.column.clone(), expr)]
                        };
                        for (i, (c, e)) in pairs.into_iter().enumerate().rev() {
                            let mut one = r.clone();
                            one.lookup = None;
                            one.params.clear();
                            one.id = if i == 0 {
                                r.id.clone()
                            } else {
                                format!("{}.{}", r.id, i + 1)
                            };
                            one.column = c;
                            one.expression = e;
                            s.rules.rules.insert(at, one);
                        }
                    }
                }
                joined.push((j, n, stale));
            }
            if joined.iter().any(|(_, _, stale)| *stale > 0) {
                join_replay = Some(
                    self.run_copy_boxed(def.clone(), now_bronze, self.lab.reruns())
                        .await
                        .map_err(could_not_run)?,
                );
            }
        }
        let shortcut_reads = if self.lab.has(AntiPattern::Shortcut) {
            def.anti_patterns.gold_reads_bronze = true;
            crate::lab::shortcut::models(&self.def, |t| self.decimal_of(t))
                .map(|m| {
                    m.models
                        .iter()
                        .map(|(name, _)| {
                            (name.clone(), vec![TableName::bronze(&m.table).to_string()])
                        })
                        .collect()
                })
                .unwrap_or_default()
        } else {
            BTreeMap::new()
        };
        // The session's failed silver job fails in the twin too, on the
        // same new records (until the session's retry builds it).
        let twin = match &self.lab.job_failed {
            Some(f) => Box::pin(self.run_copy_failing(def, bronze, self.lab.reruns(), f))
                .await
                .map_err(could_not_run)?,
            None => self
                .run_copy_boxed(def, bronze, self.lab.reruns())
                .await
                .map_err(could_not_run)?,
        };
        let inserted_again = if twin.def.anti_patterns.insert_into.is_empty() {
            0
        } else {
            crate::lab::twin_bronze::repeated(&twin.batches).len()
        };
        Ok(Twin {
            inserted_again,
            twin,
            left_out,
            published,
            fixed,
            deleted_customer,
            overwritten,
            shortcut_reads,
            joined,
            join_replay,
        })
    }

    /// The rows of `join`'s lookup table in `out` (a run's output) as the
    /// join reads them: per `on` key, the looked-up values.
    pub(super) fn lookup_rows(
        &self,
        join: &IngestJoin,
        out: Option<&RunOutput>,
    ) -> Result<std::collections::HashMap<Vec<Option<String>>, Vec<Option<String>>>> {
        let rows = out.and_then(|o| match join.lookup.layer() {
            medallion_protocol::Layer::Bronze => o.typed_bronze.get(join.lookup.name()),
            _ => o.table(&join.lookup),
        });
        match rows {
            Some(rows) => lookup_values(join, rows),
            None => Ok(Default::default()),
        }
    }

    /// A throw-away playground in its own in-memory lake: `def` over
    /// `bronze` (this session's batch order), run once, then `reruns` more
    /// times. Errs with the run's errors when it produced no output.
    /// [`Self::run_copy`] on the heap: its future is large, and the lab
    /// runs several (the debug wasm stack and a test thread's are small).
    pub(super) async fn run_copy_boxed(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
    ) -> std::result::Result<Playground, String> {
        Box::pin(self.run_copy(def, bronze, reruns, false)).await
    }

    /// A replay of `bronze` under `def`: one run over all of it (an INSERT
    /// job then inserts each record once, whatever was delivered twice).
    pub(super) async fn replay_copy_boxed(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
    ) -> std::result::Result<Playground, String> {
        Box::pin(self.run_copy(def, bronze, 0, true)).await
    }

    /// [`Self::run_copy`] for a [`JobFailure`]: the copy runs over the
    /// batches bronze held before the failure, then fails `failure.table`'s
    /// job over all of `bronze` (a monolithic twin refreshes nothing then),
    /// then re-runs `reruns` times. Errs only when the first run failed.
    pub(super) async fn run_copy_failing(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
        failure: &JobFailure,
    ) -> std::result::Result<Playground, String> {
        let earlier: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>> = bronze
            .iter()
            .map(|(t, bs)| {
                let kept = bs
                    .iter()
                    .filter(|(i, _)| failure.before.contains(&i.batch_id))
                    .cloned()
                    .collect();
                (t.clone(), kept)
            })
            .collect();
        // Re-runs on the timeline came before the failure (a re-run after
        // it is the retry, which ends the failure).
        let mut copy = self.run_copy_boxed(def, earlier, reruns).await?;
        let failed = async {
            copy.load_copy_bronze(&self.batches, &self.def, bronze)
                .await?;
            copy.fail_silver_once = Some(failure.table.clone());
            Box::pin(copy.run()).await;
            Ok::<_, EngineError>(())
        };
        Box::pin(failed).await.map_err(|e| e.to_string())?;
        // A monolithic run that failed checked nothing: its checks are the
        // last good run's, over a bronze that has grown since.
        if copy.def.anti_patterns.monolithic_silver && !copy.run_info.ok {
            let lang = self.lang;
            for c in &mut copy.checks {
                c.status = medallion_protocol::checks::CheckStatus::Info;
                c.observed = tr(
                    lang,
                    format!("not evaluated: the monolithic run failed as a whole (the last good run said: {})", c.observed),
                    format!("не оценивалась: монолитный запуск упал целиком (последний успешный запуск показал: {})", c.observed),
                );
            }
        }
        Ok(copy)
    }

    /// Puts `bronze` into this copy as its bronze (batches in `order`'s
    /// order), written and registered so SQL reads it.
    pub(super) async fn load_copy_bronze(
        &mut self,
        order: &[BatchInfo],
        def: &PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
    ) -> Result<()> {
        self.batches = bronze.values().flatten().map(|(i, _)| i.clone()).collect();
        self.batches.sort_by_key(|b| {
            order
                .iter()
                .position(|o| o.batch_id == b.batch_id)
                .unwrap_or(usize::MAX)
        });
        self.bronze = bronze;
        for b in def.bronze.clone() {
            // Gold that reads bronze scans its files: one file with all its rows.
            let rows = self.bronze_rows(&b.name, None)?;
            if rows.num_rows() > 0 {
                let path = format!("{}/part-000001.parquet", TableName::bronze(&b.name).path());
                self.lake
                    .write_parquet(&path, rows.schema(), std::slice::from_ref(&rows))
                    .await?;
            }
            self.register_bronze(&b.name).await?;
        }
        Ok(())
    }

    pub(super) async fn run_copy(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
        replay: bool,
    ) -> std::result::Result<Playground, String> {
        let start = self
            .batches
            .iter()
            .map(|b| b.ingest_ts_micros)
            .max()
            .unwrap_or(0)
            + 1;
        let built = async {
            let mut copy = Playground::with_env(
                Arc::new(FixedClock::new(start)),
                Arc::new(SeededIds::new(0x1ab_7e1_u128)),
            )?;
            copy.reset(&self.example, def, self.lang).await?;
            copy.load_copy_bronze(&self.batches, &self.def, bronze)
                .await?;
            Box::pin(copy.run()).await;
            // An INSERT job takes each delivery as it comes: a batch the
            // source delivered again is inserted again, in a run of its own.
            if !replay && !copy.def.anti_patterns.insert_into.is_empty() {
                for batch in crate::lab::twin_bronze::repeated(&copy.batches) {
                    Box::pin(copy.run_over(true, Some(HashSet::from([batch])))).await;
                }
            }
            for _ in 0..reruns {
                Box::pin(copy.run()).await;
            }
            Ok::<_, EngineError>(copy)
        }
        .await;
        let copy = built.map_err(|e| e.to_string())?;
        if copy.last_good.is_none() || !copy.run_info.ok {
            let mut why: Vec<String> = copy.run_info.errors.clone();
            why.extend(
                copy.diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.id, d.message)),
            );
            return Err(why.join("; "));
        }
        Ok(copy)
    }
}
