//! The lab's events (seed 000 §5–8, seed 003 §6): each a real change to the
//! session, read before anything is written so a refusal changes nothing.

use super::*;

impl Playground {
    /// The newest batch that has a landed file (not a Kafka micro-batch).
    pub(super) fn newest_landed(&self, table: Option<&str>) -> Option<BatchInfo> {
        self.batches
            .iter()
            .rev()
            .find(|b| b.landing_path.is_some() && table.is_none_or(|t| b.table == t))
            .cloned()
    }

    /// The newest landed file's batch and bytes (what the source sends again).
    pub(super) async fn newest_file(&self) -> Result<(BatchInfo, Vec<u8>)> {
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
    pub(super) async fn resend_file(&mut self) -> Result<Bi> {
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
    pub(super) async fn technical_failure(&mut self) -> Result<Bi> {
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
            format!("Attempt 1 of writing {} to {t}: the object store answered 503 Service Unavailable after {n} {}; nothing became visible, {t} stayed at version {}. Attempt 2, the platform's retry, landed it as version {}. A technical failure: the platform fixes it by retrying; no data owner has anything to fix.", b.file_name, if n == 1 { "write" } else { "writes" }, v(before), v(version(self))),
            format!("Попытка 1 записать {} в {t}: хранилище ответило 503 Service Unavailable после {n} {}; ничего не стало видимым, {t} осталась на версии {}. Попытка 2, повтор платформы, записала его версией {}. Техническая ошибка: её исправляет платформа повтором; владельцу данных исправлять нечего.", b.file_name, writes_ru, v(before), v(version(self))),
        ))
    }

    /// The Kafka consumer crashed after writing its last micro-batch and
    /// before committing: the offsets go back and the micro-batch comes again.
    pub(super) async fn kafka_redeliver(&mut self) -> Result<Bi> {
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
    pub(super) async fn produce_lines(&mut self, table: &str, text: &str) -> Result<()> {
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

    /// Sends what `make` writes from bronze `table`'s source as the source
    /// would: from its Kafka topic's live messages as new messages on it,
    /// else from its newest landed file's records as a file named
    /// `{stem}_{suffix}.{ext}` in the same format. `make` gets the format,
    /// the CSV dialect and header, and the records' texts, and returns the
    /// text to send with its extension. Returns what was sent (the topic or
    /// the file's name); runs nothing.
    pub(super) async fn send_as_source(
        &mut self,
        table: &str,
        suffix: &str,
        make: impl FnOnce(
            crate::bronze::SourceFormat,
            Option<&crate::bronze::CsvDialect>,
            &[String],
            Vec<String>,
        ) -> Result<(String, &'static str)>,
    ) -> Result<Bi> {
        if let Some(topic) = self.topics.get(table).filter(|t| t.committed > 0).cloned() {
            let live: Vec<String> = topic
                .log
                .iter()
                .filter(|m| !m.erased)
                .filter_map(|m| m.value.clone())
                .collect();
            let (text, _) = make(crate::bronze::SourceFormat::JsonLines, None, &[], live)?;
            self.produce_lines(table, &text).await?;
            return Ok(Bi::new(
                format!("new messages on {}", topic.name),
                format!("новые сообщения в {}", topic.name),
            ));
        }
        let b = self
            .newest_landed(Some(table))
            .ok_or_else(|| EngineError::Internal("no landed file".into()))?;
        let (split, texts) = self.landed_records(&b, table).await?;
        let (text, ext) = make(split.format, split.dialect.as_ref(), &split.header, texts)?;
        let name = format!("{}_{suffix}.{ext}", file_stem(&b.file_name));
        self.append(table, &name, text.as_bytes(), &IngestOptions::default())
            .await?;
        Ok(Bi::new(name.clone(), name))
    }

    /// The silver table whose job [`LabEvent::SilverJobFails`] fails: the
    /// one whose failure leaves the most gold models refreshed, then the
    /// fewest silver tables held back; with what it holds back (silver
    /// tables, then gold models, qualified). Errors: one silver table only.
    pub(super) async fn job_to_fail(&self) -> Result<(String, Vec<TableName>, Vec<TableName>)> {
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
    pub(super) async fn silver_job_fails(&mut self) -> Result<Bi> {
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
        let what = self
            .send_as_source(&source, "new", |format, dialect, header, all| {
                let texts = newest_accepted_n(&all, &rejected, LATE_RECORDS);
                crate::lab::events::again(format, dialect, header, &texts, key.as_deref(), lang)
            })
            .await?;
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
    pub(super) async fn landed_records(
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
    pub(super) fn decimal_of(&self, table: &str) -> char {
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
    pub(super) fn ingest_joins(&self) -> Vec<IngestJoin> {
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
    pub(super) async fn dimension_change(&mut self) -> Result<Bi> {
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
    pub(super) async fn send_edited(&mut self, event: LabEvent) -> Result<Bi> {
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
        let suffix = match event {
            LabEvent::BusinessError => "business_error",
            LabEvent::LateRecords => "late",
            _ => "v2",
        };
        let what = self
            .send_as_source(&table, suffix, |format, dialect, header, all| {
                edit(format, dialect, header, all, &mut column, &mut dates)
            })
            .await?;
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
}
