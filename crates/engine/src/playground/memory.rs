//! How much memory the session holds, and whether another file fits in the
//! tab, decided before the file is read (issue 12: "a memory estimate
//! refuses, before reading, a file the tab cannot hold").
//!
//! Everything lives in the engine's WebAssembly memory, which cannot grow
//! past 4 GiB (32-bit addresses) and which a run needs room in besides what
//! it keeps (joins, concatenations, a Parquet file being written). The
//! session may hold [`MEMORY_BUDGET_BYTES`]; a file whose estimated share
//! would take it past that is refused, naming both figures, and nothing is
//! written.

use std::collections::HashSet;

use datafusion::arrow::array::{ArrayData, RecordBatch};
use futures::TryStreamExt;

use super::*;

/// What a session may hold in memory: 1.5 GiB, three eighths of the 4 GiB a
/// 32-bit WebAssembly memory can reach, leaving the rest for a run's work.
pub const MEMORY_BUDGET_BYTES: u64 = 1536 * 1024 * 1024;

/// The memory a file of `bytes` takes once it is in every layer, estimated
/// from its size and its number of lines, without parsing it (bytes):
///
/// - text (CSV, JSON): 4 × its size (the landing copy, the bronze payloads,
///   silver's lineage copy of them, the Parquet files of the versions and the
///   typed columns) plus 200 bytes per line (audit columns and offsets);
/// - Parquet (compressed columns, `PAR1` at its start): 12 × its size (each
///   record becomes a JSON payload in bronze, then typed columns in silver).
pub fn estimated_bytes(bytes: &[u8]) -> u64 {
    let size = bytes.len() as u64;
    if bytes.starts_with(b"PAR1") {
        return 12 * size;
    }
    let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    text_estimate(size, lines)
}

/// The memory of `text` bytes of records in `records` lines once in every
/// layer: 4 × the text plus 200 bytes per record ([`estimated_bytes`]).
fn text_estimate(text: u64, records: u64) -> u64 {
    4 * text + 200 * records
}

/// The bytes allocated for the Arrow buffers behind `batches` (their
/// capacity), each allocation once: a batch kept in two places, a column
/// shared by two batches, and slices of one buffer count once (keyed by the
/// allocation's start, [`datafusion::arrow::buffer::Buffer::data_ptr`]). Arrow's own
/// `get_array_memory_size` counts a shared buffer once per array.
fn distinct_buffer_bytes(batches: impl IntoIterator<Item = RecordBatch>) -> u64 {
    fn visit(data: &ArrayData, seen: &mut HashSet<usize>, total: &mut u64) {
        let nulls = data.nulls().map(|n| n.buffer());
        for b in data.buffers().iter().chain(nulls) {
            if seen.insert(b.data_ptr().as_ptr() as usize) {
                *total += b.capacity() as u64;
            }
        }
        for child in data.child_data() {
            visit(child, seen, total);
        }
    }
    let mut seen = HashSet::new();
    let mut total = 0;
    for batch in batches {
        for column in batch.columns() {
            visit(&column.to_data(), &mut seen, &mut total);
        }
    }
    total
}

impl Playground {
    /// What the session holds now, in bytes: the Arrow buffers of every
    /// bronze batch, of the last run's tables (silver, quarantine, gold, and
    /// bronze as the run read it) and of what runs keep for the next one
    /// (typed bronze, each silver rule's step over it: see
    /// [`crate::silver::parse_cache`] and [`crate::silver::step_cache`]),
    /// each buffer once however many arrays share it; the failures the step
    /// cache keeps; every file of the lake (versions, landing zone, logs).
    ///
    /// Errors: the lake cannot be listed.
    pub async fn memory_bytes(&self) -> Result<u64> {
        let (steps, failures) = self.step_cache.held();
        let batches = self
            .bronze
            .values()
            .flatten()
            .map(|(_, rb)| rb.clone())
            .chain(self.last_good.iter().flat_map(|o| &o.tables).map(|t| t.batch.clone()))
            .chain(self.parse_cache.held_batches())
            .chain(steps);
        let arrays = distinct_buffer_bytes(batches);
        let lake: u64 = self
            .lake
            .store()
            .list(None)
            .map_ok(|m| m.size)
            .try_fold(0u64, |sum, size| async move { Ok(sum + size) })
            .await
            .map_err(|e| EngineError::Storage(e.to_string()))?;
        Ok(arrays + failures + lake)
    }

