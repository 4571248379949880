//! Property test for kind 3 of issue 9 (MERGE ties decided by arrival order):
//! random small change sets and snapshots, with NULL key parts (null-safe
//! keys), deliberate ties on (key, sequence) and exact duplicates, merged
//! with `medallion_engine::merge::merge` directly.
//!
//! - the table does not depend on the order of the input rows: every column
//!   but lineage (`_event_id`, `_batch_id`) is compared, the untracked
//!   (`track_history_except`) column `src` included; only which of several
//!   rows equal in all those columns stands for them (its lineage) may;
//!   neither do the removed rows' kinds, the ambiguous rows, their reasons
//!   and the order they are listed in;
//! - tie groups whose rows differ only in `src` are ambiguous too;
//! - for snapshots, quarantined rows held back from deletes (with or without
//!   a snapshot value, in files holding several snapshots) give the same
//!   table whatever the order of the rows;
//! - no SCD2 version has `valid_from = valid_to`;
//! - every tie group with different contents is reported ambiguous, and
//!   only those rows are; its reason says truly whether the key keeps an
//!   earlier state or has none;
//! - rows in = rows out + removed + ambiguous;
//! - merging in two steps (the rows after a cut merged into the result of
//!   the rows before it) gives the same table as one merge of all rows, and
//!   `MergeState::late_row` accepts exactly such steps.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use medallion_engine::merge::SnapshotHolds;
use medallion_engine::merge::{merge, MergeInput, MergeSpec, MergeState, Merged, Scd};
use proptest::prelude::*;

/// One input row: key parts (NULL allowed), sequence, value, a column not
/// tracked for history (`src`), delete flag, file (`f0` / `f1`; used for
/// the batch id only where the test says so).
#[derive(Debug, Clone)]
struct Row {
    k1: Option<&'static str>,
    k2: Option<i64>,
    seq: i64,
    v: i64,
    src: &'static str,
    delete: bool,
    file: u8,
}

fn row() -> impl Strategy<Value = Row> {
    (
        prop::option::weighted(0.8, prop::sample::select(vec!["a", "b"])),
        prop::option::weighted(0.7, 0i64..2),
        0i64..4,
        0i64..2,
        prop::sample::select(vec!["crm", "web"]),
        prop::bool::weighted(0.15),
        0u8..2,
    )
        .prop_map(|(k1, k2, seq, v, src, delete, file)| Row {
            k1,
            k2,
            seq,
            v,
            src,
            delete,
            file,
        })
}

/// Rows with ids `e<i>` (by generation index) and batch `b<seq>`.
fn batch(rows: &[(usize, Row)]) -> (RecordBatch, BooleanArray) {
    batch_by(rows, |r| format!("b{}", r.seq))
}

/// Rows with ids `e<i>` and the batch id `batch_id` gives.
fn batch_by(
    rows: &[(usize, Row)],
    batch_id: impl Fn(&Row) -> String,
) -> (RecordBatch, BooleanArray) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k1", DataType::Utf8, true),
        Field::new("k2", DataType::Int64, true),
        Field::new("seq", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
        Field::new("src", DataType::Utf8, false),
        Field::new("_event_id", DataType::Utf8, false),
        Field::new("_batch_id", DataType::Utf8, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter(rows.iter().map(|(_, r)| r.k1))),
        Arc::new(Int64Array::from_iter(rows.iter().map(|(_, r)| r.k2))),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, r)| r.seq),
        )),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|(_, r)| r.v))),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(_, r)| r.src),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(i, _)| format!("e{i:03}")),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(_, r)| batch_id(r)),
        )),
    ];
    let deletes = BooleanArray::from(rows.iter().map(|(_, r)| r.delete).collect::<Vec<_>>());
    (RecordBatch::try_new(schema, cols).unwrap(), deletes)
}

fn spec(scd2: bool, snapshots: bool) -> MergeSpec {
    MergeSpec {
        keys: vec!["k1".into(), "k2".into()],
        sequence_by: Some("seq".into()),
        stored_as: if scd2 { Scd::Scd2 } else { Scd::Scd1 },
        null_safe_keys: true,
        from_snapshots: snapshots,
        track_history_except: vec!["src".into()],
        ..Default::default()
    }
}

