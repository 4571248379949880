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
                            Some(tr(
                                lang,
                                format!(
                                    "{t}: {} {}, their values changed ({} → {})",
                                    n(&rows_after, t),
                                    rows_word(lang, rows_after.get(t).copied().unwrap_or(0)),
                                    v(&before),
                                    v(&after)
                                ),
                                format!(
                                    "{t}: {} {}, значения изменились ({} → {})",
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
                                moved.push(tr(
                                    lang,
                                    format!(
                                        "{}: {} {}, their values changed",
                                        g.model,
                                        b.len(),
                                        rows_word(lang, b.len())
                                    ),
                                    format!(
                                        "{}: {} {}, значения изменились",
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

    /// The newest batch that has a landed file (not a Kafka micro-batch).
    fn newest_landed(&self, table: Option<&str>) -> Option<BatchInfo> {
        self.batches
            .iter()
            .rev()
            .find(|b| b.landing_path.is_some() && table.is_none_or(|t| b.table == t))
            .cloned()
    }

    /// The newest landed file's batch and bytes (what the source sends again).
    async fn newest_file(&self) -> Result<(BatchInfo, Vec<u8>)> {
        let b = self.newest_landed(None).ok_or_else(|| {
            EngineError::Request(
                tr(self.lang, "no file has landed yet, so there is none to send again: drop one on a bronze table".into(), "в landing zone ещё нет файла, повторять нечего: перетащите файл на таблицу bronze".into()),
            )
        })?;
        let bytes = self
            .lake
            .get_bytes(b.landing_path.as_deref().unwrap_or_default())
            .await?;
        Ok((b, bytes.to_vec()))
    }

    /// The source sends its newest file again: the same bytes as a new batch.
    async fn resend_file(&mut self) -> Result<Bi> {
        let (b, bytes) = self.newest_file().await?;
        self.append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await?;
        self.run().await;
        let t = TableName::bronze(&b.table);
        let readers = |merged: bool| -> Vec<String> {
            self.def
                .silver
                .iter()
                .filter(|s| s.source == b.table && s.merge.is_some() == merged)
                .map(|s| TableName::silver(&s.name).to_string())
                .collect()
        };
        let (merged, appended) = (readers(true), readers(false));
        let mut text = Bi::new(
            format!(
                "The source re-sent {}: {t} keeps both copies (append-only).",
                b.file_name
            ),
            format!(
                "Источник повторно прислал {}: {t} хранит обе копии (только добавление).",
                b.file_name
            ),
        );
        if !merged.is_empty() {
            text.push(Bi::new(
                format!(" MERGE takes it once in {}.", merged.join(", ")),
                format!(" MERGE учитывает его один раз в {}.", merged.join(", ")),
            ));
        }
        if !appended.is_empty() {
            text.push(Bi::new(
                format!(" {} has no key to merge on, so it now holds the file's rows twice (a MERGE key, or a dedup rule, is what protects it).", appended.join(", ")),
                format!(" У {} нет ключа для MERGE, поэтому строки файла теперь в нём дважды (защищает ключ MERGE или правило дедупликации).", appended.join(", ")),
            ));
        }
        Ok(text)
    }

    /// A technical failure (seed 000 §8): the source's newest file arrives
    /// again and the object store answers 503 after the first write of the
    /// batch (the landed copy): nothing becomes visible, bronze stays at
    /// its version. The platform retries, and the retry lands the batch.
    async fn technical_failure(&mut self) -> Result<Bi> {
        let (b, bytes) = self.newest_file().await?;
        let t = TableName::bronze(&b.table);
        let version = |p: &Playground| p.history.current(&t);
        let (before, rows) = (version(self), self.bronze_rows(&b.table, None)?.num_rows());
        self.lake.outage().arm(1);
        let first = self
            .append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await;
        let seen = self.lake.outage().disarm();
        let failed = match first {
            Err(e) => e.to_string(),
            Ok(_) => {
                return Err(EngineError::Internal(
                    "the simulated outage did not stop the write (the batch landed on the first attempt)".into(),
                ))
            }
        };
        let untouched =
            version(self) == before && self.bronze_rows(&b.table, None)?.num_rows() == rows;
        if !untouched {
            return Err(EngineError::Internal(format!(
                "{t} changed although its write failed: {failed}"
            )));
        }
        self.append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await?;
        self.run().await;
        let v = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
        let n = seen.written.len();
        // "после 1 записи", "после 5 записей" (genitive after a number).
        let writes_ru = if n % 10 == 1 && n % 100 != 11 {
            "записи"
        } else {
            "записей"
        };
        // The store's own error (`failed`) stays out of the lesson: it is the simulated 503.
        let _ = failed;
        Ok(Bi::new(
            format!("Attempt 1 of writing {} to {t}: the object store answered 503 Service Unavailable after {n} {}; nothing became visible, {t} stayed at version {}. Attempt 2, the platform's retry, landed it as version {}. A technical failure: the platform fixes it by retrying, the data needs nobody.", b.file_name, if n == 1 { "write" } else { "writes" }, v(before), v(version(self))),
            format!("Попытка 1 записать {} в {t}: хранилище ответило 503 Service Unavailable после {n} {}; ничего не стало видимым, {t} осталась на версии {}. Попытка 2, повтор платформы, записала его версией {}. Техническая ошибка: её исправляет платформа повтором, данным никто не нужен.", b.file_name, writes_ru, v(before), v(version(self))),
        ))
    }

    /// The Kafka consumer crashed after writing its last micro-batch and
    /// before committing: the offsets go back and the micro-batch comes again.
    async fn kafka_redeliver(&mut self) -> Result<Bi> {
        let found = self.def.bronze.iter().find_map(|b| {
            let topic = self.topics.get(&b.name)?;
            let last =
                self.batches.iter().rev().find(|i| {
                    i.table == b.name && i.format == crate::bronze::SourceFormat::Kafka
                })?;
            (topic.committed > 0).then(|| {
                (
                    b.name.clone(),
                    topic.name.clone(),
                    last.records.min(topic.committed),
                )
            })
        });
        let (table, topic, n) = found.ok_or_else(|| {
            EngineError::Request(tr(self.lang, "no Kafka topic has delivered a micro-batch in this scenario: load the Kafka orders scenario".into(), "в этом сценарии ни один топик Kafka не доставил микробатч: загрузите сценарий заказов из Kafka".into()))
        })?;
        let to = self.topics.get(&table).map_or(0, |t| t.committed);
        let from = to - n;
        if let Some(t) = self.topics.get_mut(&table) {
            t.committed = from;
        }
        if let Err(e) = self.poll_into_bronze(&table, Some(n), false).await {
            if let Some(t) = self.topics.get_mut(&table) {
                t.committed = to;
            }
            return Err(e);
        }
        self.run().await;
        Ok(Bi::new(
            format!("The consumer of {topic} crashed after writing offsets {from}–{} to bronze and before committing them: on restart they were delivered again (at-least-once), and bronze keeps both deliveries.", to - 1),
            format!("Консьюмер {topic} упал после записи смещений {from}–{} в bronze и до их коммита: после рестарта они пришли снова (at-least-once), и bronze хранит обе доставки.", to - 1),
        ))
    }

    /// Each line of `text` as a message on bronze `table`'s Kafka topic,
    /// then one poll into bronze (no run).
    async fn produce_lines(&mut self, table: &str, text: &str) -> Result<()> {
        let messages = text
            .lines()
            .map(|l| crate::bronze::kafka::KafkaMessage {
                key: None,
                value: Some(l.to_string()),
                producer_ts_micros: None,
                erased: false,
            })
            .collect();
        self.kafka_produce(table, messages)?;
        self.poll_into_bronze(table, None, false).await.map(|_| ())
    }

    /// The silver table whose job [`LabEvent::SilverJobFails`] fails: the
    /// one whose failure leaves the most gold models refreshed, then the
    /// fewest silver tables held back; with what it holds back (silver
    /// tables, then gold models, qualified). Errors: one silver table only.
    async fn job_to_fail(&self) -> Result<(String, Vec<TableName>, Vec<TableName>)> {
        if self.def.silver.len() < 2 {
            return Err(EngineError::Request(tr(
                self.lang,
                "this scenario has one silver table: there is no other job to keep running (load e-commerce, Kafka orders or the CDC order)".into(),
                "в этом сценарии одна таблица silver: нет другой джобы, которая продолжила бы работать (загрузите e-commerce, заказы из Kafka или CDC заказа)".into(),
            )));
        }
        let mut reads: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for g in &self.def.gold {
            reads.insert(
                g.name.clone(),
                crate::gold::inputs(&self.ctx, &g.sql)
                    .await
                    .unwrap_or_default(),
            );
        }
        let mut best: Option<(String, Vec<TableName>, Vec<TableName>)> = None;
        for x in &self.def.silver {
            // What the pipeline holds back when x fails.
            let failed = std::collections::BTreeSet::from([x.name.clone()]);
            let mut blocked = BTreeMap::new();
            crate::pipeline::hold_back_readers(&self.def, &failed, &mut blocked);
            let held: Vec<String> = failed.into_iter().chain(blocked.into_keys()).collect();
            let mut gold_held: Vec<String> = Vec::new();
            for g in &self.def.gold {
                let r = reads.get(&g.name).cloned().unwrap_or_default();
                if r.iter().any(|t| {
                    held.iter().any(|h| TableName::silver(h).to_string() == *t)
                        || gold_held
                            .iter()
                            .any(|h| TableName::gold(h).to_string() == *t)
                }) {
                    gold_held.push(g.name.clone());
                }
            }
            let score = |h: &Vec<TableName>, g: &Vec<TableName>| (g.len(), h.len());
            let silver: Vec<TableName> = held.iter().map(|h| TableName::silver(h)).collect();
            let gold: Vec<TableName> = gold_held.iter().map(|g| TableName::gold(g)).collect();
            if best
                .as_ref()
                .is_none_or(|(_, h, g)| score(&silver, &gold) < score(h, g))
            {
                best = Some((x.name.clone(), silver, gold));
            }
        }
        best.ok_or_else(|| EngineError::Internal("no silver table".into()))
    }

    /// New records arrive, and the next run fails one silver table's job
    /// (seed 003 §6, monolithic silver): independent jobs refresh what does
    /// not read it. The new records go to a bronze table some refreshed
    /// silver table reads (else the failed one's source).
    async fn silver_job_fails(&mut self) -> Result<Bi> {
        let lang = self.lang;
        let (table, held, gold_held) = self.job_to_fail().await?;
        let fed = |p: &Playground, b: &str| {
            p.topics.get(b).is_some_and(|t| t.committed > 0) || p.newest_landed(Some(b)).is_some()
        };
        let source = self
            .def
            .silver
            .iter()
            .filter(|s| !held.contains(&TableName::silver(&s.name)))
            .map(|s| s.source.clone())
            .chain(self.def.silver.iter().filter(|s| s.name == table).map(|s| s.source.clone()))
            .find(|b| fed(self, b))
            .ok_or_else(|| {
                EngineError::Request(tr(
                    lang,
                    "no bronze table of this scenario has received data to send more of".into(),
                    "ни одна таблица bronze этого сценария ещё не получила данных, чтобы прислать ещё".into(),
                ))
            })?;
        // New records: the newest accepted ones again, under new keys.
        let key: Option<String> = self
            .def
            .silver
            .iter()
            .filter(|s| s.source == source)
            .find_map(|s| s.merge.as_ref())
            .and_then(|m| m.keys.first().cloned())
            .and_then(|k| {
                let b = self.def.bronze_table(&source)?;
                crate::lab::twin_bronze::column_in(&self.def, b, &k)
            });
        let rejected: HashSet<String> = self
            .open_rejections()
            .into_iter()
            .map(|(_, _, payload)| payload)
            .collect();
        let before: Vec<String> = self.batches.iter().map(|b| b.batch_id.clone()).collect();
        let kafka = self
            .topics
            .get(&source)
            .filter(|t| t.committed > 0)
            .cloned();
        let what = if let Some(topic) = &kafka {
            let live: Vec<String> = topic
                .log
                .iter()
                .filter(|m| !m.erased)
                .filter_map(|m| m.value.clone())
                .collect();
            let texts = newest_accepted_n(&live, &rejected, LATE_RECORDS);
            let (text, _) = crate::lab::events::again(
                crate::bronze::SourceFormat::JsonLines,
                None,
                &[],
                &texts,
                key.as_deref(),
                lang,
            )?;
            self.produce_lines(&source, &text).await?;
            Bi::new(
                format!("new messages on {}", topic.name),
                format!("новые сообщения в {}", topic.name),
            )
        } else {
            let b = self
                .newest_landed(Some(&source))
                .ok_or_else(|| EngineError::Internal("no landed file".into()))?;
            let (split, texts) = self.landed_records(&b, &source).await?;
            let texts = newest_accepted_n(&texts, &rejected, LATE_RECORDS);
            let (text, ext) = crate::lab::events::again(
                split.format,
                split.dialect.as_ref(),
                &split.header,
                &texts,
                key.as_deref(),
                lang,
            )?;
            let name = format!("{}_new.{ext}", file_stem(&b.file_name));
            self.append(&source, &name, text.as_bytes(), &IngestOptions::default())
                .await?;
            Bi::new(name.clone(), name)
        };
        self.fail_silver_once = Some(table.clone());
        self.run().await;
        self.lab.job_failed = Some(JobFailure {
            table: table.clone(),
            before,
        });
        let names = |v: &[TableName]| {
            v.iter()
                .map(TableName::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let t = TableName::silver(&table);
        let b = TableName::bronze(&source);
        let waiting = names(&held.iter().chain(&gold_held).cloned().collect::<Vec<_>>());
        let fresh: Vec<TableName> = self
            .def
            .silver
            .iter()
            .map(|s| TableName::silver(&s.name))
            .filter(|s| !held.contains(s))
            .chain(
                self.def
                    .gold
                    .iter()
                    .map(|g| TableName::gold(&g.name))
                    .filter(|g| !gold_held.contains(g)),
            )
            .collect();
        let fresh = names(&fresh);
        let (w_en, w_ru) = (&what.en, &what.ru);
        Ok(Bi::new(
            format!("New records arrived in {b} ({w_en}), and the job of {t} failed halfway (injected by the lab, once). Each silver table is its own job. Waiting for the retry at their last good version (re-run the job): {waiting}. Refreshed: {fresh}."),
            format!("В {b} пришли новые записи ({w_ru}), и джоба {t} упала на полпути (сбой внесён лабораторией, один раз). Каждая таблица silver — своя джоба. Ждут повтора на последней успешной версии (перезапустите джобу): {waiting}. Обновлены: {fresh}."),
        ))
    }

    /// A landed file of bronze `table` read again as ingest split it: the
    /// split (format, dialect, header) and each record's exact text.
    async fn landed_records(
        &self,
        b: &BatchInfo,
        table: &str,
    ) -> Result<(crate::bronze::SplitFile, Vec<String>)> {
        let bytes = self
            .lake
            .get_bytes(b.landing_path.as_deref().unwrap_or_default())
            .await?;
        let options = self
            .def
            .bronze_table(table)
            .map(|d| d.ingest_options.clone())
            .unwrap_or_default();
        let split = crate::bronze::split_file(&bytes, &options)?;
        let texts = split.records.iter().map(|r| r.text.clone()).collect();
        Ok((split, texts))
    }

    /// The decimal separator of bronze `table`'s files (its declared
    /// options, else its newest file's dialect, else `.`).
    fn decimal_of(&self, table: &str) -> char {
        self.def
            .bronze_table(table)
            .and_then(|b| b.ingest_options.decimal_separator)
            .or_else(|| {
                self.batches
                    .iter()
                    .rev()
                    .find(|b| b.table == table)
                    .and_then(|b| b.dialect.as_ref().map(|d| d.decimal_separator))
            })
            .unwrap_or('.')
    }

    /// Every enabled lookup rule whose join the lab can run at ingest.
    fn ingest_joins(&self) -> Vec<IngestJoin> {
        self.def
            .silver
            .iter()
            .flat_map(|s| {
                s.rules
                    .rules
                    .iter()
                    .filter(|r| r.enabled)
                    .filter_map(move |r| IngestJoin::of(s, r))
            })
            .collect()
    }

    /// A slowly changing dimension: the source of a looked-up table sends
    /// its newest accepted record again with one looked-up field changed
    /// (to another value the column holds), the same key.
    async fn dimension_change(&mut self) -> Result<Bi> {
        let lang = self.lang;
        let rejected: HashSet<String> = self
            .open_rejections()
            .into_iter()
            .map(|(_, _, payload)| payload)
            .collect();
        // The looked-up table's bronze source and the fields the join reads.
        let mut found = None;
        for j in self.ingest_joins() {
            let source = match j.lookup.layer() {
                medallion_protocol::Layer::Bronze => Some(j.lookup.name().to_string()),
                _ => self
                    .def
                    .silver
                    .iter()
                    .find(|s| s.name == j.lookup.name())
                    .map(|s| s.source.clone()),
            };
            let Some(source) = source else { continue };
            let Some(b) = self.newest_landed(Some(&source)) else {
                continue;
            };
            found = Some((j, source, b));
            break;
        }
        let (join, source, b) = found.ok_or_else(|| {
            EngineError::Request(tr(
                lang,
                "no silver table of this scenario looks up another table fed by a file: load the Kafka orders scenario (orders look up users)".into(),
                "в этом сценарии ни одна таблица silver не обращается к справочнику, который приходит файлом: загрузите сценарий заказов из Kafka (заказы смотрят в users)".into(),
            ))
        })?;
        let (split, texts) = self.landed_records(&b, &source).await?;
        let record = newest_accepted(&texts, &rejected).pop().ok_or_else(|| {
            EngineError::Request(tr(
                lang,
                "the newest file has no record to change".into(),
                "в последнем файле нет записи, которую можно изменить".into(),
            ))
        })?;
        let values = |texts: &[String], c: &str| {
            crate::lab::events::field_texts(
                split.format,
                split.dialect.as_ref(),
                &split.header,
                texts,
                c,
                lang,
            )
        };
        let (column, old) = join
            .columns
            .iter()
            .find_map(|c| Some((c.clone(), values(std::slice::from_ref(&record), c).pop()?)))
            .ok_or_else(|| {
                EngineError::Request(tr(
                    lang,
                    format!(
                        "the newest record of bronze.{source} has none of {} to change",
                        join.columns.join(", ")
                    ),
                    format!(
                        "в последней записи bronze.{source} нет ни одного из полей {}",
                        join.columns.join(", ")
                    ),
                ))
            })?;
        let mut others: Vec<String> = values(&texts, &column)
            .into_iter()
            .filter(|v| *v != old)
            .collect();
        others.sort();
        let new = others
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("{old}-2"));
        let (text, ext, which, old) = crate::lab::events::changed_record(
            split.format,
            split.dialect.as_ref(),
            &split.header,
            &record,
            &column,
            &new,
            lang,
        )?;
        let name = format!("{}_change.{ext}", file_stem(&b.file_name));
        self.append(&source, &name, text.as_bytes(), &IngestOptions::default())
            .await?;
        self.run().await;
        let (t, l, s) = (
            TableName::bronze(&source),
            join.lookup.clone(),
            TableName::silver(&join.silver),
        );
        Ok(Bi::new(
            format!("{t} received a change ({name}): the record {which} now has {column} = {new} (was {old}), the same key. A slowly changing dimension: {l} takes the new value, and {s}, which looks it up, follows on this run."),
            format!("В {t} пришло изменение ({name}): у записи {which} теперь {column} = {new} (было {old}), ключ тот же. Медленно меняющееся измерение: {l} берёт новое значение, а {s}, который к нему обращается, следует за ним в этом же запуске."),
        ))
    }

    /// Schema drift or a business error: the newest records of a source
    /// edited as a real source would change them, sent as a new file (or
    /// new messages on its Kafka topic), then a run.
    async fn send_edited(&mut self, event: LabEvent) -> Result<Bi> {
        let lang = self.lang;
        let amount_of = amount_column;
        let keys: HashSet<String> = self
            .def
            .silver
            .iter()
            .filter_map(|s| s.merge.as_ref())
            .flat_map(|m| m.keys.clone())
            .collect();
        let target = self.def.bronze.iter().find_map(|b| {
            let column = match event {
                LabEvent::BusinessError => amount_of(b)?,
                LabEvent::LateRecords => date_column(b)?,
                _ => amount_of(b).or_else(|| {
                    b.schema
                        .columns
                        .iter()
                        .rev()
                        .map(|c| c.name.clone())
                        .find(|n| !keys.contains(n))
                })?,
            };
            let fed = self.topics.get(&b.name).is_some_and(|t| t.committed > 0)
                || self.newest_landed(Some(&b.name)).is_some();
            fed.then(|| (b.name.clone(), column))
        });
        let (table, mut column) = target.ok_or_else(|| {
            EngineError::Request(match event {
                LabEvent::BusinessError => {
                    tr(self.lang, "no bronze table of this scenario has an amount column that has received data".into(), "ни в одной таблице bronze этого сценария нет колонки с суммой, получившей данные".into())
                }
                LabEvent::LateRecords => {
                    tr(self.lang, "no bronze table of this scenario has a date or timestamp column that has received data".into(), "ни в одной таблице bronze этого сценария нет колонки с датой или временем, получившей данные".into())
                }
                _ => tr(self.lang, "no bronze table of this scenario has received data to change".into(), "ни одна таблица bronze этого сценария ещё не получила данных, которые можно изменить".into()),
            })
        })?;
        let t = TableName::bronze(&table);
        // Schema drift renames the first of these the newest records still have.
        let candidates: Vec<String> = match self.def.bronze_table(&table) {
            Some(b) => {
                let mut c: Vec<String> = amount_of(b).into_iter().collect();
                c.extend(
                    b.schema
                        .columns
                        .iter()
                        .rev()
                        .map(|c| c.name.clone())
                        .filter(|n| !keys.contains(n)),
                );
                c
            }
            None => vec![column.clone()],
        };
        // The business error is a new record: a key of its own (no tie with a real change).
        let key: Option<String> = self
            .def
            .silver
            .iter()
            .filter(|s| s.source == table)
            .find_map(|s| s.merge.as_ref())
            .and_then(|m| m.keys.first().cloned());
        let quarantined = |p: &Playground| {
            p.row_counts()
                .get(&TableName::quarantine())
                .copied()
                .unwrap_or(0)
        };
        let held_before = quarantined(self);
        let ties_before = self.open_ties();
        // The business error copies a record silver accepted: -100 is its only fault.
        let rejected: HashSet<String> = self
            .open_rejections()
            .into_iter()
            .map(|(_, _, payload)| payload)
            .collect();
        let watermark = medallion_protocol::runs::watermarks(&self.checkpoints)
            .get(&t)
            .copied();
        let mut dates: Option<(String, String)> = None;
        let kafka = self.topics.get(&table).filter(|t| t.committed > 0).cloned();
        // The edited records as a file in the source's format: (text, extension).
        let edit = |format: crate::bronze::SourceFormat,
                    dialect: Option<&crate::bronze::CsvDialect>,
                    header: &[String],
                    all: Vec<String>,
                    column: &mut String,
                    dates: &mut Option<(String, String)>|
         -> Result<(String, &'static str)> {
            use crate::lab::events;
            Ok(match event {
                LabEvent::LateRecords => {
                    let texts = newest_accepted_n(&all, &rejected, LATE_RECORDS);
                    let (text, ext, from, to) = events::late(
                        format,
                        dialect,
                        header,
                        &texts,
                        column,
                        key.as_deref(),
                        LATE_DAYS,
                        lang,
                    )?;
                    *dates = Some((from, to));
                    (text, ext)
                }
                LabEvent::BusinessError => events::with_negative_amount(
                    format,
                    dialect,
                    header,
                    &newest_accepted(&all, &rejected),
                    column,
                    key.as_deref(),
                    lang,
                )?,
                _ => {
                    let (text, ext, renamed) =
                        events::drifted(format, dialect, header, &all, &candidates, lang)?;
                    *column = renamed;
                    (text, ext)
                }
            })
        };
        let (text, what) = if let Some(topic) = &kafka {
            let live: Vec<String> = topic
                .log
                .iter()
                .filter(|m| !m.erased)
                .filter_map(|m| m.value.clone())
                .collect();
            let (text, _) = edit(
                crate::bronze::SourceFormat::JsonLines,
                None,
                &[],
                live,
                &mut column,
                &mut dates,
            )?;
            (
                text,
                Bi::new(
                    format!("new messages on {}", topic.name),
                    format!("новые сообщения в {}", topic.name),
                ),
            )
        } else {
            let b = self
                .newest_landed(Some(&table))
                .ok_or_else(|| EngineError::Internal("no landed file".into()))?;
            let (split, texts) = self.landed_records(&b, &table).await?;
            let (text, ext) = edit(
                split.format,
                split.dialect.as_ref(),
                &split.header,
                texts,
                &mut column,
                &mut dates,
            )?;
            let stem = file_stem(&b.file_name);
            let name = match event {
                LabEvent::BusinessError => format!("{stem}_business_error.{ext}"),
                LabEvent::LateRecords => format!("{stem}_late.{ext}"),
                _ => format!("{stem}_v2.{ext}"),
            };
            (text, Bi::new(name.clone(), name))
        };
        if kafka.is_some() {
            self.produce_lines(&table, &text).await?;
        } else {
            self.append(&table, &what.en, text.as_bytes(), &IngestOptions::default())
                .await?;
        }
        let gold_before = self.table_versions();
        self.run().await;
        let gold_moved = self
            .table_versions()
            .iter()
            .any(|(t, v)| t.is_gold() && gold_before.get(t) != Some(v));
        let (what_en, what_ru) = (&what.en, &what.ru);
        if let (LabEvent::LateRecords, Some((from, to))) = (event, &dates) {
            let w = watermark
                .and_then(chrono::DateTime::from_timestamp_micros)
                .map_or("-".to_string(), |d| {
                    d.format("%Y-%m-%d %H:%M:%S UTC").to_string()
                });
            let how = match self.mode {
                RunMode::Incremental => Bi::new(format!("the incremental run reads what landed after the watermark on _ingest_ts ({w}), so it took them"), format!("инкрементальный запуск читает то, что пришло после watermark по _ingest_ts ({w}), поэтому он их взял")),
                RunMode::Full => Bi::new(format!("the full refresh reads all of bronze (the watermark on _ingest_ts was {w}), so it took them"), format!("полный пересчёт читает весь bronze (watermark по _ingest_ts был {w}), поэтому он их взял")),
            };
            let (how_en, how_ru) = (&how.en, &how.ru);
            let gold = if gold_moved {
                Bi::new(
                    format!("and gold's figures for {to} move"),
                    format!("и цифры gold за {to} меняются"),
                )
            } else {
                Bi::new(
                    "yet no gold figure moved (silver's rules kept them out, see the quarantine, or no gold model reads them)".into(),
                    "но ни одна цифра gold не изменилась (правила silver их не пропустили — см. карантин — или их не читает ни одна gold-модель)".into(),
                )
            };
            let (gold_en, gold_ru) = (&gold.en, &gold.ru);
            return Ok(Bi::new(
                format!("Late records arrived in {t} ({what_en}): {column} on {to}, {LATE_DAYS} days before the newest records ({from}). Bronze is partitioned and watermarked by _ingest_ts, not by the business date: {how_en}, {gold_en}. A watermark on {column} would have skipped them for good."),
                format!("В {t} пришли опоздавшие записи ({what_ru}): {column} = {to}, на {LATE_DAYS} дня раньше последних записей ({from}). Bronze партиционирован и отмечен watermark по _ingest_ts, а не по бизнес-дате: {how_ru}, {gold_ru}. Watermark по {column} пропустил бы их навсегда."),
            ));
        }
        Ok(match event {
            LabEvent::BusinessError if quarantined(self) > held_before => Bi::new(
                format!("A record with {column} = -100 arrived in {t} ({what_en}): a business error. The pipeline did its job; the data owner fixes the record, from the quarantine (seed 000 §8)."),
                format!("В {t} пришла запись с {column} = -100 ({what_ru}): бизнес-ошибка. Пайплайн отработал как надо; запись исправляет владелец данных — из карантина (seed 000 §8)."),
            ),
            LabEvent::BusinessError => Bi::new(
                format!("A record with {column} = -100 arrived in {t} ({what_en}): a business error, and no rule of silver rejects it, so it went through to silver and gold. A rule is missing: an expectation {column} > 0 would quarantine it for the data owner (seed 000 §8)."),
                format!("В {t} пришла запись с {column} = -100 ({what_ru}): бизнес-ошибка, и ни одно правило silver её не отклоняет, поэтому она прошла в silver и gold. Не хватает правила: ожидание {column} > 0 отправило бы её в карантин владельцу данных (seed 000 §8)."),
            ),
            _ => {
                let text = Bi::new(
                    format!("The source renamed {column} to {column}_v2 and added source_version ({what_en}): {t} took the records as they came; silver reads the declared {column} as missing in them (see the batch log and the schema checks)."),
                    format!("Источник переименовал {column} в {column}_v2 и добавил source_version ({what_ru}): {t} принял записи как есть; silver не находит в них объявленную {column} (см. журнал батчей и проверки схемы)."),
                );
                // The records came again under their keys: a MERGE that
                // cannot tell the old and the new apart quarantines both.
                match self.open_ties().saturating_sub(ties_before) {
                    0 => text,
                    n => Bi::new(
                        format!("{} They came again under the keys and sequence values of records silver already had, with other values, so a MERGE cannot tell which one is right: {n} quarantine {} (rule merge), the old records with the new, and the rows they would have been leave silver until the source says which is right.", text.en, if n == 1 { "row" } else { "rows" }),
                        format!("{} Они пришли снова с ключами и значениями последовательности записей, которые уже есть в silver, но с другими значениями, поэтому MERGE не может решить, какая верна: строк карантина (правило merge): {n}, старые записи вместе с новыми, а их строки уходят из silver, пока источник не скажет, какая верна.", text.ru),
                    ),
                }
            }
        })
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
                    theirs = Some(Box::pin(t.twin.health(Some(&t), self.lab.reruns())).await);
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
    async fn build_twin(&self) -> Result<Twin> {
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
                            &IngestJoin::field(c),
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
                            .replace(&format!("{}.", j.alias), "joined_");
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
        Ok(Twin {
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
    fn lookup_rows(
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
    async fn run_copy_boxed(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
    ) -> std::result::Result<Playground, String> {
        Box::pin(self.run_copy(def, bronze, reruns)).await
    }

    /// [`Self::run_copy`] for a [`JobFailure`]: the copy runs over the
    /// batches bronze held before the failure, then fails `failure.table`'s
    /// job over all of `bronze` (a monolithic twin refreshes nothing then),
    /// then re-runs `reruns` times. Errs only when the first run failed.
    async fn run_copy_failing(
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
        let mut copy = self.run_copy_boxed(def, earlier, 0).await?;
        let failed = async {
            copy.load_copy_bronze(&self.batches, &self.def, bronze)
                .await?;
            copy.fail_silver_once = Some(failure.table.clone());
            Box::pin(copy.run()).await;
            for _ in 0..reruns {
                Box::pin(copy.run()).await;
            }
            Ok::<_, EngineError>(())
        };
        Box::pin(failed).await.map_err(|e| e.to_string())?;
        Ok(copy)
    }

    /// Puts `bronze` into this copy as its bronze (batches in `order`'s
    /// order), written and registered so SQL reads it.
    async fn load_copy_bronze(
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
            copy.load_copy_bronze(&self.batches, &self.def, bronze)
                .await?;
            Box::pin(copy.run()).await;
            // An INSERT job takes each delivery as it comes: a batch the
            // source delivered again is inserted again, in a run of its own.
            if !copy.def.anti_patterns.insert_into.is_empty() {
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

    /// The five signs of a healthy medallion for this playground (the
    /// session, or a twin: `twin` gives the records its ingest left out and
    /// the anti-patterns that did it; it ran `reruns` times more than once).
    async fn health(&self, twin: Option<&Twin>, reruns: usize) -> Vec<SignState> {
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
            if let Some(left_out) = twin.map(|t| &t.left_out) {
                let n: usize = left_out.values().filter_map(|m| m.get(&b.name)).sum();
                if n > 0 {
                    let how: Vec<&str> = left_out
                        .iter()
                        .filter(|(_, m)| m.get(&b.name).is_some_and(|k| *k > 0))
                        .map(|(a, _)| a.key())
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
        if let Some(t) = twin {
            for (j, _, _) in &t.joined {
                lineage.push((
                    TableName::bronze(&j.facts),
                    Err(tr(
                        lang,
                        format!("its {} come from a JOIN with {} at ingest, which no log of bronze records", j.columns.join(", "), j.lookup),
                        format!("его {} пришли из JOIN с {} при загрузке, который не записан ни в одном журнале bronze", j.columns.join(", "), j.lookup),
                    )),
                    true,
                ));
            }
        }
        let published = twin.and_then(|t| t.published.as_ref());
        let join_replay = twin.and_then(|t| t.join_replay.as_ref());
        let rebuild_differs = if let Some(p) = published {
            Some(Ok(gold_differs(&self.def, p, self)))
        } else if let Some(r) = join_replay {
            Some(Ok(gold_differs(&self.def, self, r)))
        } else if self.mode == RunMode::Full
            && reruns == 0
            && self.def.gold.iter().all(|g| g.merge_on.is_empty())
        {
            None
        } else {
            match self
                .run_copy_boxed(self.def.clone(), self.bronze.clone(), 0)
                .await
            {
                Ok(fresh) => Some(Ok(gold_differs(&self.def, self, &fresh))),
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
            reads_bronze: {
                let mut r = out.map(|o| o.gold_reads_bronze.clone()).unwrap_or_default();
                if let Some(t) = twin {
                    r.extend(t.shortcut_reads.clone());
                }
                r
            },
            gold,
            rebuild_differs,
            rebuild_against_published: published.is_some(),
            rebuild_by_join: join_replay.is_some(),
            overwritten: twin.map_or(0, |t| t.overwritten),
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

    /// Fills `view` with the comparison of this session and `twin`.
    async fn compare_twin(&self, t: &Twin, view: &mut LabView) -> Result<()> {
        let (twin, left_out) = (&t.twin, &t.left_out);
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
            let error = crate::api::diagnostics_for(twin.diagnostics.iter(), "gold", &g.name)
                .or_else(|| crate::api::diagnostics_for(self.diagnostics.iter(), "gold", &g.name));
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
        if let Some(published) = &t.published {
            view.findings
                .extend(Box::pin(self.rewrite_findings(t, published)).await?);
        }
        if self.lab.has(AntiPattern::JoinAtIngest) {
            view.findings.extend(self.join_findings(t));
        }
        if self.lab.has(AntiPattern::Shortcut) {
            let (gold, found) = Box::pin(self.shortcut(twin)).await?;
            view.gold.extend(gold);
            view.findings.extend(found);
        }
        Ok(())
    }

    /// What the rewrite of the twin's bronze did: the fix job's UPDATEs and
    /// DELETEs, the weekly DELETE's customer, and each gold model as it was
    /// published against what a replay of the rewritten bronze gives.
    async fn rewrite_findings(&self, t: &Twin, published: &Playground) -> Result<Vec<String>> {
        let lang = self.lang;
        let mut out = Vec::new();
        if self.lab.has(AntiPattern::FixJobInBronze) {
            for (table, f) in t.fixed.iter().filter(|(_, f)| f.updated + f.deleted > 0) {
                let b = TableName::bronze(table);
                out.push(tr(
                    lang,
                    format!("{b}: the weekly fix job rewrote {} {} the source sent: {} UPDATEd in place (the minus of a negative amount dropped), {} DELETEd (the other records silver rejected). The quarantine no longer shows them and the source's originals exist nowhere.", f.updated + f.deleted, if f.updated + f.deleted == 1 { "record" } else { "records" }, f.updated, f.deleted),
                    format!("{b}: еженедельная джоба «исправления» переписала {} присланных записей: {} изменены UPDATE на месте (у отрицательной суммы убран минус), {} удалены DELETE (прочие отклонённые silver записи). В карантине их больше нет, а оригиналов источника нет нигде.", f.updated + f.deleted, f.updated, f.deleted),
                ));
            }
            if t.fixed.values().all(|f| f.updated + f.deleted == 0)
                && !self.rejected_events(None).is_empty()
            {
                out.push(tr(
                    lang,
                    "The weekly fix job finds nothing to fix in the twin: the records silver rejected were already kept out of its bronze by another switch (the filter at ingest, DROPMALFORMED).".into(),
                    "Еженедельной джобе «исправления» в двойнике нечего править: отклонённые silver записи уже не пустил в bronze другой переключатель (фильтр при загрузке, DROPMALFORMED).".into(),
                ));
            } else if t.fixed.values().all(|f| f.updated + f.deleted == 0) {
                out.push(tr(
                    lang,
                    "The weekly fix job finds nothing to fix here: silver rejects no record of this scenario (send a business error, amount = -100, to give it one).".into(),
                    "Еженедельной джобе «исправления» здесь нечего править: silver не отклоняет ни одной записи этого сценария (пришлите бизнес-ошибку, amount = -100).".into(),
                ));
            }
        }
        if self.lab.has(AntiPattern::WeeklyDelete) {
            match &t.deleted_customer {
                Some((column, value)) => {
                    let value = if value.parse::<f64>().is_ok() {
                        value.clone()
                    } else {
                        format!("'{}'", value.replace('\'', "''"))
                    };
                    let n = t.left_out.get(&AntiPattern::WeeklyDelete);
                    let tables: Vec<String> = n
                        .into_iter()
                        .flatten()
                        .filter(|(_, n)| **n > 0)
                        .map(|(table, n)| format!("{} ({n})", TableName::bronze(table)))
                        .collect();
                    out.push(tr(
                        lang,
                        format!("The weekly DELETE … WHERE {column} = {value} removed that customer's records from {}: bronze became a mutable database, its versions before the DELETE no longer match any replay, and the history is gone for every purpose, not only the one the law names. Tokenization or crypto-shredding (PII panel) forget the person without touching bronze.", tables.join(", ")),
                        format!("Еженедельный DELETE … WHERE {column} = {value} удалил записи этого клиента из {}: bronze стал изменяемой базой, его версии до DELETE больше не совпадают ни с одним replay, а история потеряна для всех целей, а не только той, что требует закон. Токенизация или crypto-shredding (панель PII) забывают человека, не трогая bronze.", tables.join(", ")),
                    ));
                }
                None => out.push(tr(
                    lang,
                    "The weekly DELETE request needs a customer column (user_id, customer_id) in bronze: load the Kafka orders scenario.".into(),
                    "Еженедельному DELETE нужна колонка клиента (user_id, customer_id) в bronze: загрузите сценарий заказов из Kafka.".into(),
                )),
            }
        }
        for g in &self.def.gold {
            let name = TableName::gold(&g.name);
            let key = crate::gold::key_columns(&self.ctx, g).await;
            let was = compare_gold(
                name.clone(),
                &key,
                published.last_good.as_ref().and_then(|o| o.table(&name)),
                t.twin.last_good.as_ref().and_then(|o| o.table(&name)),
                None,
            )?;
            if was.changed_rows == 0 {
                continue;
            }
            let totals: Vec<String> = was
                .measures
                .iter()
                .filter(|m| m.correct != m.anti)
                .map(|m| format!("Σ {} {} → {}", m.column, m.correct, m.anti))
                .collect();
            let totals = if totals.is_empty() {
                String::new()
            } else {
                format!(" ({})", totals.join(", "))
            };
            out.push(tr(
                lang,
                format!("{name}: the version published before bronze was rewritten and a replay of today's bronze differ in {} {}{totals}: last period's report can no longer be reproduced.", was.changed_rows, rows_word(lang, was.changed_rows)),
                format!("{name}: версия, опубликованная до переписывания bronze, и replay сегодняшнего bronze расходятся (строк: {}){totals}: отчёт за прошлый период больше не воспроизвести.", was.changed_rows),
            ));
        }
        Ok(out)
    }

    /// What the JOIN at ingest stored in bronze, and what a lookup change did to it.
    fn join_findings(&self, t: &Twin) -> Vec<String> {
        let lang = self.lang;
        if t.joined.is_empty() {
            return vec![tr(
                lang,
                "No silver rule of this scenario looks a table up with a plain key (a = alias.b), so there is no join to move into bronze: load the Kafka orders scenario.".into(),
                "Ни одно правило silver этого сценария не обращается к справочнику по простому ключу (a = alias.b), переносить в bronze нечего: загрузите сценарий заказов из Kafka.".into(),
            )];
        }
        t.joined
            .iter()
            .map(|(j, n, stale)| {
                let b = TableName::bronze(&j.facts);
                let fields: Vec<String> = j.columns.iter().map(|c| IngestJoin::field(c)).collect();
                let (cols, fields) = (j.columns.join(", "), fields.join(", "));
                let l = &j.lookup;
                if *stale > 0 {
                    tr(
                        lang,
                        format!("{b}: the bronze job joined its {n} records with {l} at ingest and stored {cols} in them ({fields}). {stale} of them hold values {l} no longer has: yesterday's bronze kept the old meaning, a replay of the ingest today would store the new one, and the lineage of {b} now runs through {l}."),
                        format!("{b}: bronze-джоба при загрузке соединила его {n} записей с {l} и сохранила в них {cols} ({fields}). В {stale} из них значения, которых в {l} больше нет: вчерашний bronze сохранил старый смысл, replay загрузки сегодня записал бы новый, а lineage {b} теперь идёт через {l}."),
                    )
                } else {
                    tr(
                        lang,
                        format!("{b}: the bronze job joined its {n} records with {l} at ingest and stored {cols} in them ({fields}). Today they match {l}; let it change (Events: a dimension changes) and yesterday's bronze keeps the old values while silver's lookup moves on."),
                        format!("{b}: bronze-джоба при загрузке соединила его {n} записей с {l} и сохранила в них {cols} ({fields}). Сегодня они совпадают с {l}; пусть он изменится (События: измерение меняется) — и вчерашний bronze сохранит старые значения, а lookup в silver пойдёт дальше."),
                    )
                }
            })
            .collect()
    }

    /// The shortcut's two gold models, each over the twin's bronze, side
    /// by side with the same measure over the session's silver, and how
    /// far they disagree.
    async fn shortcut(&self, twin: &Playground) -> Result<(Vec<crate::lab::LabGold>, Vec<String>)> {
        let lang = self.lang;
        let Some(sc) = crate::lab::shortcut::models(&self.def, |t| self.decimal_of(t)) else {
            return Ok((vec![], vec![tr(
                lang,
                "The shortcut needs a bronze table with an amount column and a business key, stored raw from CSV or JSON (or typed): load the Kafka orders scenario.".into(),
                "Для shortcut нужна таблица bronze с колонкой суммы и бизнес-ключом, сырая из CSV или JSON (или типизированная): загрузите сценарий заказов из Kafka.".into(),
            )]));
        };
        let one = |ctx: &datafusion::prelude::SessionContext, sql: String| {
            let ctx = ctx.clone();
            async move {
                let df = ctx.sql(&sql).await?;
                let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
                let batches = df.collect().await?;
                Ok::<_, EngineError>(datafusion::arrow::compute::concat_batches(
                    &schema, &batches,
                )?)
            }
        };
        let truth = match one(&self.ctx, sc.silver_sql[0].clone()).await {
            Ok(t) => t,
            Err(_) => one(&self.ctx, sc.silver_sql[1].clone()).await?,
        };
        // Bronze's records as the declared schema parses them, in arrival order.
        let parsed = twin
            .last_good
            .as_ref()
            .and_then(|o| o.typed_bronze.get(&sc.table))
            .cloned()
            .ok_or_else(|| {
                EngineError::Internal(format!("the twin has no parsed bronze.{}", sc.table))
            })?;
        let arrival: datafusion::arrow::array::ArrayRef = std::sync::Arc::new(
            datafusion::arrow::array::Int64Array::from_iter_values(0..parsed.num_rows() as i64),
        );
        let mut fields: Vec<datafusion::arrow::datatypes::FieldRef> =
            parsed.schema().fields().iter().cloned().collect();
        fields.push(std::sync::Arc::new(
            datafusion::arrow::datatypes::Field::new(
                "_arrival",
                datafusion::arrow::datatypes::DataType::Int64,
                false,
            ),
        ));
        let mut columns = parsed.columns().to_vec();
        columns.push(arrival);
        let source = RecordBatch::try_new(
            std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
            columns,
        )?;
        let _ = twin.ctx.deregister_table(crate::lab::shortcut::SOURCE);
        twin.ctx
            .register_batch(crate::lab::shortcut::SOURCE, source)
            .map_err(EngineError::from)?;
        let mut gold = Vec::new();
        // Per model: its (records, total) as text.
        let mut figures: Vec<(String, Option<(String, String)>)> = Vec::new();
        let mut silver_says = None;
        for (name, sql) in &sc.models {
            let (rows, error) = match one(&twin.ctx, sql.clone()).await {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let g = compare_gold(
                TableName::gold(name),
                &[],
                Some(&truth),
                rows.as_ref(),
                error,
            )?;
            let m = |side: bool| -> Option<String> {
                let v: Vec<String> = ["records", "total"]
                    .iter()
                    .map(|c| {
                        g.measures.iter().find(|m| m.column == *c).map(|m| {
                            if side {
                                m.anti.clone()
                            } else {
                                m.correct.clone()
                            }
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(v.join("\u{1f}"))
            };
            silver_says = silver_says.or_else(|| m(false));
            figures.push((
                name.clone(),
                m(true).and_then(|v| {
                    v.split_once('\u{1f}')
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                }),
            ));
            gold.push(g);
        }
        let mut found = Vec::new();
        let truth = silver_says
            .as_deref()
            .and_then(|v| v.split_once('\u{1f}'))
            .map(|(a, b)| (a.to_string(), b.to_string()));
        if let ([(a, Some((ra, ta))), (b, Some((rb, tb)))], Some((rs, ts))) =
            (figures.as_slice(), truth)
        {
            // The gap as a share of the second model's figure; none when it is 0 or NULL.
            let pct = |x: &str, y: &str| match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(x), Ok(y)) if y != 0.0 => {
                    format!(" ({:.1}%)", (x - y).abs() / y.abs() * 100.0)
                }
                _ => String::new(),
            };
            let (t, k, amount) = (TableName::bronze(&sc.table), &sc.key, &sc.amount);
            let s = TableName::silver(&sc.silver);
            let mut apart = Vec::new();
            if ta != tb {
                apart.push(tr(
                    lang,
                    format!("Σ {amount} {ta} against {tb}{}", pct(ta, tb)),
                    format!("Σ {amount} {ta} против {tb}{}", pct(ta, tb)),
                ));
            }
            if ra != rb {
                apart.push(tr(
                    lang,
                    format!("{ra} records against {rb}{}", pct(ra, rb)),
                    format!("записей: {ra} против {rb}{}", pct(ra, rb)),
                ));
            }
            found.push(if apart.is_empty() {
                tr(lang, format!("gold.{a} and gold.{b} both read {t}, each with its own cleaning, and agree today (Σ {amount} {ta}, {ra} records); silver ({s}) says {ts} over {rs}. Send a business error or a CDC change and watch them drift apart."), format!("gold.{a} и gold.{b} обе читают {t}, каждая со своей очисткой, и сегодня совпадают (Σ {amount} {ta}, записей {ra}); silver ({s}) говорит {ts} по {rs}. Пришлите бизнес-ошибку или изменение CDC — и они разойдутся."))
            } else {
                tr(lang, format!("Two gold models read {t} and clean it their own way: gold.{a} keeps distinct payloads, gold.{b} the newest record of each {k} with {amount} > 0. They disagree: {}. Silver, the one cleaned source ({s}), says Σ {amount} {ts} over {rs} records. Which dashboard is right? Nobody can tell.", apart.join(", ")), format!("Две gold-модели читают {t} и чистят его каждая по-своему: gold.{a} оставляет различные payload, gold.{b} — последнюю запись каждого {k} с {amount} > 0. Они расходятся: {}. Silver, единственный очищенный источник ({s}), говорит Σ {amount} {ts} по {rs} записям. Какая витрина права? Никто не знает.", apart.join(", ")))
            });
        }
        Ok((gold, found))
    }

    /// What monolithic silver did with the last failed silver job: the
    /// twin's whole run stopped, the session held back only what reads the
    /// failed table (from its last run's `not_refreshed`).
    fn monolithic_finding(&self, twin: &Playground, lang: Lang) -> String {
        let Some(f) = &self.lab.job_failed else {
            return tr(
                lang,
                "One job builds every silver table in the twin. Fire \"A silver job fails\" (Events): one table's failure then stops all of them.".into(),
                "В двойнике все таблицы silver строит одна джоба. Нажмите «Джоба silver падает» (События): сбой одной таблицы остановит их все.".into(),
            );
        };
        let t = TableName::silver(&f.table);
        let waiting: Vec<TableName> = self
            .last_good
            .as_ref()
            .map(|o| o.not_refreshed.clone())
            .unwrap_or_default();
        let gold_waiting = waiting.iter().filter(|w| w.is_gold()).count();
        let (silver_n, gold_n) = (self.def.silver.len(), self.def.gold.len());
        let names = |v: &[TableName]| {
            v.iter()
                .map(TableName::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let fresh: Vec<TableName> = self
            .def
            .silver
            .iter()
            .map(|s| TableName::silver(&s.name))
            .chain(self.def.gold.iter().map(|g| TableName::gold(&g.name)))
            .filter(|n| !waiting.contains(n))
            .collect();
        let stopped = !twin.run_info.ok
            && twin
                .last_good
                .as_ref()
                .is_some_and(|o| o.not_refreshed.is_empty());
        let (w, fr) = (names(&waiting), names(&fresh));
        match (stopped, fresh.is_empty()) {
            (true, false) => tr(
                lang,
                format!("The job of {t} failed. Monolithic silver: the whole run stopped, and no silver table ({silver_n}) and no gold model was refreshed (gold models waiting for the retry: {gold_n} of {gold_n}). With independent jobs only these wait: {w} (gold models: {gold_waiting} of {gold_n}); up to date: {fr}."),
                format!("Джоба {t} упала. Монолитный silver: остановился весь запуск, не обновилась ни одна таблица silver ({silver_n}) и ни одна gold-модель (gold-моделей ждут повтора: {gold_n} из {gold_n}). С независимыми джобами ждут только: {w} (gold-моделей: {gold_waiting} из {gold_n}); актуальны: {fr}."),
            ),
            (true, true) => tr(
                lang,
                format!("The job of {t} failed and the whole monolithic run stopped; here every table reads {t}, so the independent jobs wait too."),
                format!("Джоба {t} упала, и весь монолитный запуск остановился; здесь каждая таблица читает {t}, поэтому независимые джобы тоже ждут."),
            ),
            (false, _) => tr(
                lang,
                format!("The job of {t} failed; the twin's run did not stop as a whole (see its error)."),
                format!("Джоба {t} упала; запуск двойника не остановился целиком (см. его ошибку)."),
            ),
        }
    }

    /// What exposes each anti-pattern that is on, from the figures compared.
    fn findings(
        &self,
        view: &LabView,
        left_out: &LeftOut,
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
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
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
                                format!("{t}: {} of its {mine} batches {} overwritten by a later batch of the same day; {} {n} {} gone ({sent} → {kept}). Time travel to the versions {} made and a replay of that day can only show the last batch.", mine - theirs, if mine - theirs == 1 { "was" } else { "were" }, if mine - theirs == 1 { "its" } else { "their" }, if n == 1 { "record is" } else { "records are" }, if mine - theirs == 1 { "it" } else { "they" }),
                                format!("{t}: {} из {mine} батчей {} более поздним батчем того же дня; записей из них больше нет: {n} ({sent} → {kept}). Time travel к их версиям и replay этого дня покажут только последний батч.", mine - theirs, if (mine - theirs) % 10 == 1 && (mine - theirs) % 100 != 11 { "перезаписан" } else { "перезаписаны" }),
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
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
                        let Some(c) = count(&TableName::bronze(&b.name)) else {
                            continue;
                        };
                        // This switch's own effect, whatever the others left out.
                        let sent = c.correct.unwrap_or(0);
                        let kept = sent.saturating_sub(n);
                        if n == 0 {
                            continue;
                        }
                        let t = TableName::bronze(&b.name);
                        out.push(match a {
                            AntiPattern::DedupAtIngest => tr(
                                lang,
                                format!("{t}: the source sent {sent} records, bronze with dropDuplicates holds {kept}. The {n} dropped (re-deliveries, later changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known."),
                                format!("{t}: источник прислал {sent} записей, bronze с dropDuplicates хранит {kept}. {n} отброшенных (повторные доставки, последующие изменения ключа) не учесть при сверке, не переиграть и не проверить: что прислал источник, больше неизвестно."),
                            ),
                            _ => tr(
                                lang,
                                format!("{t}: {n} of the {sent} records the source sent failed a business rule and were never written. An audit query over bronze for them finds 0 rows (the correct bronze: {n}); a rule relaxed later cannot bring them back by replay."),
                                format!("{t}: из {sent} присланных записей бизнес-правило не прошли и не записаны {n}. Аудит-запрос к bronze находит 0 строк (в правильном bronze: {n}); ослабленное позже правило не вернёт их через replay."),
                            ),
                        });
                    }
                    if *a == AntiPattern::FilterAtIngest {
                        if let Some(q) = count(&TableName::quarantine()) {
                            if q.correct != q.anti {
                                out.push(tr(
                                    lang,
                                    format!("silver.quarantine: {} open rows in the correct pipeline, {} with the filter at ingest: nobody sees what was rejected, or why.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                    format!("silver.quarantine: открытых строк в правильном пайплайне — {}, с фильтром при загрузке — {}: никто не видит, что отброшено и почему.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                ));
                            }
                        }
                    }
                }
                // Their findings come from the twin as published (`rewrite_findings`) and the shortcut's models.
                AntiPattern::FixJobInBronze
                | AntiPattern::WeeklyDelete
                | AntiPattern::Shortcut
                | AntiPattern::JoinAtIngest => {}
                AntiPattern::MonolithicSilver => out.push(self.monolithic_finding(twin, lang)),
                AntiPattern::InsertInsteadOfMerge => {
                    let reruns = self.lab.reruns();
                    let merged = self.inserted_tables();
                    let again: Vec<String> = crate::lab::twin_bronze::repeated(&self.batches)
                        .iter()
                        .filter_map(|id| self.batches.iter().find(|b| &b.batch_id == id))
                        .filter(|b| {
                            merged.iter().any(|t| {
                                self.def.silver.iter().any(|s| {
                                    TableName::silver(&s.name) == *t && s.source == b.table
                                })
                            })
                        })
                        .map(|b| b.file_name.clone())
                        .collect();
                    if merged.is_empty() {
                        out.push(tr(
                            lang,
                            "No silver table of this scenario is written by MERGE, so INSERT changes nothing here: load the Kafka orders scenario.".into(),
                            "В этом сценарии нет таблиц silver, которые пишутся через MERGE, поэтому INSERT здесь ничего не меняет: загрузите сценарий заказов из Kafka.".into(),
                        ));
                    } else if reruns == 0 && !again.is_empty() {
                        let files = again.join(", ");
                        for t in &merged {
                            if let Some(c) = count(t) {
                                let (m, i) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                                out.push(tr(
                                    lang,
                                    format!("{t}: {m} rows with MERGE, {i} with INSERT: what the source delivered again ({files}) was inserted again; MERGE matched it to the rows it repeats."),
                                    format!("{t}: строк с MERGE — {m}, с INSERT — {i}: то, что источник доставил повторно ({files}), вставлено ещё раз; MERGE сопоставил это со строками, которые оно повторяет."),
                                ));
                            }
                        }
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
                                let (m, i, runs) =
                                    (c.correct.unwrap_or(0), c.anti.unwrap_or(0), reruns + 1);
                                // INSERT appends the same rows each run: one run's share.
                                let per_run = i / runs;
                                out.push(if i > m || (per_run > 0 && i == per_run * runs && runs > 1) {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job ({per_run} each run): every re-run appended the same rows again."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы (по {per_run} за запуск): каждый перезапуск дописал те же строки ещё раз."),
                                    )
                                } else {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы."),
                                    )
                                });
                            }
                        }
                    }
                }
            }
        }
        for a in &view.on {
            let none = left_out.get(a).is_some_and(|m| m.values().all(|n| *n == 0));
            let why = match a {
                AntiPattern::DedupAtIngest => Some(tr(lang, "dropDuplicates at ingest changes nothing here: no two records of a bronze table share a business key (re-send a file or let the Kafka consumer crash to see it).".into(), "dropDuplicates при загрузке здесь ничего не меняет: ни у каких двух записей таблицы bronze нет общего бизнес-ключа (пришлите файл повторно или уроните консьюмер Kafka, чтобы увидеть эффект).".into())),
                AntiPattern::FilterAtIngest => Some(tr(lang, "The business filter at ingest changes nothing here: silver's rules reject no record of this scenario (send a business error to see it).".into(), "Бизнес-фильтр при загрузке здесь ничего не меняет: правила silver не отклоняют ни одной записи этого сценария (пришлите бизнес-ошибку, чтобы увидеть эффект).".into())),
                AntiPattern::DropMalformed => Some(tr(lang, "DROPMALFORMED changes nothing here: every record fits the declared schema; the records silver rejects fail its rules (a cast, an expectation), which a read mode does not apply. Load the e-commerce scenario, whose files have records that do not fit.".into(), "DROPMALFORMED здесь ничего не меняет: каждая запись подходит к объявленной схеме; записи, которые отклоняет silver, не проходят его правила (приведение типа, ожидание), а режим чтения их не применяет. Загрузите сценарий e-commerce — там есть неподходящие записи.".into())),
                _ => None,
            };
            if let (true, Some(why)) = (none, why) {
                out.push(why);
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

/// Gold tables of `def` whose rows differ between `a` and `b` (last good
/// runs), with the number of rows that differ (a multiset diff).
fn gold_differs(def: &PipelineDef, a: &Playground, b: &Playground) -> Vec<(TableName, usize)> {
    let mut differs = Vec::new();
    for g in &def.gold {
        let t = TableName::gold(&g.name);
        let (x, y) = (
            a.last_good.as_ref().and_then(|o| o.table(&t)),
            b.last_good.as_ref().and_then(|o| o.table(&t)),
        );
        if let (Some(x), Some(y)) = (x, y) {
            // A changed row is one out and one in: count it once.
            let n = crate::lake::versions::row_diff(x, y)
                .map(|(p, q)| p.max(q))
                .unwrap_or(usize::MAX);
            if n > 0 {
                differs.push((t, n));
            }
        }
    }
    differs
}
