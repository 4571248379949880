//! Loading a pipeline: a bundled example (its definition, its files
//! ingested, its Kafka messages polled, then a run) or a user's pipeline,
//! each in a fresh lake; and switching the language of an example's texts
//! the user has not edited.

use crate::api::{Lang, RunInfo, RunMode};
use crate::bronze::kafka::{KafkaMessage, Topic};
use crate::bronze::{table_schema, IngestOptions};
use crate::checks::evaluate;
use crate::error::{EngineError, Result};
use crate::lake::log::{schema_string, Action, CommitInfo, Format, MetaData, TableLog};
use crate::lake::versions::History;
use crate::lake::Lake;
use crate::model::{BronzeMode, PipelineDef};
use crate::silver::source::validate_schema;
use medallion_protocol::TableName;

use super::*;

impl Playground {
    /// Replaces everything with a bundled example and runs it.
    pub async fn load_example(&mut self, name: &str, lang: Lang) -> Result<()> {
        self.load_example_with(name, lang, None).await
    }

    /// [`Self::load_example`] with every bronze table stored in `mode`
    /// (raw, or typed: PERMISSIVE, FAILFAST, DROPMALFORMED). The example is
    /// loaded into a new session that replaces this one only once it has
    /// loaded: a load that fails (a log entry that cannot be written)
    /// leaves the session as it was.
    pub async fn load_example_with(
        &mut self,
        name: &str,
        lang: Lang,
        mode: Option<BronzeMode>,
    ) -> Result<()> {
        let (mut fresh, mark) = self.fresh()?;
        let loaded = fresh.load_example_into(name, lang, mode).await;
        self.adopt(fresh, mark, loaded)
    }

    /// A new empty session with this one's clock, ids and stores (ids
    /// start over; `mark` is where they were).
    fn fresh(&mut self) -> Result<(Playground, u64)> {
        let mut fresh = Playground::blank(
            self.clock.clone(),
            self.ids.clone(),
            self.new_store.clone(),
            self.lake.clone(),
        )?;
        fresh.lang = self.lang;
        fresh.progress = self.progress.take();
        // The new session's run is the load's result: it previews it.
        fresh.preview = self.preview.take();
        fresh.downloads = self.downloads.clone();
        fresh.memory_budget = self.memory_budget;
        fresh.reuse_last_run = self.reuse_last_run;
        let mark = self.ids.start_over();
        Ok((fresh, mark))
    }

    /// Becomes `fresh` if it `loaded`; otherwise stays as it was (ids too).
    fn adopt(&mut self, mut fresh: Playground, mark: u64, loaded: Result<()>) -> Result<()> {
        match loaded {
            Ok(()) => {
                // The PII lab's lakes are not the session's: they stay.
                fresh.pii = self.pii.take();
                *self = fresh;
                Ok(())
            }
            Err(e) => {
                self.progress = fresh.progress.take();
                self.ids.resume(mark);
                Err(e)
            }
        }
    }

    /// Gives this session the decompressed bytes of an example's download
    /// (one of `medallion_protocol::examples::EXAMPLES[..].downloads`, by
    /// its `path`), for the next [`Self::load_example`] of that example:
    /// the browser's worker fetches them from the site; a native caller
    /// reads them from `static/` (gunzipped). A path that is no example's
    /// download, or bytes of another size than the download's, are refused.
    pub fn add_download(&mut self, path: &str, bytes: Vec<u8>) -> Result<()> {
        let download = crate::examples::EXAMPLES
            .iter()
            .flat_map(|e| e.info.downloads)
            .find(|d| d.path == path)
            .ok_or_else(|| EngineError::Request(format!("{path} is no example's download")))?;
        if bytes.len() as u64 != download.bytes {
            return Err(EngineError::Request(format!(
                "{}: {} bytes arrived where {} were expected (an incomplete or changed download)",
                download.file,
                bytes.len(),
                download.bytes
            )));
        }
        self.downloads.insert(download.path, bytes.into());
        Ok(())
    }

