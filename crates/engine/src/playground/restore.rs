//! Restore: a silver or gold table back to an earlier version, as a new
//! `RESTORE` version (Delta's); bronze is append-only and cannot be restored.

use crate::api::RunMode;
use crate::checks::evaluate;
use crate::error::{EngineError, Result};
use crate::query::register_table;

use super::*;

impl Playground {
    /// Makes version `version` of a silver or gold table current again (a new
    /// `RESTORE` version). The next run rewrites the table from bronze as usual.
    /// Bronze cannot be restored: it is append-only.
    pub async fn restore(&mut self, table: &str, version: u64) -> Result<()> {
        if table.starts_with("bronze.") {
            return Err(EngineError::Request(format!(
                "{table} is append-only: its versions can be read (time travel) but not restored; restore applies to silver and gold tables"
            )));
        }
        let data = self.table_batch_at(table, version).await?;
        let out = self
            .last_good
            .as_mut()
            .ok_or_else(|| EngineError::Request("nothing has run yet".into()))?;
        let slot = out
            .tables
            .iter_mut()
            .find(|t| t.name == table)
            .ok_or_else(|| EngineError::Request(format!("there is no table {table}")))?;
        slot.batch = data.clone();
        register_table(&self.ctx, table, &data).await?;
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
        // Gold follows the restored silver (the next run rebuilds silver from bronze).
        if table.starts_with("silver.") {
            let previous = self.last_good.clone();
            match crate::gold::build_gold(&self.ctx, &self.def, previous.as_ref(), self.reporter())
                .await
            {
                Ok(gold) => {
                    if let Some(out) = self.last_good.as_mut() {
                        for g in gold.tables {
                            self.history
                                .commit_snapshot(
                                    &self.lake,
                                    &g.name,
                                    ts,
                                    "WRITE",
                                    format!("refresh after the restore of {table}"),
                                    &g.batch,
                                )
                                .await?;
                            match out.tables.iter_mut().find(|t| t.name == g.name) {
                                Some(slot) => *slot = g,
                                None => out.tables.push(g),
                            }
                        }
                        out.gold_reads_bronze = gold.reads_bronze;
                    }
                    self.diagnostics.retain(|d| d.scope != "gold");
                    self.diagnostics.extend(gold.errors);
                }
                Err(d) => self.diagnostics.extend(d),
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
}