    /// Refuses `file_name` (its `bytes`) when the session and the file
    /// together would pass [`Self::memory_budget`], with a message giving
    /// the figures in MB (10^6 bytes) and what to do; nothing is read or
    /// written then.
    pub(super) async fn check_memory(&self, file_name: &str, bytes: &[u8]) -> Result<()> {
        self.check_memory_needed(file_name, bytes.len() as u64, estimated_bytes(bytes))
            .await
    }

    /// [`Self::check_memory`] once a Parquet file's rows have been read
    /// into records, which its size before reading cannot tell (its values
    /// may compress a hundredfold): the records' text counts as a text
    /// file's would ([`estimated_bytes`]: 4 × the text plus 200 bytes per
    /// record).
    pub(super) async fn check_memory_of_records(
        &self,
        file_name: &str,
        file_bytes: u64,
        records: &[crate::bronze::RawRecord],
    ) -> Result<()> {
        let text: u64 = records.iter().map(|r| r.text.len() as u64).sum();
        let needed = text_estimate(text, records.len() as u64);
        self.check_memory_needed(file_name, file_bytes, needed).await
    }

    /// Refuses `file_name` (`file_bytes` long, needing about `needed`
    /// bytes) when the session and it would pass the budget.
    async fn check_memory_needed(&self, file_name: &str, file_bytes: u64, needed: u64) -> Result<()> {
        let held = self.memory_bytes().await?;
        let budget = self.memory_budget;
        if held + needed <= budget {
            return Ok(());
        }
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        Err(EngineError::Ingest(crate::api::tr(
            self.lang,
            format!(
                "{file_name} ({} MB) would take about {} MB of memory once it is in every layer, and this session already holds {} MB: together more than the {} MB this tab can keep (the engine's memory cannot grow past 4 GiB, and a run needs room to work). Nothing was written. Ingest a sample of the file, or press Start fresh first.",
                mb(file_bytes),
                mb(needed),
                mb(held),
                mb(budget)
            ),
            format!(
                "{file_name} ({} МБ) займёт около {} МБ памяти, когда пройдёт все слои, а сессия уже держит {} МБ: вместе больше {} МБ, которые может держать эта вкладка (память движка не растёт дальше 4 ГиБ, и запуску нужно место для работы). Ничего не записано. Загрузите выборку из файла или сначала нажмите «Начать заново».",
                mb(file_bytes),
                mb(needed),
                mb(held),
                mb(budget)
            ),
        )))
    }

    /// The memory a session may hold, bytes ([`MEMORY_BUDGET_BYTES`]
    /// unless set with [`Self::set_memory_budget`]).
    pub fn memory_budget(&self) -> u64 {
        self.memory_budget
    }

    /// Sets the memory a session may hold (bytes): tests and scripts with
    /// other limits than a browser tab's.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.memory_budget = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_counts_once_however_many_arrays_share_it() {
        use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
        use std::sync::Arc;
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values((0..1000).map(|i| format!("n{i}"))));
        let batch = RecordBatch::try_from_iter([("id", ids.clone()), ("name", names)]).unwrap();
        let alone = distinct_buffer_bytes([batch.clone()]);
        // 8,000 bytes of values; names: 1,001 offsets of 4 bytes and their text.
        assert!(alone >= 8_000 + 4_004 + 3_890, "{alone}");
        assert_eq!(distinct_buffer_bytes([batch.clone(), batch.clone()]), alone);
        assert_eq!(distinct_buffer_bytes([batch.clone(), batch.slice(10, 20)]), alone);
        // A second batch sharing `id` adds only its own column.
        let flags: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        let other = RecordBatch::try_from_iter([("id", ids), ("flag", flags.clone())]).unwrap();
        let flag_alone = distinct_buffer_bytes([RecordBatch::try_from_iter([("flag", flags)]).unwrap()]);
        assert!(flag_alone >= 8_000, "{flag_alone}");
        assert_eq!(distinct_buffer_bytes([batch, other]), alone + flag_alone);
    }

    #[test]
    fn text_counts_four_times_its_size_and_its_lines_parquet_twelve_times() {
        assert_eq!(estimated_bytes(b"a,b\n1,2\n"), 4 * 8 + 200 * 3);
        assert_eq!(estimated_bytes(b"PAR1\0\0\0\0PAR1"), 12 * 12);
    }
}