    /// The downloads of `info` that this session does not hold yet.
    pub fn missing_downloads(
        &self,
        info: &medallion_protocol::examples::ExampleInfo,
    ) -> Vec<&'static medallion_protocol::examples::Download> {
        info.downloads
            .iter()
            .filter(|d| !self.downloads.contains_key(d.path))
            .collect()
    }

    /// `(table, file, bytes)` of every download of `info`, in order; an
    /// error naming those not given yet.
    fn downloaded(
        &self,
        info: &medallion_protocol::examples::ExampleInfo,
    ) -> Result<Vec<(&'static str, &'static str, Arc<[u8]>)>> {
        let missing = self.missing_downloads(info);
        if !missing.is_empty() {
            return Err(EngineError::Request(format!(
                "the example {} needs its downloaded files first: {} (the page fetches them; a script gives them with add_download)",
                info.name,
                missing.iter().map(|d| d.path).collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(info
            .downloads
            .iter()
            .map(|d| (d.table, d.file, self.downloads[d.path].clone()))
            .collect())
    }

    async fn load_example_into(
        &mut self,
        name: &str,
        lang: Lang,
        mode: Option<BronzeMode>,
    ) -> Result<()> {
        let example = crate::examples::find(name).ok_or_else(|| {
            EngineError::Request(format!(
                "unknown example {name}; known: {}",
                crate::examples::names().join(", ")
            ))
        })?;
        let mut def = (example.definition)(lang);
        if let Some(mode) = mode {
            for b in &mut def.bronze {
                b.mode = mode;
            }
        }
        let downloaded = self.downloaded(&example.info)?;
        self.reset(name, def, lang).await?;
        // The downloaded files first, then the bundled ones, each one batch.
        let downloaded = downloaded.iter().map(|(t, f, b)| (*t, *f, &b[..]));
        for (table, file, bytes) in downloaded.chain((example.files)()) {
            self.append(table, file, bytes, &IngestOptions::default())
                .await?;
        }
        // Kafka-fed tables: the example's messages are produced, then polled
        // as one micro-batch.
        for (table, lines) in (example.kafka)() {
            let messages = lines
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| KafkaMessage {
                    key: None,
                    value: (l.trim() != "null").then(|| l.to_string()),
                    producer_ts_micros: None,
                    erased: false,
                })
                .collect();
            self.kafka_produce(table, messages)?;
            self.poll_into_bronze(table, None, false).await?;
        }
        self.run().await;
        Ok(())
    }

    /// Replaces everything with `pipeline` and empty bronze tables (the
    /// scripting entry point: define tables, rules and gold, then ingest).
    /// A source column with an unknown time zone or an unusable declared
    /// format refuses the pipeline (nothing changes), naming table and column.
    pub async fn load_pipeline(&mut self, pipeline: PipelineDef) -> Result<()> {
        for b in &pipeline.bronze {
            validate_schema(&b.schema).map_err(|e| {
                EngineError::Request(format!("{}: {e}", TableName::bronze(&b.name)))
            })?;
        }
        let lang = self.lang;
        let (mut fresh, mark) = self.fresh()?;
        let loaded = async {
            fresh.reset("", pipeline, lang).await?;
            fresh.run().await;
            Ok(())
        }
        .await;
        self.adopt(fresh, mark, loaded)
    }

    pub(super) async fn reset(&mut self, name: &str, def: PipelineDef, lang: Lang) -> Result<()> {
        let lake = Lake::from_store((self.new_store)());
        self.ctx = new_session(&lake)?;
        self.lake = lake;
        self.lang = lang;
        self.example = name.to_string();
        self.def = def;
        self.batches.clear();
        self.bronze.clear();
        self.last_good = None;
        self.history = History::default();
        self.replay = None;
        self.mode = RunMode::Full;
        self.checkpoints.clear();
        self.erasures.clear();
        self.topics = self
            .def
            .bronze
            .iter()
            .filter_map(|b| {
                b.kafka_topic.as_ref().map(|t| {
                    (
                        b.name.clone(),
                        Topic {
                            name: t.clone(),
                            ..Default::default()
                        },
                    )
                })
            })
            .collect();
        self.checks.clear();
        self.run_history.clear();
        self.diagnostics.clear();
        self.run_info = RunInfo {
            ok: true,
            duration_ms: 0.0,
            runs: 0,
            errors: vec![],
            not_refreshed: vec![],
        };
        let created = self.clock.now_micros();
        for b in self.def.bronze.clone() {
            let table = TableName::bronze(&b.name);
            self.register_bronze(&b.name).await?;
            let schema = table_schema(&b);
            TableLog::new(self.lake.store(), table.path())
                .commit(
                    None,
                    &[
                        Action::CommitInfo(
                            CommitInfo::new(
                                created,
                                "CREATE TABLE",
                                if b.mode.is_typed() {
                                    format!(
                                        "append-only, typed ({}): the declared columns + audit columns",
                                        b.mode.label()
                                    )
                                } else {
                                    "append-only, raw_payload + audit columns".to_string()
                                },
                                0,
                                0,
                            )
                            .with("description", b.description.clone()),
                        ),
                        Action::MetaData(MetaData {
                            id: format!("{table}@{created}"),
                            name: table.to_string(),
                            format: Format {
                                provider: "parquet".into(),
                                options: Default::default(),
                            },
                            schema_string: schema_string(&schema),
                            partition_columns: vec![],
                            configuration: [(
                                "medallion.appendOnly".to_string(),
                                "true".to_string(),
                            )]
                            .into(),
                            created_time: created / 1000,
                        }),
                    ],
                )
                .await?;
            self.history.refresh(&self.lake, &table).await?;
        }
        Ok(())
    }

    /// Switches the language of engine-written texts. If the example is
    /// untouched (no rule, SQL or file changed), it is reloaded in that
    /// language so its rationales follow too.
    pub async fn set_lang(&mut self, lang: Lang) -> Result<()> {
        let mode = self.def.bronze.first().map(|b| b.mode);
        // Modes as the example defines them, or all switched to one ("stored as").
        let mut mode_override = None;
        let untouched = crate::examples::find(&self.example).is_some_and(|e| {
            let mut def = (e.definition)(self.lang);
            if def != self.def {
                for b in &mut def.bronze {
                    b.mode = mode.unwrap_or_default();
                }
                mode_override = mode;
            }
            def == self.def && self.batches.len() == (e.files)().len() + (e.kafka)().len()
        });
        let mode = mode_override;
        if untouched && lang != self.lang {
            let example = self.example.clone();
            return self.load_example_with(&example, lang, mode).await;
        }
        // An edited example keeps its edits; texts still as the example wrote
        // them (titles, descriptions, rationales) switch language.
        if let Some(e) = crate::examples::find(&self.example) {
            let (old, new) = ((e.definition)(self.lang), (e.definition)(lang));
            translate_untouched(&mut self.def, &old, &new);
        }
        self.lang = lang;
        if let Some(out) = &self.last_good {
            self.checks = evaluate(&self.ctx, &self.def, out, lang).await;
        }
        Ok(())
    }
}

/// Texts of `def` that still read as in `old` (the example in the previous
/// language) become `new`'s; texts the user edited stay.
pub(super) fn translate_untouched(def: &mut PipelineDef, old: &PipelineDef, new: &PipelineDef) {
    fn swap(text: &mut String, old: Option<&String>, new: Option<&String>) {
        if let (Some(o), Some(n)) = (old, new) {
            if text == o {
                *text = n.clone();
            }
        }
    }
    swap(&mut def.title, Some(&old.title), Some(&new.title));
    for b in &mut def.bronze {
        let [o, n] = [old, new].map(|d| d.bronze.iter().find(|x| x.name == b.name));
        swap(
            &mut b.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
    for s in &mut def.silver {
        let [o, n] = [old, new].map(|d| d.silver.iter().find(|x| x.name == s.name));
        swap(
            &mut s.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
        for r in &mut s.rules.rules {
            let [ro, rn] =
                [o, n].map(|t| t.and_then(|t| t.rules.rules.iter().find(|y| y.id == r.id)));
            swap(
                &mut r.rationale,
                ro.map(|x| &x.rationale),
                rn.map(|x| &x.rationale),
            );
        }
    }
    for g in &mut def.gold {
        let [o, n] = [old, new].map(|d| d.gold.iter().find(|x| x.name == g.name));
        swap(
            &mut g.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
    for c in &mut def.checks {
        let [o, n] = [old, new].map(|d| d.checks.iter().find(|x| x.id == c.id));
        swap(
            &mut c.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
}
