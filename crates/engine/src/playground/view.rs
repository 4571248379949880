//! What the page shows: the snapshot of the whole pipeline, one table's
//! page (now or at a version), a row's trail back to bronze, and a rule
//! registry exported as text.

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use medallion_protocol::{Layer, TableName};

use crate::api::{
    diagnostics_for, ColumnView, GoldView, Lang, PipelineView, ReadAsUtcView, RuleView, SilverView,
    TableView,
};
use crate::error::{EngineError, Result};
use crate::lake::versions::KEEP_SNAPSHOTS;
use crate::silver::source::{ArrowColumnType, ColumnType};

use super::*;

impl Playground {
    /// The row trail of row `row` of `table` (see [`crate::trail`]).
    pub async fn trail(&self, table: &TableName, row: usize) -> Result<crate::trail::RowTrail> {
        let out = self
            .last_good
            .as_ref()
            .ok_or_else(|| EngineError::Request("nothing has run yet".into()))?;
        crate::trail::trail(
            crate::trail::TrailInput {
                ctx: &self.ctx,
                def: &self.def,
                bronze: &self.bronze,
                out,
            },
            table,
            row,
        )
        .await
        .map_err(EngineError::from)
    }

    /// Everything the UI shows, with the first [`PREVIEW_ROWS`] rows of each table.
    pub fn view(&self) -> PipelineView {
        let mut tables = Vec::new();
        for b in &self.def.bronze {
            if let Ok(v) = self.table_view(&TableName::bronze(&b.name), 0, PREVIEW_ROWS) {
                tables.push(v);
            }
        }
        if let Some(out) = &self.last_good {
            for t in out.tables.iter().filter(|t| !t.name.is_bronze()) {
                if let Ok(v) = self.table_view(&t.name, 0, PREVIEW_ROWS) {
                    tables.push(v);
                }
            }
        }
        let stats = self
            .last_good
            .as_ref()
            .map(|o| o.rule_stats.as_slice())
            .unwrap_or(&[]);
        let silver = self
            .def
            .silver
            .iter()
            .map(|s| SilverView {
                name: TableName::silver(&s.name),
                source: TableName::bronze(&s.source),
                rules: s
                    .rules
                    .rules
                    .iter()
                    .map(|r| RuleView {
                        rule: r.clone(),
                        stat: if r.enabled {
                            stats
                                .iter()
                                .find(|st| st.rule_id == r.id && st.silver_table == s.name)
                                .cloned()
                        } else {
                            None
                        },
                        error: diagnostics_for(
                            self.diagnostics.iter().filter(|d| d.table == s.name),
                            "rule",
                            &r.id,
                        ),
                    })
                    .collect(),
                merge: s.merge.clone(),
                explode: s.explode.clone(),
                explode_stats: self
                    .last_good
                    .as_ref()
                    .and_then(|o| o.exploded.get(&TableName::silver(&s.name)).copied()),
            })
            .collect();
        let gold = self
            .def
            .gold
            .iter()
            .map(|g| GoldView {
                model: g.clone(),
                error: diagnostics_for(self.diagnostics.iter(), "gold", &g.name),
                reads_bronze: self
                    .last_good
                    .as_ref()
                    .and_then(|o| o.gold_reads_bronze.get(&g.name).cloned())
                    .unwrap_or_default(),
            })
            .collect();
        PipelineView {
            lab: self.lab_view.clone(),
            example: self.example.clone(),
            title: self.def.title.clone(),
            lang: self.lang,
            tables,
            silver,
            gold,
            checks: self.checks.clone(),
            run_history: self.run_history.clone(),
            anti_patterns: self.def.anti_patterns.clone(),
            quarantine_open: self
                .last_good
                .as_ref()
                .and_then(|o| o.table(TableName::quarantine()))
                .map_or(0, crate::silver::quarantine::open_rows),
            batches: self.batches.clone(),
            history: self.history.all(),
            state: self.state_token(),
            replay: self.replay.clone(),
            run_mode: self.mode,
            bronze_mode: self.def.bronze.first().map(|b| b.mode).unwrap_or_default(),
            bronze_modes: self
                .def
                .bronze
                .iter()
                .map(|b| (TableName::bronze(&b.name), b.mode))
                .collect(),
            read_as_utc: self
                .last_good
                .iter()
                .flat_map(|o| &o.read_as_utc)
                .flat_map(|(table, cols)| utc_views(TableName::bronze(table), cols))
                // Element columns of exploded arrays (child silver tables).
                .chain(
                    self.last_good
                        .iter()
                        .flat_map(|o| &o.exploded_read_as_utc)
                        .flat_map(|(table, cols)| utc_views(table.clone(), cols)),
                )
                // Normalizations that convert text to TIMESTAMP read the same way.
                .chain(
                    self.last_good
                        .iter()
                        .flat_map(|o| &o.rule_stats)
                        .filter(|st| st.read_as_utc > 0)
                        .map(|st| ReadAsUtcView {
                            bronze_table: TableName::silver(&st.silver_table),
                            column: format!("{} ({})", self.rule_column(st), st.rule_id),
                            without_offset: st.read_as_utc,
                            values: st.checked,
                        }),
                )
                .collect(),
            checkpoints: self.checkpoints.clone(),
            topics: self.topics.iter().map(|(t, topic)| topic.view(t)).collect(),
            erasures: self.erasures.clone(),
            notice: self.notice.clone(),
            run: self.run_info.clone(),
            saving: vec![],
        }
    }

