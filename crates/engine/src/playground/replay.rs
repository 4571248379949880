//! Replay: every silver and gold table rebuilt from bronze alone, in a fresh
//! lake and session, and compared row by row with the current tables
//! (bronze is enough to rebuild everything; seed 000).

use datafusion::arrow::array::RecordBatch;
use crate::lake::concat_batches;
use medallion_protocol::TableName;

use crate::api::{ReplayReport, ReplayTable};
use crate::bronze::table_schema;
use crate::error::{joined_messages, Diagnostic, EngineError, Result};
use crate::lake::versions::row_diff;
use crate::lake::Lake;
use crate::output::{RunInput, RunOutput};
use crate::pipeline::run;
use crate::query::register_table;

use super::*;

/// Why silver and gold could not be rebuilt from bronze alone (a replay, an
/// erasure's dry run): reported with the result, not as the request's error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RebuildError {
    /// The fresh lake and session could not be set up.
    #[error(transparent)]
    Setup(#[from] EngineError),
    /// The run failed: its rule and pipeline diagnostics.
    #[error("{}", joined_messages(.0))]
    Run(Vec<Diagnostic>),
}

impl Playground {
    /// Rebuilds every silver and gold table from bronze alone, in a fresh lake
    /// and session, and compares the result with the current tables row by
    /// row (as multisets). The current tables are not changed.
    pub async fn replay(&mut self) -> Result<ReplayReport> {
        let report = match self.rebuild(&self.bronze).await {
            Err(error) => ReplayReport {
                identical: false,
                tables: vec![],
                error: Some(error.to_string()),
                state: self.state_token(),
            },
            Ok(out) => {
                let mut tables = Vec::new();
                for t in out.tables.iter().filter(|t| !t.name.is_bronze()) {
                    let mut current = self.table_batch(&t.name);
                    let mut t = t.clone();
                    // The quarantine is history; a rebuild reproduces its open rows.
                    if t.name.is_quarantine() {
                        t.batch = crate::silver::quarantine::open_quarantine(&t.batch)?;
                        current = current
                            .map(|c| crate::silver::quarantine::open_quarantine(&c))
                            .transpose()?;
                    }
                    let (only_replayed, only_current) = match &current {
                        Some(c) => row_diff(c, &t.batch)?,
                        None => (t.batch.num_rows(), 0),
                    };
                    tables.push(ReplayTable {
                        name: t.name.clone(),
                        current_rows: current.as_ref().map(|c| c.num_rows()).unwrap_or(0),
                        replayed_rows: t.batch.num_rows(),
                        only_current,
                        only_replayed,
                    });
                }
                let error = (!out.gold_errors.is_empty()).then(|| {
                    out.gold_errors
                        .iter()
                        .map(|d| format!("{}: {}", TableName::gold(&d.id), d.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                });
                ReplayReport {
                    identical: error.is_none()
                        && tables
                            .iter()
                            .all(|t| t.only_current == 0 && t.only_replayed == 0),
                    tables,
                    error,
                    state: self.state_token(),
                }
            }
        };
        self.replay = Some(report.clone());
        Ok(report)
    }

    /// Silver, quarantine and gold built from `bronze` alone (a full
    /// refresh) in a fresh lake and session; the current state is not
    /// touched. Errors: the rule and pipeline diagnostics, joined.
    pub(super) async fn rebuild(
        &self,
        bronze: &forget::BronzeTables,
    ) -> std::result::Result<RunOutput, RebuildError> {
        let setup = async {
            let lake = Lake::default();
            let ctx = new_session(&lake)?;
            for b in &self.def.bronze {
                let batches = bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
                let rows: Vec<RecordBatch> = batches.iter().map(|(_, r)| r.clone()).collect();
                let table = TableName::bronze(&b.name);
                let path = format!("{}/part-000001.parquet", table.path());
                let schema = table_schema(b);
                lake.write_parquet(&path, schema.clone(), &rows).await?;
                let all = concat_batches(&schema, &rows)?;
                register_table(&ctx, &table, &all).await?;
            }
            Ok::<_, EngineError>(ctx)
        };
        let ctx = setup.await?;
        run(RunInput {
            ctx: &ctx,
            def: &self.def,
            bronze,
            run_id: 1,
            previous: None,
            new_batches: None,
            progress: self.reporter(),
            fail_silver: None,
            lang: self.lang,
            parse_cache: Some(&self.parse_cache),
            step_cache: None,
        })
        .await
        .map_err(RebuildError::Run)
        // A rebuild is all or nothing: a silver table it cannot build is its error.
        .and_then(|out| match out.silver_errors.is_empty() {
            true => Ok(out),
            false => Err(RebuildError::Run(out.silver_errors)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_rebuild_lists_its_diagnostics() {
        let e = RebuildError::Run(vec![
            Diagnostic::rule("F1", "No field named fare. Did you mean 'fare_amount'?"),
            Diagnostic::rule("N2", "column zone does not exist here, so it cannot be normalized (use an enrich rule to add a new column)"),
        ]);
        assert_eq!(
            e.to_string(),
            "No field named fare. Did you mean 'fare_amount'?; column zone does not exist here, so it cannot be normalized (use an enrich rule to add a new column)"
        );
    }
}
