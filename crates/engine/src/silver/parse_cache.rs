//! Bronze as silver last read it, kept between runs: a rule edit, a gold
//! edit or a check edit re-runs the pipeline over the same bronze, and
//! reading 336,776 CSV payloads with their declared schema is most of a run
//! (issue 12: "reusing parsed and typed bronze").
//!
//! An entry is used only when it was read from the very same batches: the
//! same batch log entries ([`BatchInfo`], compared in full), the same Arrow
//! arrays (pointer-equal: bronze batches are immutable, and an erasure or
//! an in-place anti-pattern builds new arrays) and the same declared
//! [`SourceSchema`]. Anything else reads bronze again; the cache can make a
//! run faster, never different.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;

use crate::bronze::BatchInfo;
use crate::error::Result;
use crate::silver::source::{parse_bronze, Parsed, SourceSchema};

/// One bronze table's last read.
struct Entry {
    schema: SourceSchema,
    /// Holding the batches keeps their arrays alive, so an equal pointer
    /// is the same data (never a freed and reused address).
    batches: Vec<(BatchInfo, RecordBatch)>,
    parsed: Parsed,
}

/// Per bronze table (name without the layer): the last [`parse_bronze`].
#[derive(Default)]
pub struct ParseCache {
    entries: Mutex<HashMap<String, Arc<Entry>>>,
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables: Vec<String> = self
            .entries
            .lock()
            .map(|e| e.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("ParseCache")
            .field("tables", &tables)
            .finish()
    }
}

impl ParseCache {
    /// [`parse_bronze`] of bronze table `table`, or its last result when
    /// `schema` and `batches` are the ones it was read from.
    ///
    /// Errors: those of [`parse_bronze`] (nothing is kept then).
    pub fn parse(
        &self,
        table: &str,
        schema: &SourceSchema,
        batches: &[(BatchInfo, RecordBatch)],
    ) -> Result<Parsed> {
        let hit = self
            .entries
            .lock()
            .ok()
            .and_then(|e| e.get(table).cloned())
            .filter(|e| e.schema == *schema && same_batches(&e.batches, batches));
        if let Some(entry) = hit {
            return Ok(entry.parsed.clone());
        }
        let parsed = parse_bronze(schema, batches)?;
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(
                table.to_string(),
                Arc::new(Entry {
                    schema: schema.clone(),
                    batches: batches.to_vec(),
                    parsed: parsed.clone(),
                }),
            );
        }
        Ok(parsed)
    }

    /// Whether [`Self::parse`] of these arguments would return a kept read.
    pub fn holds(
        &self,
        table: &str,
        schema: &SourceSchema,
        batches: &[(BatchInfo, RecordBatch)],
    ) -> bool {
        self.entries.lock().ok().is_some_and(|e| {
            e.get(table)
                .is_some_and(|e| e.schema == *schema && same_batches(&e.batches, batches))
        })
    }

    /// The typed rows kept ([`Parsed::rows`] of every entry), for the
    /// session's memory count ([`crate::playground::Playground::memory_bytes`]).
    pub(crate) fn held_batches(&self) -> Vec<RecordBatch> {
        self.entries
            .lock()
            .map(|e| e.values().map(|e| e.parsed.rows.clone()).collect())
            .unwrap_or_default()
    }

    /// Forgets every entry (a new pipeline or lake).
    pub fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

/// The same batch log entries over the same arrays, in the same order.
fn same_batches(a: &[(BatchInfo, RecordBatch)], b: &[(BatchInfo, RecordBatch)]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ia, ra), (ib, rb))| {
            ia == ib && same_arrays(ra, rb)
        })
}

/// The same schema and row count over the very same arrays (pointer-equal):
/// what a cache may take for unchanged rows without comparing them.
pub(crate) fn same_arrays(a: &RecordBatch, b: &RecordBatch) -> bool {
    a.schema() == b.schema()
        && a.num_rows() == b.num_rows()
        && a
            .columns()
            .iter()
            .zip(b.columns())
            .all(|(x, y)| Arc::ptr_eq(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::silver::source::tests::batch_of;
    use medallion_protocol::schema::ColumnType;

    fn schema(ty: ColumnType) -> SourceSchema {
        SourceSchema::new(&[("qty", ty)])
    }

    #[test]
    fn a_hit_needs_the_same_arrays_and_schema() {
        let cache = ParseCache::default();
        let one = vec![batch_of("qty\n3\n", "f.csv")];
        let first = cache.parse("t", &schema(ColumnType::Int), &one).unwrap();
        assert_eq!(first.rows.num_rows(), 1);
        // Same arrays, same schema: the kept read (the same typed array).
        let again = cache.parse("t", &schema(ColumnType::Int), &one).unwrap();
        assert!(Arc::ptr_eq(first.rows.column(4), again.rows.column(4)));
        // Another schema reads again: '3.5' is no INT but is a DOUBLE.
        let other = vec![batch_of("qty\n3.5\n", "f.csv")];
        let as_int = cache.parse("t", &schema(ColumnType::Int), &other).unwrap();
        assert_eq!(as_int.rows.num_rows(), 0);
        assert_eq!(
            as_int.rejected[0].reason,
            "qty: '3.5' is not INT (not a whole number)"
        );
        let as_double = cache
            .parse("t", &schema(ColumnType::Double), &other)
            .unwrap();
        assert_eq!(as_double.rows.num_rows(), 1);
        // Equal text in new arrays (a rewrite in place) is read again too.
        let copy = vec![batch_of("qty\n3.5\n", "f.csv")];
        let reread = cache
            .parse("t", &schema(ColumnType::Double), &copy)
            .unwrap();
        assert_eq!(reread.rows.num_rows(), 1);
        assert!(!Arc::ptr_eq(
            as_double.rows.column(4),
            reread.rows.column(4)
        ));
        // Another table name is its own entry.
        let t2 = cache
            .parse("t2", &schema(ColumnType::Double), &copy)
            .unwrap();
        assert!(!Arc::ptr_eq(reread.rows.column(4), t2.rows.column(4)));
    }
}