    /// [`PipelineView::state`]: the first 16 hex digits of the SHA-256 of
    /// every table's newest version, the definition, the Kafka topics
    /// (messages and offsets) and the run mode, as JSON.
    pub fn state_token(&self) -> String {
        let versions: BTreeMap<String, u64> = self
            .history
            .all()
            .into_iter()
            .filter_map(|(t, v)| Some((t.to_string(), v.last()?.version)))
            .collect();
        let text = serde_json::to_string(&(&versions, &self.def, &self.topics, self.mode))
            .unwrap_or_default();
        crate::bronze::sha256_hex(text.as_bytes())[..16].to_string()
    }

    pub(super) fn table_batch(&self, name: &TableName) -> Option<RecordBatch> {
        if name.is_bronze() {
            self.def.bronze_table(name.name())?;
            return self.bronze_rows(name.name(), None).ok();
        }
        self.last_good.as_ref()?.table(name).cloned()
    }

    /// Rows `offset..offset+limit` of the current version of table `name` as text.
    pub fn table_view(&self, name: &TableName, offset: usize, limit: usize) -> Result<TableView> {
        let batch = self
            .table_batch(name)
            .ok_or_else(|| EngineError::Request(format!("there is no table {name}")))?;
        self.render(name, batch, offset, limit, None, false)
    }

    /// The data of `name` at `version` (time travel), as kept in its history.
    pub(super) async fn table_batch_at(
        &self,
        name: &TableName,
        version: u64,
    ) -> Result<RecordBatch> {
        let versions = self.history.versions(name);
        let newest = versions
            .last()
            .map(|v| v.version)
            .ok_or_else(|| EngineError::Request(format!("there is no table {name}")))?;
        if version > newest {
            return Err(EngineError::Request(format!(
                "{name} has no version {version}; the newest is {newest}"
            )));
        }
        if name.is_bronze() {
            return self.bronze_rows(name.name(), Some(version));
        }
        self.history.snapshot(&self.lake, name, version).await?.ok_or_else(|| {
            EngineError::Request(format!(
                "version {version} of {name} has expired: only the newest {KEEP_SNAPSHOTS} snapshots of a table keep their data"
            ))
        })
    }

    /// Like [`Self::table_view`], at an earlier `version` when given (time
    /// travel: its rows come from the files the table's log names).
    pub async fn table_view_at(
        &self,
        name: &TableName,
        offset: usize,
        limit: usize,
        version: Option<u64>,
        corrupt_only: bool,
    ) -> Result<TableView> {
        let batch = match version {
            Some(v) => self.table_batch_at(name, v).await?,
            None => self
                .table_batch(name)
                .ok_or_else(|| EngineError::Request(format!("there is no table {name}")))?,
        };
        self.render(name, batch, offset, limit, version, corrupt_only)
    }