fn run(spec: &MergeSpec, rows: &[(usize, Row)], base: Option<&RecordBatch>) -> Merged {
    let (b, deletes) = batch(rows);
    merge(MergeInput {
        spec,
        base,
        new: &b,
        deletes: &deletes,
        holds: None,
    })
    .expect("merge")
}

/// The table as text lines, with or without its lineage columns.
fn lines(b: &RecordBatch, lineage: bool) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let cols: Vec<_> = b
        .schema()
        .fields()
        .iter()
        .zip(b.columns())
        .filter(|(f, _)| lineage || !f.name().starts_with('_'))
        .map(|(_, c)| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
        .collect();
    (0..b.num_rows())
        .map(|r| {
            cols.iter()
                .map(|c| c.value(r).to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// (k1, k2, seq): the rows of one key at one sequence value.
type Group = (Option<&'static str>, Option<i64>, i64);

/// For each row of an ambiguous tie group (change sets, not snapshots):
/// does its key have a state before the group? Groups apply in sequence
/// order: an ambiguous one changes nothing, a delete ends the state, any
/// other gives one.
fn had_state_before(rows: &[(usize, Row)]) -> BTreeMap<String, bool> {
    let mut groups: BTreeMap<Group, Vec<&(usize, Row)>> = BTreeMap::new();
    for r in rows {
        groups.entry((r.1.k1, r.1.k2, r.1.seq)).or_default().push(r);
    }
    let mut state: BTreeMap<(Option<&str>, Option<i64>), bool> = BTreeMap::new();
    let mut out = BTreeMap::new();
    // BTreeMap order: by key, then by sequence value.
    for ((k1, k2, _), g) in &groups {
        let contents: BTreeSet<Option<(i64, &str)>> = g
            .iter()
            .map(|(_, r)| (!r.delete).then_some((r.v, r.src)))
            .collect();
        let has = state.entry((*k1, *k2)).or_insert(false);
        if contents.len() > 1 {
            for (i, _) in g {
                out.insert(format!("e{i:03}"), *has);
            }
        } else {
            *has = contents.iter().all(Option::is_some);
        }
    }
    out
}

/// Event ids of the rows in tie groups with different contents.
fn expected_ambiguous(rows: &[(usize, Row)]) -> BTreeSet<String> {
    let mut groups: BTreeMap<Group, Vec<&(usize, Row)>> = BTreeMap::new();
    for r in rows {
        groups.entry((r.1.k1, r.1.k2, r.1.seq)).or_default().push(r);
    }
    groups
        .values()
        .filter(|g| {
            // Every column but lineage counts, the untracked `src` too.
            let contents: BTreeSet<Option<(i64, &str)>> = g
                .iter()
                .map(|(_, r)| (!r.delete).then_some((r.v, r.src)))
                .collect();
            contents.len() > 1
        })
        .flatten()
        .map(|(i, _)| format!("e{i:03}"))
        .collect()
}

fn ambiguous_ids(m: &Merged) -> BTreeSet<String> {
    m.ambiguous.iter().map(|a| a.event_id.clone()).collect()
}

/// The ambiguous rows in the order they are listed, as (reason, content):
/// what must not depend on arrival (the event ids may, among equal rows).
fn ambiguous_listed(m: &Merged, rows: &[(usize, Row)]) -> Vec<(String, Option<(i64, String)>)> {
    let content: BTreeMap<String, Option<(i64, String)>> = rows
        .iter()
        .map(|(i, r)| {
            (
                format!("e{i:03}"),
                (!r.delete).then(|| (r.v, r.src.to_string())),
            )
        })
        .collect();
    m.ambiguous
        .iter()
        .map(|a| {
            (
                a.reason.clone(),
                content.get(&a.event_id).cloned().flatten(),
            )
        })
        .collect()
}

/// How many removed rows of each kind.
fn removed_kinds(m: &Merged) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for r in &m.removed {
        *n.entry(format!("{:?}", r.why)).or_insert(0) += 1;
    }
    n
}

/// A permutation of `rows` by the indexes `order`.
fn permute<T: Clone>(rows: &[T], order: &[prop::sample::Index]) -> Vec<T> {
    let mut permuted = rows.to_vec();
    for (i, ix) in order.iter().enumerate().take(permuted.len()) {
        let j = ix.index(permuted.len());
        permuted.swap(i, j);
    }
    permuted
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn merge_does_not_depend_on_arrival_order(
        rows in prop::collection::vec(row(), 0..14),
        order in Just(()).prop_flat_map(|_| prop::collection::vec(any::<prop::sample::Index>(), 14)),
        scd2 in any::<bool>(),
        snapshots in any::<bool>(),
    ) {
        let spec = spec(scd2, snapshots);
        let rows: Vec<(usize, Row)> = rows.into_iter().enumerate().collect();
        let permuted = permute(&rows, &order);
        let a = run(&spec, &rows, None);
        let b = run(&spec, &permuted, None);
        // Every column but lineage, `src` (not tracked) included.
        prop_assert_eq!(lines(&a.batch, false), lines(&b.batch, false));
        prop_assert_eq!(ambiguous_ids(&a), ambiguous_ids(&b));
        prop_assert_eq!(ambiguous_listed(&a, &rows), ambiguous_listed(&b, &rows));
        prop_assert_eq!(removed_kinds(&a), removed_kinds(&b));

        // Every tie group with different contents is ambiguous, and only those.
        prop_assert_eq!(ambiguous_ids(&a), expected_ambiguous(&rows));
        // Its reason says truly whether the key keeps an earlier state.
        if !snapshots {
            let had = had_state_before(&rows);
            for r in &a.ambiguous {
                let keeps = r.reason.ends_with("and the key keeps its earlier state");
                let none = r.reason.ends_with("the key had no state before them, so it is not in silver unless a later row gives it one");
                prop_assert!(keeps != none, "{}", r.reason);
                prop_assert_eq!(keeps, had[&r.event_id], "{}: {}", r.event_id, r.reason);
            }
        }
        // Rows in = rows out + removed + ambiguous.
        prop_assert_eq!(rows.len(), a.batch.num_rows() + a.removed.len() + a.ambiguous.len());
        // No row is both removed and ambiguous or in the table.
        let mut seen = BTreeSet::new();
        let ids = a.batch.column_by_name("_event_id").unwrap().as_any().downcast_ref::<StringArray>().unwrap().clone();
        for id in ids.iter().flatten().map(String::from)
            .chain(a.removed.iter().map(|r| r.event_id.clone()))
            .chain(a.ambiguous.iter().map(|r| r.event_id.clone()))
        {
            prop_assert!(seen.insert(id.clone()), "{} counted twice", id);
        }
        // No zero-length SCD2 version.
        if scd2 {
            let from = a.batch.column_by_name("valid_from").unwrap().as_any().downcast_ref::<Int64Array>().unwrap().clone();
            let to = a.batch.column_by_name("valid_to").unwrap().as_any().downcast_ref::<Int64Array>().unwrap().clone();
            for r in 0..a.batch.num_rows() {
                prop_assert!(to.is_null(r) || from.value(r) < to.value(r), "version {} is [{}, {})", r, from.value(r), to.value(r));
            }
        }
    }

    #[test]
    fn merging_in_two_steps_gives_the_table_of_one_merge(
        rows in prop::collection::vec(row(), 0..14),
        cut in 0i64..5,
        scd2 in any::<bool>(),
        snapshots in any::<bool>(),
    ) {
        let spec = spec(scd2, snapshots);
        let rows: Vec<(usize, Row)> = rows.into_iter().enumerate().collect();
        let (old, new): (Vec<_>, Vec<_>) = rows.iter().cloned().partition(|(_, r)| r.seq < cut);
        let mut ordered = old.clone();
        ordered.extend(new.iter().cloned());
        let whole = run(&spec, &ordered, None);
        let first = run(&spec, &old, None);
        let state = MergeState::default().observe(&spec, &batch(&old).0).unwrap();
        // Every new row is after the cut: late_row accepts the step ...
        prop_assert_eq!(state.late_row(&spec, &batch(&new).0).unwrap(), None);
        let second = run(&spec, &new, Some(&first.batch));
        // ... and it gives the same table, lineage included.
        prop_assert_eq!(lines(&second.batch, true), lines(&whole.batch, true));
        prop_assert_eq!(
            first.removed.len() + first.ambiguous.len() + second.removed.len() + second.ambiguous.len(),
            whole.removed.len() + whole.ambiguous.len()
        );
        // A row at or before the cut is late (for its key; for snapshots, for any key).
        if let Some(late) = old.first() {
            let mut again = new.clone();
            again.push(late.clone());
            prop_assert!(state.late_row(&spec, &batch(&again).0).unwrap().is_some());
        }
    }
}

/// Quarantined rows of a snapshot source: key parts, snapshot value (None:
/// NULL) and file.
fn held_rows(held: &[(Option<&'static str>, Option<i64>, Option<i64>, u8)]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k1", DataType::Utf8, true),
            Field::new("k2", DataType::Int64, true),
            Field::new("seq", DataType::Int64, true),
            Field::new("_batch_id", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(StringArray::from_iter(held.iter().map(|h| h.0))),
            Arc::new(Int64Array::from_iter(held.iter().map(|h| h.1))),
            Arc::new(Int64Array::from_iter(held.iter().map(|h| h.2))),
            Arc::new(StringArray::from_iter_values(
                held.iter().map(|h| format!("f{}", h.3)),
            )),
        ],
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Snapshot files that each hold several snapshot versions, and
    /// quarantined rows held back from deletes (some without a snapshot
    /// value: held in every snapshot of their file): the order of the rows
    /// decides nothing.
    #[test]
    fn snapshot_holds_do_not_depend_on_the_order_of_rows(
        rows in prop::collection::vec(row(), 0..14),
        held in prop::collection::vec((
            prop::option::weighted(0.8, prop::sample::select(vec!["a", "b"])),
            prop::option::weighted(0.7, 0i64..2),
            prop::option::weighted(0.5, 0i64..4),
            0u8..2,
        ), 0..3),
        unreadable in prop::option::weighted(0.2, 0u8..2),
        order in Just(()).prop_flat_map(|_| prop::collection::vec(any::<prop::sample::Index>(), 14)),
        scd2 in any::<bool>(),
    ) {
        let spec = spec(scd2, true);
        let rows: Vec<(usize, Row)> = rows.into_iter().enumerate().collect();
        let holds = SnapshotHolds {
            rows: Some(held_rows(&held)),
            batches: unreadable.map(|f| format!("f{f}")).into_iter().collect(),
        };
        let merged = |rows: &[(usize, Row)]| {
            let (b, deletes) = batch_by(rows, |r| format!("f{}", r.file));
            merge(MergeInput { spec: &spec, base: None, new: &b, deletes: &deletes, holds: Some(&holds) })
                .expect("merge")
        };
        let a = merged(&rows);
        let b = merged(&permute(&rows, &order));
        prop_assert_eq!(lines(&a.batch, false), lines(&b.batch, false));
        prop_assert_eq!(removed_kinds(&a), removed_kinds(&b));
        prop_assert_eq!(ambiguous_listed(&a, &rows), ambiguous_listed(&b, &rows));
        prop_assert_eq!(rows.len(), a.batch.num_rows() + a.removed.len() + a.ambiguous.len());
    }
}

#[test]
fn a_null_key_part_is_refused_without_null_safe_keys() {
    let mut s = spec(false, false);
    s.null_safe_keys = false;
    let rows = [(
        0,
        Row {
            k1: Some("a"),
            k2: None,
            seq: 1,
            v: 0,
            src: "crm",
            delete: false,
            file: 0,
        },
    )];
    let (b, deletes) = batch(&rows);
    let err = merge(MergeInput {
        spec: &s,
        base: None,
        new: &b,
        deletes: &deletes,
        holds: None,
    })
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "k2 is NULL in a row (k1=a, k2=NULL): merge keys must not be NULL (such rows go to the quarantine), or set null_safe_keys so that NULL equals NULL"
    );
}
