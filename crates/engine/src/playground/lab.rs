//! The instructor's lab (seed 000 §6, seed 003 §6): anti-patterns switched
//! on in a twin of the session, the twin built from the same bronze input
//! after every change, events injected into both, and the comparison the
//! page shows ([`LabView`]).
//!
//! The session stays the correct pipeline. The twin is a throw-away
//! playground in its own in-memory lake (never saved): the session's
//! definition with the anti-patterns' behaviour, the session's bronze
//! batches taken in as the ingest anti-patterns would have taken them, one
//! run of the job over them, then one more run per re-run on the timeline.

use std::collections::HashSet;

use datafusion::arrow::array::{Array, StringArray};
use serde::{Deserialize, Serialize};

use crate::env::{FixedClock, SeededIds};
use crate::lab::compare::{compare_checks, compare_gold};
use crate::lab::health::{evaluate, HealthFacts};
use crate::lab::twin_bronze::{drop_duplicates, keep_passed, overwrite_partitions};
use crate::lab::{
    AntiPattern, HealthCheck, HealthSign, LabCount, LabEvent, LabEventRecord, LabView, SignState,
};
use crate::silver::source::PARSE_RULE_ID;

use super::*;

/// The lab's state, saved with the session (`meta.session`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// Anti-patterns on, in [`AntiPattern::ALL`]'s order.
    pub on: Vec<AntiPattern>,
    /// Events since the lab was last switched, oldest first.
    pub timeline: Vec<LabEventRecord>,
}

impl LabState {
    /// Is there anything to show (a switch on, or an event)?
    pub fn active(&self) -> bool {
        !self.on.is_empty() || !self.timeline.is_empty()
    }

    fn has(&self, a: AntiPattern) -> bool {
        self.on.contains(&a)
    }

    /// Re-runs of the job on the timeline (the twin runs once more for each).
    fn reruns(&self) -> usize {
        self.timeline
            .iter()
            .filter(|e| e.event == LabEvent::RerunJob)
            .count()
    }
}