    /// `batch` (table `name`, at `version` or the current one) as the page shows it.
    fn render(
        &self,
        name: &TableName,
        batch: RecordBatch,
        offset: usize,
        limit: usize,
        version: Option<u64>,
        corrupt_only: bool,
    ) -> Result<TableView> {
        // Bronze rows flagged at ingest (the `_corrupt_reason` column is set).
        let flagged = batch
            .column_by_name("_corrupt_reason")
            .map(|c| datafusion::arrow::compute::is_not_null(c.as_ref()))
            .transpose()?;
        let corrupt_rows = flagged.as_ref().map(|f| f.true_count()).unwrap_or(0);
        let batch = match (&flagged, corrupt_only) {
            (Some(mask), true) => datafusion::arrow::compute::filter_record_batch(&batch, mask)?,
            _ => batch,
        };
        let layer = name.layer();
        let description = self.describe(name);
        let schema = batch.schema();
        let columns = schema
            .fields()
            .iter()
            .map(|f| ColumnView {
                name: f.name().clone(),
                data_type: ColumnType::from_arrow(f.data_type())
                    .map(|t| t.sql_name().to_string())
                    .unwrap_or_else(|| sql_type_name(f.data_type())),
            })
            .collect();
        let start = offset.min(batch.num_rows());
        let len = limit.min(batch.num_rows() - start);
        let page = batch.slice(start, len);
        let opts = FormatOptions::default()
            .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
            .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f UTC"));
        let formatters: Vec<_> = page
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<std::result::Result<_, _>>()?;
        let rows = (0..page.num_rows())
            .map(|r| {
                page.columns()
                    .iter()
                    .zip(&formatters)
                    .map(|(c, f)| {
                        if c.is_null(r) {
                            None
                        } else {
                            Some(f.value(r).to_string())
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(TableView {
            name: name.clone(),
            version: version.or_else(|| self.history.current(name)),
            corrupt_rows,
            corrupt_only,
            layer,
            description,
            columns,
            row_count: batch.num_rows(),
            offset: start,
            rows,
        })
    }

    pub(super) fn describe(&self, name: &TableName) -> String {
        let table = name.name();
        let ru = self.lang == Lang::Ru;
        match name.layer() {
            Layer::Bronze => self
                .def
                .bronze_table(table)
                .map(|b| b.description.clone())
                .unwrap_or_default(),
            Layer::Silver if name.is_quarantine() => if ru {
                "Строки, не дошедшие до silver: id правила и причина, исходный текст из bronze."
            } else {
                "Rows that did not reach silver: the rule id and reason, with the bronze text."
            }
            .to_string(),
            Layer::Silver => self
                .def
                .silver
                .iter()
                .find(|s| s.name == table)
                .map(|s| s.description.clone())
                .unwrap_or_default(),
            Layer::Gold => self
                .def
                .gold
                .iter()
                .find(|g| g.name == table)
                .map(|g| g.description.clone())
                .unwrap_or_default(),
            Layer::Meta => String::new(),
        }
    }

    /// The registry of `silver_table` as the markdown table of seed 002 section 3.
    pub fn export_rules(&self, silver_table: &str) -> Result<String> {
        let name = Layer::Silver.unqualified(silver_table);
        self.def
            .silver
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.rules.to_markdown_in(self.lang))
            .ok_or_else(|| EngineError::Request(format!("there is no silver table {name}")))
    }

    /// The column rule `st` works on (its id when the rule is gone).
    pub(super) fn rule_column(&self, st: &crate::silver::rules::RuleStat) -> String {
        self.def
            .silver
            .iter()
            .filter(|s| s.name == st.silver_table)
            .flat_map(|s| &s.rules.rules)
            .find(|r| r.id == st.rule_id)
            .map(|r| r.column.trim().to_string())
            .unwrap_or_else(|| st.rule_id.clone())
    }
}

pub(super) fn sql_type_name(dt: &datafusion::arrow::datatypes::DataType) -> String {
    use datafusion::arrow::datatypes::DataType as D;
    match dt {
        D::Timestamp(_, Some(tz)) => format!("TIMESTAMP ({tz})"),
        D::Int8 | D::Int16 => "SMALLINT".into(),
        D::UInt32 | D::UInt64 | D::Int64 => "BIGINT".into(),
        D::Float32 => "FLOAT".into(),
        D::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        other => other.to_string(),
    }
}

/// The columns of `table` whose texts without an offset were read as UTC.
fn utc_views(
    table: TableName,
    cols: &[crate::silver::source::ReadAsUtc],
) -> impl Iterator<Item = ReadAsUtcView> + '_ {
    cols.iter().map(move |r| ReadAsUtcView {
        bronze_table: table.clone(),
        column: r.column.clone(),
        without_offset: r.without_offset,
        values: r.values,
    })
}
