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

use crate::bronze::IngestOptions;
use crate::env::{FixedClock, SeededIds};
use crate::lab::compare::{compare_checks, compare_gold};
use crate::lab::health::{evaluate, HealthFacts};
use crate::lab::twin_bronze::{
    bake_joined, customer_to_delete, drop_duplicates, fix_job, keep_passed, lookup_values,
    overwrite_partitions, weekly_delete, FixedRecords, IngestJoin,
};
use crate::lab::{amount_column, rows_word, tr, Bi};
use crate::lab::{
    AntiPattern, HealthCheck, HealthSign, LabCount, LabEvent, LabEventRecord, LabView, SignState,
};
use crate::silver::source::PARSE_RULE_ID;

use super::*;

mod events;
mod findings;
mod health;
mod twin;

/// The lab's state, saved with the session (`meta.session`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// Anti-patterns on, in [`AntiPattern::ALL`]'s order.
    pub on: Vec<AntiPattern>,
    /// Events since the lab was last switched, oldest first.
    pub timeline: Vec<LabEventRecord>,
    /// The last "a silver job fails" event, until a run builds every silver
    /// table again (the retry): the twin fails the same job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_failed: Option<JobFailure>,
}

/// A silver job the lab failed ([`LabEvent::SilverJobFails`]), for the twin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFailure {
    /// The silver table whose job failed (name without the layer).
    pub table: String,
    /// The batches (`_batch_id`) bronze held before the event's new
    /// records: the twin runs over them first, then fails over all.
    pub before: Vec<String>,
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

/// Records each ingest anti-pattern left out of the twin's bronze, per table.
type LeftOut = BTreeMap<AntiPattern, BTreeMap<String, usize>>;

/// Records a late-records event sends (the source's newest ones, re-dated).
const LATE_RECORDS: usize = 2;
/// How many days back a late record's business date is.
const LATE_DAYS: i64 = 3;

/// The first DATE or TIMESTAMP column a bronze table declares (a record's
/// business date).
fn date_column(b: &crate::model::BronzeTableDef) -> Option<String> {
    b.schema
        .columns
        .iter()
        .find(|c| {
            matches!(
                c.data_type,
                crate::model::ColumnType::Date | crate::model::ColumnType::Timestamp
            )
        })
        .map(|c| c.name.clone())
}