/// English or Russian.
fn tr(lang: Lang, en: String, ru: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

impl Playground {
    /// Switches the lab to exactly `on`; its timeline goes on (the twin
    /// replays its re-runs), except that all off (`on` empty) clears it.
    pub(super) async fn set_lab(&mut self, on: Vec<AntiPattern>) -> Result<()> {
        let on: Vec<AntiPattern> = AntiPattern::ALL
            .iter()
            .copied()
            .filter(|a| on.contains(a))
            .collect();
        if on.is_empty() {
            self.lab.timeline.clear();
        }
        self.lab.on = on;
        self.refresh_lab().await;
        Ok(())
    }

    /// Injects `event` into the session and, with the lab on, its twin.
    pub(super) async fn lab_event(&mut self, event: LabEvent) -> Result<()> {
        if self.def.bronze.is_empty() {
            return Err(EngineError::Request(
                "load a scenario first: there is no job to run again".into(),
            ));
        }
        let lang = self.lang;
        match event {
            LabEvent::RerunJob => {
                let before = self.table_versions();
                let rows_before = self.row_counts();
                self.run().await;
                let after = self.table_versions();
                let rows_after = self.row_counts();
                let changed: Vec<String> = after
                    .iter()
                    .filter(|(t, v)| before.get(*t) != Some(*v))
                    .map(|(t, v)| {
                        let rows = |m: &BTreeMap<TableName, usize>| {
                            m.get(t).map_or("-".to_string(), |n| n.to_string())
                        };
                        format!(
                            "{t}: v{} → v{v} ({} → {} rows)",
                            before.get(t).map_or("-".to_string(), |v| v.to_string()),
                            rows(&rows_before),
                            rows(&rows_after)
                        )
                    })
                    .collect();
                let correct = if !self.run_info.ok {
                    tr(
                        lang,
                        format!("the run failed: {}", self.run_info.errors.join("; ")),
                        format!("запуск не удался: {}", self.run_info.errors.join("; ")),
                    )
                } else if changed.is_empty() {
                    tr(
                        lang,
                        "no table changed: the job wrote the same rows again (MERGE and a full refresh are idempotent), so no new version".into(),
                        "ни одна таблица не изменилась: джоба записала те же строки (MERGE и полная перезапись идемпотентны), новой версии нет".into(),
                    )
                } else {
                    changed.join("; ")
                };
                let twin_before = self.lab_view.as_ref().map(|v| v.counts.clone());
                self.lab.timeline.push(LabEventRecord {
                    n: self.lab.timeline.len() as u32 + 1,
                    event,
                    correct,
                    anti: String::new(),
                });
                self.refresh_lab().await;
                let anti = match (&twin_before, &self.lab_view) {
                    _ if self.lab.on.is_empty() => String::new(),
                    (Some(b), Some(v)) if v.error.is_none() => {
                        let moved: Vec<String> = v
                            .counts
                            .iter()
                            .filter(|c| !c.table.is_bronze())
                            .filter_map(|c| {
                                let was = b.iter().find(|o| o.table == c.table)?.anti;
                                (was != c.anti).then(|| {
                                    let n =
                                        |x: Option<usize>| x.map_or("-".into(), |n| n.to_string());
                                    format!("{}: {} → {} rows", c.table, n(was), n(c.anti))
                                })
                            })
                            .collect();
                        if moved.is_empty() {
                            tr(
                                lang,
                                "no table changed".into(),
                                "ни одна таблица не изменилась".into(),
                            )
                        } else {
                            moved.join("; ")
                        }
                    }
                    (_, Some(v)) => v.error.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                if let Some(last) = self.lab.timeline.last_mut() {
                    last.anti = anti.clone();
                }
                if let Some(v) = &mut self.lab_view {
                    v.timeline = self.lab.timeline.clone();
                }
            }
        }
        Ok(())
    }

    /// The newest version of every silver, quarantine and gold table.
    fn table_versions(&self) -> BTreeMap<TableName, u64> {
        self.history
            .all()
            .into_iter()
            .filter(|(t, _)| !t.is_bronze() && t.layer() != medallion_protocol::Layer::Meta)
            .filter_map(|(t, v)| Some((t, v.last()?.version)))
            .collect()
    }

    /// Rows of every table of the last good run (the quarantine: open rows).
    fn row_counts(&self) -> BTreeMap<TableName, usize> {
        let Some(out) = self.last_good.as_ref() else {
            return BTreeMap::new();
        };
        out.tables
            .iter()
            .map(|t| {
                let n = if t.name.is_quarantine() {
                    t.batch
                        .column_by_name("closed_in_run")
                        .map_or(t.batch.num_rows(), |c| c.null_count())
                } else {
                    t.batch.num_rows()
                };
                (t.name.clone(), n)
            })
            .collect()
    }

    /// Rebuilds the twin and the comparison (after every change while the
    /// lab is active); a twin that cannot be built is the lab's error, never
    /// the session's.
    pub(super) async fn refresh_lab(&mut self) {
        if !self.lab.active() {
            self.lab_view = None;
            return;
        }
        let mut view = LabView {
            on: self.lab.on.clone(),
            timeline: self.lab.timeline.clone(),
            ..Default::default()
        };
        let mine = self.health(None, 0).await;
        let mut theirs = None;
        if !self.lab.on.is_empty() {
            match self.build_twin().await {
                Ok((twin, left_out)) => {
                    if let Err(e) = self.compare_twin(&twin, &left_out, &mut view).await {
                        view.error = Some(e.to_string());
                    }
                    theirs = Some(
                        twin.health(Some((&left_out, &self.lab.on)), self.lab.reruns())
                            .await,
                    );
                }
                Err(e) => view.error = Some(e.to_string()),
            }
        }
        view.health = HealthSign::ALL
            .iter()
            .enumerate()
            .map(|(i, sign)| HealthCheck {
                sign: *sign,
                correct: mine[i].clone(),
                anti: theirs.as_ref().map(|t| t[i].clone()),
            })
            .collect();
        self.lab_view = Some(view);
    }

    /// The twin: this session's definition and bronze with the lab's
    /// anti-patterns, run once, then once per re-run on the timeline.
    /// Returns it with the records its ingest left out, per bronze table.
    async fn build_twin(&self) -> Result<(Playground, BTreeMap<String, usize>)> {
        let mut def = self.def.clone();
        if self.lab.has(AntiPattern::InsertInsteadOfMerge) {
            def.anti_patterns.insert_into = self
                .inserted_tables()
                .into_iter()
                .map(|t| t.name().to_string())
                .collect();
        }
        let mut bronze = self.bronze.clone();
        let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
        let mut add = |n: BTreeMap<String, usize>| {
            for (t, k) in n {
                *left_out.entry(t).or_default() += k;
            }
        };
        if self.lab.has(AntiPattern::DedupAtIngest) {
            let (b, n) = drop_duplicates(&self.def, &bronze)?;
            bronze = b;
            add(n);
        }
        if self.lab.has(AntiPattern::DropMalformed) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(Some(PARSE_RULE_ID)))?;
            bronze = b;
            add(n);
        }
        if self.lab.has(AntiPattern::FilterAtIngest) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(None))?;
            bronze = b;
            add(n);
        }
        if self.lab.has(AntiPattern::OverwritePartition) {
            let (b, n, _) = overwrite_partitions(&bronze);
            bronze = b;
            add(n);
        }
        let twin = self
            .run_copy(def, bronze, self.lab.reruns())
            .await
            .map_err(|why| {
                EngineError::Request(format!(
                    "the twin with the anti-pattern could not run: {why}"
                ))
            })?;
        Ok((twin, left_out))
    }

    /// A throw-away playground in its own in-memory lake: `def` over
    /// `bronze` (this session's batch order), run once, then `reruns` more
    /// times. Errs with the run's errors when it produced no output.
    async fn run_copy(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
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
            copy.batches = bronze.values().flatten().map(|(i, _)| i.clone()).collect();
            copy.batches.sort_by_key(|b| {
                self.batches
                    .iter()
                    .position(|o| o.batch_id == b.batch_id)
                    .unwrap_or(usize::MAX)
            });
            copy.bronze = bronze;
            for b in self.def.bronze.clone() {
                copy.register_bronze(&b.name).await?;
            }
            copy.run().await;
            for _ in 0..reruns {
                copy.run().await;
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

    /// The five signs of a healthy medallion for this playground (the
    /// session, or a twin: `twin` gives the records its ingest left out and
    /// the anti-patterns that did it; it ran `reruns` times more than once).
    async fn health(
        &self,
        twin: Option<(&BTreeMap<String, usize>, &[AntiPattern])>,
        reruns: usize,
    ) -> Vec<SignState> {
        let lang = self.lang;
        let out = self.last_good.as_ref();
        let mut lost: Vec<(TableName, usize, String)> = Vec::new();
        for b in &self.def.bronze {
            let t = TableName::bronze(&b.name);
            let dropped: usize = self
                .batches
                .iter()
                .filter(|i| i.table == b.name)
                .map(|i| i.dropped_records)
                .sum();
            if dropped > 0 {
                lost.push((t.clone(), dropped, "DROPMALFORMED".into()));
            }
            if let Some((left_out, on)) = twin {
                let n = left_out.get(&b.name).copied().unwrap_or(0);
                if n > 0 {
                    let how: Vec<&str> = on
                        .iter()
                        .filter(|a| a.layer() == "bronze")
                        .map(|a| a.key())
                        .collect();
                    lost.push((t, n, how.join(", ")));
                }
            }
        }
        let mut gold = Vec::new();
        let mut lineage = Vec::new();
        for s in &self.def.silver {
            let t = TableName::silver(&s.name);
            let mut inputs = vec![TableName::bronze(&s.source).to_string()];
            inputs.extend(
                s.rules
                    .rules
                    .iter()
                    .filter_map(|r| r.lookup.as_ref().map(|l| l.table.to_string())),
            );
            let known = if self.def.bronze_table(&s.source).is_some() {
                Ok(inputs)
            } else {
                Err(tr(
                    lang,
                    format!(
                        "reads {}, which does not exist",
                        TableName::bronze(&s.source)
                    ),
                    format!("читает {}, которой нет", TableName::bronze(&s.source)),
                ))
            };
            lineage.push((t.clone(), known, !self.history.versions(&t).is_empty()));
        }
        for g in &self.def.gold {
            let t = TableName::gold(&g.name);
            if let Some(b) = out.and_then(|o| o.table(&t)) {
                gold.push((
                    t.clone(),
                    b.schema(),
                    crate::gold::key_columns(&self.ctx, g).await,
                ));
            }
            lineage.push((
                t.clone(),
                crate::gold::inputs(&self.ctx, &g.sql).await,
                !self.history.versions(&t).is_empty(),
            ));
        }
        let rebuild_differs = if self.mode == RunMode::Full
            && reruns == 0
            && self.def.gold.iter().all(|g| g.merge_on.is_empty())
        {
            None
        } else {
            match self
                .run_copy(self.def.clone(), self.bronze.clone(), 0)
                .await
            {
                Ok(fresh) => {
                    let mut differs = Vec::new();
                    for g in &self.def.gold {
                        let t = TableName::gold(&g.name);
                        let (a, b) = (
                            out.and_then(|o| o.table(&t)),
                            fresh.last_good.as_ref().and_then(|o| o.table(&t)),
                        );
                        if let (Some(a), Some(b)) = (a, b) {
                            let n = crate::lake::versions::row_diff(a, b)
                                .map(|(x, y)| x + y)
                                .unwrap_or(usize::MAX);
                            if n > 0 {
                                differs.push((t, n));
                            }
                        }
                    }
                    Some(Ok(differs))
                }
                Err(why) => Some(Err(why)),
            }
        };
        evaluate(&HealthFacts {
            lang,
            bronze_records: self
                .bronze
                .values()
                .flatten()
                .map(|(_, r)| r.num_rows())
                .sum(),
            lost,
            erased: self.batches.iter().map(|b| b.erased_records).sum(),
            reads_bronze: out.map(|o| o.gold_reads_bronze.clone()).unwrap_or_default(),
            gold,
            rebuild_differs,
            lineage,
        })
    }

    /// The silver tables the INSERT anti-pattern writes: those with a MERGE
    /// key that no other silver table looks up (the facts the job appends;
    /// a dimension looked up stays merged, as its own job would keep it),
    /// or every merged table when each is a lookup.
    fn inserted_tables(&self) -> Vec<TableName> {
        let merged: Vec<TableName> = self
            .def
            .silver
            .iter()
            .filter(|s| s.merge.is_some())
            .map(|s| TableName::silver(&s.name))
            .collect();
        let looked_up: HashSet<TableName> = self
            .def
            .silver
            .iter()
            .flat_map(|s| s.rules.rules.iter())
            .filter_map(|r| r.lookup.as_ref().map(|l| l.table.clone()))
            .collect();
        let facts: Vec<TableName> = merged
            .iter()
            .filter(|t| !looked_up.contains(*t))
            .cloned()
            .collect();
        if facts.is_empty() {
            merged
        } else {
            facts
        }
    }

    /// `_event_id`s of the bronze records the last run's rules kept out of
    /// silver (open quarantine rows; ambiguous merge ties aside), or only
    /// those of rule `only` (`parse`: records that do not fit the schema).
    fn rejected_events(&self, only: Option<&str>) -> HashSet<String> {
        let Some(q) = self
            .last_good
            .as_ref()
            .and_then(|o| o.table(TableName::quarantine()))
        else {
            return HashSet::new();
        };
        let col = |n: &str| {
            q.column_by_name(n)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
        };
        let (Some(ids), Some(rules)) = (col("_event_id"), col("rule_id")) else {
            return HashSet::new();
        };
        let closed = q.column_by_name("closed_in_run");
        (0..q.num_rows())
            .filter(|&i| closed.is_none_or(|c| c.is_null(i)) && rules.value(i) != "merge")
            .filter(|&i| only.is_none_or(|r| rules.value(i) == r))
            .map(|i| ids.value(i).to_string())
            .collect()
    }

    /// Fills `view` with the comparison of this session and `twin`.
    async fn compare_twin(
        &self,
        twin: &Playground,
        left_out: &BTreeMap<String, usize>,
        view: &mut LabView,
    ) -> Result<()> {
        let lang = self.lang;
        let mine = self.row_counts();
        let theirs = twin.row_counts();
        let mut names: Vec<TableName> = self
            .def
            .bronze
            .iter()
            .map(|b| TableName::bronze(&b.name))
            .collect();
        names.extend(self.def.silver.iter().map(|s| TableName::silver(&s.name)));
        names.push(TableName::quarantine());
        names.extend(self.def.gold.iter().map(|g| TableName::gold(&g.name)));
        view.counts = names
            .iter()
            .map(|t| LabCount {
                table: t.clone(),
                correct: if t.is_bronze() {
                    self.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    mine.get(t).copied()
                },
                anti: if t.is_bronze() {
                    twin.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    theirs.get(t).copied()
                },
            })
            .collect();
        for g in &self.def.gold {
            let name = TableName::gold(&g.name);
            let key = crate::gold::key_columns(&self.ctx, g).await;
            let error =
                diagnostics_for_gold(twin, &g.name).or_else(|| diagnostics_for_gold(self, &g.name));
            view.gold.push(compare_gold(
                name.clone(),
                &key,
                self.last_good.as_ref().and_then(|o| o.table(&name)),
                twin.last_good.as_ref().and_then(|o| o.table(&name)),
                error,
            )?);
        }
        view.checks = compare_checks(&self.checks, &twin.checks);
        view.findings = self.findings(view, left_out, twin, lang);
        Ok(())
    }

    /// What exposes each anti-pattern that is on, from the figures compared.
    fn findings(
        &self,
        view: &LabView,
        left_out: &BTreeMap<String, usize>,
        twin: &Playground,
        lang: Lang,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let count = |t: &TableName| view.counts.iter().find(|c| &c.table == t);
        for a in &view.on {
            match a {
                AntiPattern::OverwritePartition | AntiPattern::DropMalformed => {
                    for b in &self.def.bronze {
                        let t = TableName::bronze(&b.name);
                        let n = left_out.get(&b.name).copied().unwrap_or(0);
                        let Some(c) = count(&t) else { continue };
                        let (sent, kept) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                        if *a == AntiPattern::DropMalformed {
                            if n > 0 {
                                out.push(tr(
                                    lang,
                                    format!("{t}: DROPMALFORMED dropped {n} of {sent} records that did not fit the declared schema; bronze holds {kept}. With PERMISSIVE they stay, with their reason, and reach the quarantine."),
                                    format!("{t}: DROPMALFORMED отбросил {n} из {sent} записей, не подошедших к объявленной схеме; в bronze {kept}. С PERMISSIVE они остаются вместе с причиной и попадают в карантин."),
                                ));
                            }
                            continue;
                        }
                        let batches =
                            |p: &Playground| p.batches.iter().filter(|i| i.table == b.name).count();
                        let (mine, theirs) = (batches(self), batches(twin));
                        if mine > theirs {
                            out.push(tr(
                                lang,
                                format!("{t}: {} of its {mine} batches were overwritten by a later batch of the same day; their {n} records are gone ({sent} → {kept}). Time travel to the versions they made and a replay of that day can only show the last batch.", mine - theirs),
                                format!("{t}: {} из {mine} батчей перезаписаны более поздним батчем того же дня; их {n} записей больше нет ({sent} → {kept}). Time travel к их версиям и replay этого дня покажут только последний батч.", mine - theirs),
                            ));
                        }
                    }
                    if *a == AntiPattern::OverwritePartition
                        && !out
                            .iter()
                            .any(|f| f.contains("overwritten") || f.contains("перезаписаны"))
                    {
                        out.push(tr(
                            lang,
                            "Every bronze table has one batch a day so far, so nothing is overwritten yet: drop a second file on a bronze table (or load the landing-zone retry scenario).".into(),
                            "Пока у каждой таблицы bronze один батч в день, перезаписывать нечего: добавьте второй файл в таблицу bronze (или загрузите сценарий с повторной выгрузкой).".into(),
                        ));
                    }
                }
                AntiPattern::DedupAtIngest | AntiPattern::FilterAtIngest => {
                    for b in &self.def.bronze {
                        let n = left_out.get(&b.name).copied().unwrap_or(0);
                        let Some(c) = count(&TableName::bronze(&b.name)) else {
                            continue;
                        };
                        let (sent, kept) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                        if n == 0 {
                            continue;
                        }
                        let t = TableName::bronze(&b.name);
                        out.push(match a {
                            AntiPattern::DedupAtIngest => tr(
                                lang,
                                format!("{t}: the source sent {sent} records, bronze with dropDuplicates holds {kept}. The {n} dropped (re-deliveries, earlier changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known."),
                                format!("{t}: источник прислал {sent} записей, bronze с dropDuplicates хранит {kept}. {n} отброшенных (повторные доставки, прежние изменения ключа) не учесть при сверке, не переиграть и не проверить: что прислал источник, больше неизвестно."),
                            ),
                            _ => tr(
                                lang,
                                format!("{t}: {n} of the {sent} records the source sent failed a business rule and were never written. An audit query over bronze for them finds 0 rows (the correct bronze: {n}); a rule relaxed later cannot bring them back by replay."),
                                format!("{t}: {n} из {sent} присланных записей не прошли бизнес-правило и не записаны. Аудит-запрос к bronze находит 0 строк (в правильном bronze: {n}); ослабленное позже правило не вернёт их через replay."),
                            ),
                        });
                    }
                    if *a == AntiPattern::FilterAtIngest {
                        if let Some(q) = count(&TableName::quarantine()) {
                            if q.correct != q.anti {
                                out.push(tr(
                                    lang,
                                    format!("silver.quarantine: {} open rows in the correct pipeline, {} with the filter at ingest: nobody sees what was rejected, or why.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                    format!("silver.quarantine: {} открытых строк в правильном пайплайне, {} с фильтром при загрузке: никто не видит, что отброшено и почему.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                ));
                            }
                        }
                    }
                }
                AntiPattern::InsertInsteadOfMerge => {
                    let reruns = self.lab.reruns();
                    let merged = self.inserted_tables();
                    if merged.is_empty() {
                        out.push(tr(
                            lang,
                            "No silver table of this scenario is written by MERGE, so INSERT changes nothing here: load the Kafka orders scenario.".into(),
                            "В этом сценарии нет таблиц silver, которые пишутся через MERGE, поэтому INSERT здесь ничего не меняет: загрузите сценарий заказов из Kafka.".into(),
                        ));
                    } else if reruns == 0 {
                        let names = merged
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", ");
                        out.push(tr(
                            lang,
                            format!("One run of the job gives the same silver with INSERT INTO ({names}) as with MERGE. Now let the orchestrator re-run the job (Events): INSERT appends the same rows again, MERGE changes nothing."),
                            format!("Один запуск джобы даёт тот же silver с INSERT INTO ({names}), что и с MERGE. Теперь пусть оркестратор перезапустит джобу (События): INSERT допишет те же строки ещё раз, MERGE ничего не изменит."),
                        ));
                    } else {
                        for t in &merged {
                            if let Some(c) = count(t) {
                                out.push(tr(
                                    lang,
                                    format!("{t}: {} rows with MERGE, {} with INSERT after {} run(s) of the same job: every re-run appended the same rows again.", c.correct.unwrap_or(0), c.anti.unwrap_or(0), reruns + 1),
                                    format!("{t}: {} строк с MERGE, {} с INSERT после {} запуск(а/ов) той же джобы: каждый перезапуск дописал те же строки ещё раз.", c.correct.unwrap_or(0), c.anti.unwrap_or(0), reruns + 1),
                                ));
                            }
                        }
                    }
                }
            }
        }
        for g in &view.gold {
            for m in &g.measures {
                if m.correct != m.anti {
                    let ratio = m
                        .ratio
                        .map(|r| format!(" (×{})", medallion_protocol::lab::ratio_text(r)))
                        .unwrap_or_default();
                    out.push(tr(
                        lang,
                        format!("{}: total {} is {} in the correct pipeline and {}{ratio} with the anti-pattern.", g.model, m.column, m.correct, m.anti),
                        format!("{}: итог {} — {} в правильном пайплайне и {}{ratio} с антипаттерном.", g.model, m.column, m.correct, m.anti),
                    ));
                }
            }
        }
        out
    }
}

/// The message of gold model `model`'s failure in `pg`, if it failed.
fn diagnostics_for_gold(pg: &Playground, model: &str) -> Option<String> {
    pg.diagnostics
        .iter()
        .find(|d| d.scope == "gold" && d.id == model)
        .map(|d| d.message.clone())
}
