//! Restore: a silver or gold table back to an earlier version, as a new
//! `RESTORE` version (Delta's); bronze is append-only and cannot be restored.

use crate::api::RunMode;
use crate::checks::evaluate;
use crate::error::{EngineError, Result};
use crate::query::register_table;
use medallion_protocol::TableName;

use super::*;

impl Playground {
    /// Makes version `version` of a silver or gold table current again (a new
    /// `RESTORE` version). The next run rewrites the table from bronze as usual.
    /// Bronze cannot be restored: it is append-only.
    pub async fn restore(&mut self, table: &TableName, version: u64) -> Result<()> {
        if table.is_bronze() {
            return Err(EngineError::Request(format!(
                "{table} is append-only: its versions can be read (time travel) but not restored; restore applies to silver and gold tables"
            )));
        }
        let data = self.table_batch_at(table, version).await?;
        if !self
            .last_good
            .as_ref()
            .ok_or_else(|| EngineError::Request("nothing has run yet".into()))?
            .tables
            .iter()
            .any(|t| t.name == *table)
        {
            return Err(EngineError::Request(format!("there is no table {table}")));
        }
        // The RESTORE version is committed first; only then is it shown.
        let ts = self.clock.now_micros();
        self.history
            .commit_snapshot(
                &self.lake,
                table,
                ts,
                "RESTORE",
                format!("restore of version {version}"),
                &data,
            )
            .await?;
        let errors_before = self.run_info.errors.len();
        let queryable = self.show_committed(table, data).await;
        // Gold follows the restored silver (the next run rebuilds silver from
        // bronze). The restore is done whatever happens to gold: a gold table
        // that cannot be rebuilt or committed keeps its version, and says so.
        if table.is_silver() && !queryable {
            self.run_info.errors.push(format!(
                "gold was not refreshed after the restore of {table}: SQL cannot read the restored rows yet; run the pipeline again"
            ));
            self.run_info.ok = false;
        } else if table.is_silver() {
            let previous = self.last_good.clone();
            match crate::gold::build_gold(
                &self.ctx,
                &self.def,
                previous.as_ref(),
                self.reporter(),
                &Default::default(),
                self.lang,
            )
            .await
            {
                Ok(gold) => {
                    for g in gold.tables {
                        match self
                            .history
                            .commit_snapshot(
                                &self.lake,
                                &g.name,
                                ts,
                                "WRITE",
                                format!("refresh after the restore of {table}"),
                                &g.batch,
                            )
                            .await
                        {
                            Ok(_) => {
                                self.show_committed(&g.name, g.batch).await;
                            }
                            Err(e) => {
                                self.run_info.errors.push(e.to_string());
                                if let Some(committed) = self.history.current_data(&g.name).cloned()
                                {
                                    self.show_committed(&g.name, committed).await;
                                }
                            }
                        }
                    }
                    if let Some(out) = self.last_good.as_mut() {
                        out.gold_reads_bronze = gold.reads_bronze;
                    }
                    self.diagnostics.retain(|d| d.scope != "gold");
                    self.diagnostics.extend(gold.errors);
                }
                Err(d) => {
                    self.run_info.errors.extend(
                        d.iter()
                            .filter(|d| d.scope == "pipeline")
                            .map(|d| d.message.clone()),
                    );
                    self.diagnostics.extend(d);
                }
            }
            if self.run_info.errors.len() > errors_before
                || self.diagnostics.iter().any(|d| d.scope == "gold")
            {
                self.run_info.ok = false;
            }
        }
        if let Some(out) = &self.last_good {
            self.checks = evaluate(&self.ctx, &self.def, out, self.lang).await;
        }
        if self.mode == RunMode::Incremental {
            self.notice = Some(format!(
                "{table} is back at version {version}, but the watermark did not move: batches processed after that version will not be processed again by incremental runs. Run a full refresh to rebuild from bronze (Replay shows the difference)."
            ));
        }
        Ok(())
    }

    /// Shows `data` as `table`'s current rows (in the last results and to
    /// SQL). A registration DataFusion refuses is reported in the run's
    /// errors: SQL over the table reads its previous rows until the next run.
    /// Returns whether SQL reads the new rows.
    pub(super) async fn show_committed(&mut self, table: &TableName, data: RecordBatch) -> bool {
        let queryable = match register_table(&self.ctx, table, &data).await {
            Ok(()) => true,
            Err(e) => {
                self.run_info.errors.push(e.to_string());
                self.run_info.ok = false;
                false
            }
        };
        if let Some(out) = self.last_good.as_mut() {
            match out.tables.iter_mut().find(|t| t.name == *table) {
                Some(slot) => slot.batch = data,
                None => out.tables.push(crate::output::TableData {
                    name: table.clone(),
                    batch: data,
                }),
            }
        }
        queryable
    }
}
