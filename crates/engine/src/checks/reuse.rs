//! Check results kept from the last run, for the checks whose tables did
//! not change (issue 12: "checks re-run only for the tables that
//! changed").
//!
//! A result is taken again only when the check is the same (kind, the
//! playground's language, the table's keys that order its sample) and every
//! table it reads is the very same rows: the same Arrow arrays
//! (pointer-equal, [`crate::silver::parse_cache::same_arrays`]). Arrays
//! never change once built, so the same arrays cannot hold other values;
//! a table a run rebuilt into new arrays, even with equal rows, is read
//! again (the run keeps the committed arrays of a table whose rows did not
//! change: `Playground::run_over`). What is kept is the result before the
//! check's severity and the not-refreshed note are applied; both are
//! applied again on every run.
//!
//! Only checks whose result is a function of their tables' rows are kept:
//! the row and schema checks over named tables. The aggregate checks read
//! the run's own counts (bronze, the quarantine, rule statistics), an audit
//! may read any table, and a predicate or bound with a subquery or a
//! function that is not immutable (`now()`, `random()`) may change over the
//! same rows: these are evaluated on every run.

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;
use medallion_protocol::TableName;

use crate::api::Lang;
use crate::model::CheckKind;
use crate::output::RunOutput;
use crate::silver::parse_cache::same_arrays;

use super::CheckStatus;

/// A check's result before its severity and the not-refreshed note:
/// status, observed text, sample rows, NULLs seen.
pub(super) type Raw = (CheckStatus, String, Vec<String>, Option<usize>);

/// The results of one evaluation that a later one may take again
/// (`evaluate_reusing`). Holds the tables each result read (Arc clones of
/// the run's arrays: no copy, and the arrays cannot be freed and their
/// addresses reused while an entry names them).
#[derive(Default)]
pub struct CheckCache {
    entries: Vec<Entry>,
    /// How many of `entries` were taken from the cache before.
    reused: usize,
}

struct Entry {
    kind: CheckKind,
    lang: Lang,
    keys: Vec<String>,
    read: Vec<RecordBatch>,
    raw: Raw,
}

/// What a check reads when its result depends on those tables' rows alone,
/// in the order it names them; `None` when it must be evaluated every run.
pub(super) fn tables_read(ctx: &SessionContext, kind: &CheckKind) -> Option<Vec<TableName>> {
    let fixed = |sql: &str| crate::silver::eval::fixed_over_same_rows(ctx, sql);
    match kind {
        CheckKind::RowPredicate { table, predicate } => {
            fixed(predicate).then(|| vec![table.clone()])
        }
        CheckKind::AcceptedRange {
            table, min, max, ..
        } => min
            .iter()
            .chain(max)
            .all(|b| fixed(b))
            .then(|| vec![table.clone()]),
        CheckKind::NotNull { table, .. }
        | CheckKind::Unique { table, .. }
        | CheckKind::AcceptedValues { table, .. }
        | CheckKind::ColumnType { table, .. }
        | CheckKind::ColumnsExist { table, .. }
        | CheckKind::Contract { table, .. } => Some(vec![table.clone()]),
        CheckKind::Relationships { table, to, .. } => Some(vec![table.clone(), to.clone()]),
        CheckKind::SourceColumnsPresent { .. }
        | CheckKind::TimestampOffsets { .. }
        | CheckKind::Reconciliation { .. }
        | CheckKind::FilteredShare { .. }
        | CheckKind::CompareAverage { .. }
        | CheckKind::Audit { .. } => None,
    }
}

/// The rows of each table `names` in `out`; `None` when one is missing
/// (the check then reports it, every run).
pub(super) fn rows_of(out: &RunOutput, names: &[TableName]) -> Option<Vec<RecordBatch>> {
    names.iter().map(|n| out.table(n).cloned()).collect()
}

impl CheckCache {
    /// The kept result of the same check (`kind`, `lang`, sample `keys`)
    /// over the very same arrays `read`.
    pub(super) fn find(
        &self,
        kind: &CheckKind,
        lang: Lang,
        keys: &[String],
        read: &[RecordBatch],
    ) -> Option<&Raw> {
        self.entries
            .iter()
            .find(|e| {
                e.lang == lang
                    && e.kind == *kind
                    && e.keys == keys
                    && e.read.len() == read.len()
                    && e.read.iter().zip(read).all(|(a, b)| same_arrays(a, b))
            })
            .map(|e| &e.raw)
    }

    /// Keeps `raw`, the result of `kind` over `read` (`reused`: taken
    /// from the cache before, not evaluated).
    pub(super) fn keep(
        &mut self,
        kind: &CheckKind,
        lang: Lang,
        keys: Vec<String>,
        read: Vec<RecordBatch>,
        raw: Raw,
        reused: bool,
    ) {
        self.reused += usize::from(reused);
        self.entries.push(Entry {
            kind: kind.clone(),
            lang,
            keys,
            read,
            raw,
        });
    }

    /// How many of the kept results the evaluation that made this cache
    /// took from the one before (not evaluated again).
    pub fn reused(&self) -> usize {
        self.reused
    }
}
