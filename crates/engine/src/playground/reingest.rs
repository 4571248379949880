//! Reingest: a landed file read again with other options (a delimiter, an
//! encoding) and appended as a new batch that supersedes the first one,
//! which bronze keeps (append-only) and silver no longer reads.

use crate::bronze::{BatchInfo, IngestOptions};
use crate::error::{EngineError, Result};

use super::*;

impl Playground {
    /// Reads a batch's file again from the landing zone with other options
    /// (a delimiter, an encoding) and appends it as a new batch, then runs a
    /// full refresh. The first batch stays (bronze is append-only) but is
    /// superseded: silver reads the new batch instead (`superseded_by`), and
    /// reconciliation counts the old records apart.
    /// With `remember`, `options` become the table's settings for later files.
    pub async fn reingest(
        &mut self,
        batch_id: &str,
        options: &IngestOptions,
        remember: bool,
    ) -> Result<BatchInfo> {
        let old = self
            .batches
            .iter()
            .find(|b| b.batch_id == batch_id)
            .cloned()
            .ok_or_else(|| EngineError::Request(format!("there is no batch {batch_id}")))?;
        // One live read per landed file: reading a superseded read again
        // would bring its records back next to the newer read.
        if let Some(by) = &old.superseded_by {
            return Err(EngineError::Request(format!(
                "batch {batch_id} was read again as batch {by}, which silver reads instead: read batch {by} again"
            )));
        }
        let landing = old.landing_path.clone().ok_or_else(|| {
            EngineError::Request(if old.erased_records > 0 {
                format!("the landed file of batch {batch_id} was deleted by a right-to-be-forgotten request, so it cannot be read again")
            } else {
                format!("batch {batch_id} did not come from a file, so it cannot be read again")
            })
        })?;
        let bytes = self.lake.get_bytes(&landing).await?;
        // Its entry names the batch it supersedes; the batch log's fold
        // (`bronze::batch_log`) marks the old one and notes both.
        self.rereading = Some(batch_id.to_string());
        let info = self
            .append(&old.table, &old.file_name, &bytes, options)
            .await;
        self.rereading = None;
        let info = info?;
        if remember {
            if let Some(b) = self.def.bronze.iter_mut().find(|b| b.name == old.table) {
                b.ingest_options = options.clone();
            }
        }
        // Rows of the old read already in silver leave only in a full refresh.
        self.run_with(false).await;
        Ok(info)
    }
}