/// A file's name without its extension (`orders` of `orders.csv`).
fn file_stem(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// The newest `n` of `texts` that silver did not reject, oldest first
/// (the newest `n` of all when it rejected each).
fn newest_accepted_n(texts: &[String], rejected: &HashSet<String>, n: usize) -> Vec<String> {
    let ok: Vec<String> = texts
        .iter()
        .filter(|t| !rejected.contains(*t))
        .cloned()
        .collect();
    let from = if ok.is_empty() { texts } else { &ok };
    from[from.len().saturating_sub(n)..].to_vec()
}

/// The newest of `texts` that silver did not reject (the newest of all
/// when it rejected each), as a one-record list; empty for no texts.
fn newest_accepted(texts: &[String], rejected: &HashSet<String>) -> Vec<String> {
    texts
        .iter()
        .rev()
        .find(|t| !rejected.contains(*t))
        .or_else(|| texts.last())
        .cloned()
        .into_iter()
        .collect()
}

/// The twin and what its anti-patterns did to it.
struct Twin {
    /// The twin as it stands (after any rewrite of its bronze, a replay).
    twin: Playground,
    /// Records each anti-pattern left out of (or rewrote in) its bronze, per table.
    left_out: LeftOut,
    /// With a bronze rewrite on ([`AntiPattern::rewrites_bronze`]): the
    /// twin as it was when its gold was published, before the rewrite.
    published: Option<Playground>,
    /// The weekly fix job's UPDATEs and DELETEs, per bronze table.
    fixed: BTreeMap<String, FixedRecords>,
    /// The weekly DELETE request's customer: (column, value).
    deleted_customer: Option<(String, String)>,
    /// Batches an OVERWRITE replaced (their versions are gone).
    overwritten: usize,
    /// The shortcut's gold models, each with the bronze tables it reads.
    shortcut_reads: BTreeMap<String, Vec<String>>,
    /// The JOIN at ingest: each join, the records it wrote into, and how
    /// many of those hold values the lookup no longer has.
    joined: Vec<(IngestJoin, usize, usize)>,
    /// With a JOIN at ingest: the twin as a replay of the ingest today
    /// would build it (every record joined with today's lookup).
    join_replay: Option<Playground>,
    /// With INSERT instead of MERGE: the runs that inserted a batch the
    /// source delivered again (one each, after the first run).
    inserted_again: usize,
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
        Box::pin(self.refresh_lab()).await;
        Ok(())
    }

    /// Injects `event` into the session and, with the lab on, its twin.
    pub(super) async fn lab_event(&mut self, event: LabEvent) -> Result<()> {
        if self.def.bronze.is_empty() {
            return Err(EngineError::Request(tr(
                self.lang,
                "load a scenario first: there is no pipeline to send the event to".into(),
                "сначала загрузите сценарий: событию некуда прийти".into(),
            )));
        }
        let lang = self.lang;
        let before = self.table_versions();
        let rows_before = self.row_counts();
        let twin_before = self.lab_view.as_ref().map(|v| v.counts.clone());
        let twin_gold_before = self
            .lab_view
            .as_ref()
            .map(|v| v.gold.clone())
            .unwrap_or_default();
        // Everything an event needs is read before it writes anything: a
        // refusal (no file to re-send, no Kafka topic) changes nothing.
        let retrying = self.lab.job_failed.clone();
        let lesson = match event {
            LabEvent::RerunJob => {
                self.run().await;
                // The retry of a failed silver job.
                match (&retrying, &self.lab.job_failed) {
                    (Some(f), None) => {
                        let t = TableName::silver(&f.table);
                        Some(Bi::new(
                            format!("The retry: the job of {t} ran again and succeeded, so every silver table and gold model is up to date."),
                            format!("Повтор: джоба {t} выполнилась снова и успешно, теперь все таблицы silver и gold-модели актуальны."),
                        ))
                    }
                    _ => None,
                }
            }
            LabEvent::ResendFile => Some(self.resend_file().await?),
            LabEvent::TechnicalFailure => Some(self.technical_failure().await?),
            LabEvent::KafkaRedelivery => Some(self.kafka_redeliver().await?),
            LabEvent::DimensionChange => Some(self.dimension_change().await?),
            LabEvent::SilverJobFails => Some(self.silver_job_fails().await?),
            LabEvent::SchemaDrift | LabEvent::BusinessError | LabEvent::LateRecords => {
                Some(self.send_edited(event).await?)
            }
        };
        let after = self.table_versions();
        let rows_after = self.row_counts();
        let n = |m: &BTreeMap<TableName, usize>, t: &TableName| {
            m.get(t).map_or("-".to_string(), |n| n.to_string())
        };
        let changed = |lang: Lang| -> Vec<String> {
            match event {
                LabEvent::RerunJob => after
                    .iter()
                    .filter(|(t, v)| before.get(*t) != Some(*v))
                    .map(|(t, v)| {
                        format!(
                            "{t}: v{} → v{v} ({} → {} {})",
                            before.get(t).map_or("-".to_string(), |v| v.to_string()),
                            n(&rows_before, t),
                            n(&rows_after, t),
                            rows_word(lang, rows_after.get(t).copied().unwrap_or(0))
                        )
                    })
                    .collect(),
                // A table whose rows changed but not their number says so by its new version.
                _ => rows_after
                    .keys()
                    .filter_map(|t| {
                        if rows_before.get(t) != rows_after.get(t) {
                            Some(format!(
                                "{t}: {} → {} {}",
                                n(&rows_before, t),
                                n(&rows_after, t),
                                rows_word(lang, rows_after.get(t).copied().unwrap_or(0))
                            ))
                        } else if before.get(t) != after.get(t) {
                            let v = |m: &BTreeMap<TableName, u64>| {
                                m.get(t).map_or("-".to_string(), |v| format!("v{v}"))
                            };
                            // The new version's commit counts the rows it replaced.
                            let changed = self
                                .history
                                .versions(t)
                                .last()
                                .map_or(0, |x| x.rows_added.max(x.rows_removed));
                            Some(tr(
                                lang,
                                format!(
                                    "{t}: {} {}, {changed} changed ({} → {})",
                                    n(&rows_after, t),
                                    rows_word(lang, rows_after.get(t).copied().unwrap_or(0)),
                                    v(&before),
                                    v(&after)
                                ),
                                format!(
                                    "{t}: {} {}, изменено {changed} ({} → {})",
                                    n(&rows_after, t),
                                    rows_word(lang, rows_after.get(t).copied().unwrap_or(0)),
                                    v(&before),
                                    v(&after)
                                ),
                            ))
                        } else {
                            None
                        }
                    })
                    .collect(),
            }
        };
        let outcome = |lang: Lang| -> String {
            let changed = changed(lang);
            if !self.run_info.ok && !changed.is_empty() && event == LabEvent::SilverJobFails {
                // The lesson says what waits, in both languages.
                changed.join("; ")
            } else if !self.run_info.ok && !changed.is_empty() {
                // A run that refreshed some tables and held others back.
                tr(
                    lang,
                    format!(
                        "{}; not refreshed: {}",
                        changed.join("; "),
                        self.run_info.errors.join("; ")
                    ),
                    format!(
                        "{}; не обновлено: {}",
                        changed.join("; "),
                        self.run_info.errors.join("; ")
                    ),
                )
            } else if !self.run_info.ok && self.run_info.errors.is_empty() {
                let why: Vec<String> = self
                    .diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.id, d.message))
                    .collect();
                tr(
                    lang,
                    format!("the run failed: {}", why.join("; ")),
                    format!("запуск не удался: {}", why.join("; ")),
                )
            } else if !self.run_info.ok {
                tr(
                    lang,
                    format!("the run failed: {}", self.run_info.errors.join("; ")),
                    format!("запуск не удался: {}", self.run_info.errors.join("; ")),
                )
            } else if changed.is_empty() && event == LabEvent::RerunJob {
                tr(
                lang,
                "no table changed: the job wrote the same rows again (MERGE and a full refresh are idempotent), so no new version".into(),
                "ни одна таблица не изменилась: джоба записала те же строки (MERGE и полный пересчёт идемпотентны), новой версии нет".into(),
            )
            } else if changed.is_empty() {
                tr(
                    lang,
                    "no table changed".into(),
                    "ни одна таблица не изменилась".into(),
                )
            } else {
                changed.join("; ")
            }
        };
        let correct = |lang: Lang| match &lesson {
            Some(l) => format!("{} {}", l.get(lang), outcome(lang)),
            None => outcome(lang),
        };
        let correct = Bi::new(correct(Lang::En), correct(Lang::Ru));
        self.lab.timeline.push(LabEventRecord {
            n: self.lab.timeline.len() as u32 + 1,
            event,
            correct: correct.get(lang).to_string(),
            anti: String::new(),
            texts: None,
        });
        Box::pin(self.refresh_lab()).await;
        let anti = |lang: Lang| -> String {
            match (&twin_before, &self.lab_view) {
                _ if self.lab.on.is_empty() => String::new(),
                (Some(b), Some(v)) if v.error.is_none() => {
                    let moved: Vec<String> = v
                        .counts
                        .iter()
                        .filter(|c| event != LabEvent::RerunJob || !c.table.is_bronze())
                        .filter_map(|c| {
                            let was = b.iter().find(|o| o.table == c.table)?.anti;
                            (was != c.anti).then(|| {
                                let n = |x: Option<usize>| x.map_or("-".into(), |n| n.to_string());
                                format!(
                                    "{}: {} → {} {}",
                                    c.table,
                                    n(was),
                                    n(c.anti),
                                    rows_word(lang, c.anti.unwrap_or(0))
                                )
                            })
                        })
                        .collect();
                    let mut moved = moved;
                    // Gold whose row count stayed but whose values moved.
                    for g in &v.gold {
                        let was = twin_gold_before.iter().find(|o| o.model == g.model);
                        let cells = |x: &crate::lab::LabGold| -> Vec<Vec<Option<String>>> {
                            x.rows
                                .iter()
                                .map(|r| r.anti.clone())
                                .filter(|r| !r.is_empty())
                                .collect()
                        };
                        if let Some(was) = was {
                            let (a, b) = (cells(was), cells(g));
                            if a.len() == b.len() && a != b {
                                // Rows of now that were not there before (a multiset difference).
                                let mut left = a.clone();
                                let changed = b
                                    .iter()
                                    .filter(|r| match left.iter().position(|x| x == *r) {
                                        Some(i) => {
                                            left.swap_remove(i);
                                            false
                                        }
                                        None => true,
                                    })
                                    .count();
                                moved.push(tr(
                                    lang,
                                    format!(
                                        "{}: {} {}, {changed} changed",
                                        g.model,
                                        b.len(),
                                        rows_word(lang, b.len())
                                    ),
                                    format!(
                                        "{}: {} {}, изменено {changed}",
                                        g.model,
                                        b.len(),
                                        rows_word(lang, b.len())
                                    ),
                                ));
                            }
                        }
                    }
                    // The twin is rebuilt from scratch: only its counts and gold values can be compared.
                    if moved.is_empty() {
                        tr(
                            lang,
                            "no row count or gold value changed".into(),
                            "ни число строк, ни значения gold не изменились".into(),
                        )
                    } else {
                        moved.join("; ")
                    }
                }
                (_, Some(v)) => v.error.clone().unwrap_or_default(),
                _ => String::new(),
            }
        };
        let anti = Bi::new(anti(Lang::En), anti(Lang::Ru));
        if let Some(last) = self.lab.timeline.last_mut() {
            last.anti = anti.get(lang).to_string();
            last.texts = Some(medallion_protocol::lab::LabEventTexts {
                correct_en: correct.en,
                correct_ru: correct.ru,
                anti_en: anti.en,
                anti_ru: anti.ru,
            });
        }
        if let Some(v) = &mut self.lab_view {
            v.timeline = self.lab.timeline.clone();
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
                    crate::silver::quarantine::open_rows(&t.batch)
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
        for e in &mut self.lab.timeline {
            e.in_lang(self.lang);
        }
        let mut view = LabView {
            on: self.lab.on.clone(),
            timeline: self.lab.timeline.clone(),
            ..Default::default()
        };
        let mine = Box::pin(self.health(None, 0)).await;
        let mut theirs = None;
        if !self.lab.on.is_empty() {
            match Box::pin(self.build_twin()).await {
                Ok(t) => {
                    if let Err(e) = Box::pin(self.compare_twin(&t, &mut view)).await {
                        view.error = Some(e.to_string());
                    }
                    theirs = Some(
                        Box::pin(
                            t.twin
                                .health(Some(&t), self.lab.reruns() + t.inserted_again),
                        )
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
        self.open_rejections()
            .into_iter()
            .filter(|(_, rule, _)| only.is_none_or(|r| rule == r))
            .map(|(id, _, _)| id)
            .collect()
    }

    /// Open quarantine rows of the last good run (ambiguous merge ties
    /// aside): `(_event_id, rule_id, raw_payload)`.
    /// Open quarantine rows of MERGE ties (rule `merge`): two records of
    /// one key and sequence value with different values.
    fn open_ties(&self) -> usize {
        let Some(q) = self
            .last_good
            .as_ref()
            .and_then(|o| o.table(TableName::quarantine()))
        else {
            return 0;
        };
        let rules = q
            .column_by_name("rule_id")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
        let closed = q.column_by_name("closed_in_run");
        rules.map_or(0, |rules| {
            (0..q.num_rows())
                .filter(|&i| closed.is_none_or(|c| c.is_null(i)) && rules.value(i) == "merge")
                .count()
        })
    }

    fn open_rejections(&self) -> Vec<(String, String, String)> {
        let Some(q) = self
            .last_good
            .as_ref()
            .and_then(|o| o.table(TableName::quarantine()))
        else {
            return vec![];
        };
        let col = |n: &str| {
            q.column_by_name(n)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
        };
        let (Some(ids), Some(rules), Some(payloads)) =
            (col("_event_id"), col("rule_id"), col("raw_payload"))
        else {
            return vec![];
        };
        let closed = q.column_by_name("closed_in_run");
        (0..q.num_rows())
            .filter(|&i| closed.is_none_or(|c| c.is_null(i)) && rules.value(i) != "merge")
            .map(|i| {
                (
                    ids.value(i).to_string(),
                    rules.value(i).to_string(),
                    payloads.value(i).to_string(),
                )
            })
            .collect()
    }
}
