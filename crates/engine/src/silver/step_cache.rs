//! Each silver table's rule steps as the last run computed them, so a rule
//! edit recomputes only the rules that depend on the one edited (issue 12:
//! "a rule edit recomputes only what depends on that rule").
//!
//! A table's rules form a chain: filters, each evaluated on the typed
//! bronze rows, then normalizations, enrichments and expectations, each on
//! the previous one's output ([`crate::silver::build`]). When every rule of
//! the chain is row-local (a row's value depends on that row alone:
//! [`crate::silver::eval::reusable`]), a row's value after rule k does not
//! depend on which other rows the filters let through. So the chain is
//! computed here over *every* typed row, once, and a run takes the rows
//! its filters let through: switching a filter off or on re-evaluates that
//! filter and gathers rows; editing enrichment E3 reuses the output of
//! every rule before it and recomputes E3 and what follows.
//!
//! Reuse never changes a result:
//! - an entry belongs to the typed rows it was computed over (their Arrow
//!   arrays pointer-equal, as [`crate::silver::parse_cache`] keeps them);
//! - a step is reused only when its rule (everything but the rationale and
//!   the action, which act on the step's failures, not on its values), the
//!   rules before it and the lookup rows it joined (pointer-equal) are the
//!   same;
//! - a rule that is not row-local or not immutable (a window, a subquery,
//!   `now()`) is never computed here: the table runs as before;
//! - a step that fails over every row (a lookup key that is not unique
//!   among rows the filters drop, too many failing rows) makes the table
//!   run as before, so its message is about the rows it saw.
//!
//! Failures, changed values and values read as UTC are kept per row
//! (arrival position), and each run counts those of its own rows. The
//! property test `tests/prop_step_cache.rs` compares runs with and without
//! the cache over random rule edits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;

use super::enrich::{enrich_computed, enrich_lookup, split_expressions};
use super::filter::eval_condition;
use super::normalize::normalize;
use super::parse_cache::same_arrays;
use super::stage::{Failures, Lookups, RuleError, ARRIVAL};
use crate::query::with_column;
use crate::silver::rules::{Rule, RuleKind};

/// One rule's step over every typed row of its table.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    key: String,
    /// The lookup rows the step joined (an enrichment with a lookup).
    lookup: Option<RecordBatch>,
    /// Every row after the rule (an expectation: its input), in arrival order.
    pub rows: RecordBatch,
    /// Failing rows (arrival positions) with their reasons.
    pub failures: Failures,
    /// Normalize: rows (arrival positions) whose value changed.
    pub changed: Vec<i64>,
    /// Normalize to TIMESTAMP: rows read as UTC for lack of an offset.
    pub read_as_utc: Vec<i64>,
}

/// One silver table's steps, over the typed rows [`StepCache::take`] was given.
#[derive(Debug, Clone)]
pub(crate) struct TableSteps {
    /// The typed rows (`Parsed::rows`) the steps were computed over.
    parsed: RecordBatch,
    /// Those rows with [`ARRIVAL`] 0..n.
    typed: RecordBatch,
    /// Filters' failures over `typed`, by rule key, the most recently used
    /// last (up to [`KEPT_FILTERS`]: a filter switched off and on again, or
    /// edited and reverted, is not evaluated again).
    filters: Vec<(String, Failures)>,
    /// Normalizations, enrichments and expectations, in execution order.
    chain: Vec<Link>,
}

/// Per silver table (name without the layer): its [`TableSteps`].
#[derive(Default)]
pub struct StepCache {
    tables: Mutex<HashMap<String, TableSteps>>,
}

impl std::fmt::Debug for StepCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables: Vec<String> = self
            .tables
            .lock()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("StepCache").field("tables", &tables).finish()
    }
}

/// The most filter results a table keeps (the least recently used leave first).
const KEPT_FILTERS: usize = 32;

impl StepCache {
    /// The steps of silver table `table` computed over `parsed` (the typed
    /// bronze rows, no [`ARRIVAL`] column), or new empty ones. Taken out of
    /// the cache while the table is built; [`StepCache::put`] returns them.
    ///
    /// Errors: `parsed` cannot take the arrival column (Arrow's error).
    pub(crate) fn take(
        &self,
        table: &str,
        parsed: &RecordBatch,
    ) -> std::result::Result<TableSteps, RuleError> {
        let kept = self
            .tables
            .lock()
            .ok()
            .and_then(|mut t| t.remove(table))
            .filter(|s| same_arrays(&s.parsed, parsed));
        if let Some(steps) = kept {
            return Ok(steps);
        }
        let n = parsed.num_rows();
        let typed = with_column(
            parsed,
            ARRIVAL,
            Arc::new(datafusion::arrow::array::Int64Array::from_iter_values(
                0..n as i64,
            )),
        )?;
        Ok(TableSteps {
            parsed: parsed.clone(),
            typed,
            filters: Vec::new(),
            chain: Vec::new(),
        })
    }

    /// Keeps `steps` for the next run of silver table `table`.
    pub(crate) fn put(&self, table: &str, steps: TableSteps) {
        if let Ok(mut t) = self.tables.lock() {
            t.insert(table.to_string(), steps);
        }
    }

    /// What the cache holds, for the session's memory count
    /// ([`crate::playground::Playground::memory_bytes`]): every table's
    /// typed rows (`typed` holds `parsed`'s arrays and the arrival
    /// positions) and each step's rows and lookup (Arrow batches, sharing
    /// most arrays with one another), and the bytes of the failures kept
    /// (8 per row position plus its reason's text).
    pub(crate) fn held(&self) -> (Vec<RecordBatch>, u64) {
        let Ok(tables) = self.tables.lock() else {
            return (Vec::new(), 0);
        };
        let mut batches = Vec::new();
        let mut failures = 0u64;
        let size = |f: &Failures| f.iter().map(|(_, why)| 8 + why.len() as u64).sum::<u64>();
        for steps in tables.values() {
            batches.push(steps.typed.clone());
            failures += steps.filters.iter().map(|(_, f)| size(f)).sum::<u64>();
            for link in &steps.chain {
                batches.push(link.rows.clone());
                batches.extend(link.lookup.clone());
                failures += size(&link.failures) + 8 * (link.changed.len() + link.read_as_utc.len()) as u64;
            }
        }
        (batches, failures)
    }

    /// Forgets the tables not named in `keep` (a table removed from the pipeline).
    pub(crate) fn retain(&self, keep: &[&str]) {
        if let Ok(mut t) = self.tables.lock() {
            t.retain(|name, _| keep.contains(&name.as_str()));
        }
    }
}

impl TableSteps {
    /// The typed rows with [`ARRIVAL`] 0..n that every step reads.
    pub(crate) fn typed(&self) -> &RecordBatch {
        &self.typed
    }

    /// Filter `rule`'s failing rows over [`TableSteps::typed`], computed
    /// now or the last time, when reusable. Errors: the rule's.
    pub(crate) async fn filter(
        &mut self,
        ctx: &SessionContext,
        rule: &Rule,
    ) -> std::result::Result<Failures, RuleError> {
        if !rule_reusable(ctx, rule) {
            return eval_condition(ctx, &self.typed, rule, true).await;
        }
        let key = key_of(rule);
        if let Some(i) = self.filters.iter().position(|(k, _)| *k == key) {
            // The most recent last: the oldest leave first.
            let hit = self.filters.remove(i);
            let failures = hit.1.clone();
            self.filters.push(hit);
            return Ok(failures);
        }
        let failures = eval_condition(ctx, &self.typed, rule, true).await?;
        self.filters.push((key, failures.clone()));
        if self.filters.len() > KEPT_FILTERS {
            self.filters.remove(0);
        }
        Ok(failures)
    }

    /// The steps of `rules` (normalizations, enrichments, expectations, in
    /// execution order, each checked) over every typed row, reusing the
    /// longest prefix computed before. `None` when a rule is not reusable
    /// or a step fails as a whole: the table's rules then run as before,
    /// on the rows the filters let through (see the module's text).
    pub(crate) async fn chain(
        &mut self,
        ctx: &SessionContext,
        rules: &[&Rule],
        lookups: &Lookups<'_>,
    ) -> Option<&[Link]> {
        if !rules.iter().all(|r| rule_reusable(ctx, r)) {
            return None;
        }
        let mut input = self.typed.clone();
        for (i, rule) in rules.iter().enumerate() {
            let key = key_of(rule);
            let lookup = lookup_rows(rule, lookups);
            if rule.lookup.is_some() && lookup.is_none() {
                self.chain.truncate(i);
                return None;
            }
            let same = self.chain.get(i).is_some_and(|l| {
                l.key == key
                    && match (&l.lookup, &lookup) {
                        (Some(a), Some(b)) => same_arrays(a, b),
                        (None, None) => true,
                        _ => false,
                    }
            });
            if same {
                input = self.chain[i].rows.clone();
                continue;
            }
            self.chain.truncate(i);
            let link = match step(ctx, &input, rule, lookups).await {
                Ok((rows, failures, changed, read_as_utc)) => Link {
                    key,
                    lookup,
                    rows,
                    failures,
                    changed,
                    read_as_utc,
                },
                Err(_) => return None,
            };
            input = link.rows.clone();
            self.chain.push(link);
        }
        self.chain.truncate(rules.len());
        Some(&self.chain)
    }
}

/// One rule over `input`: its output rows, failures, changed rows and rows
/// read as UTC (see [`Link`]). Errors: the rule's, or a column silver
/// cannot store.
async fn step(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
    lookups: &Lookups<'_>,
) -> std::result::Result<(RecordBatch, Failures, Vec<i64>, Vec<i64>), RuleError> {
    let step = match (&rule.kind, &rule.lookup) {
        (RuleKind::Expect, _) => {
            let failures = eval_condition(ctx, input, rule, false).await?;
            return Ok((input.clone(), failures, vec![], vec![]));
        }
        (RuleKind::Normalize, _) => normalize(ctx, input, rule).await?,
        (RuleKind::Enrich, None) => enrich_computed(ctx, input, rule).await?,
        (RuleKind::Enrich, Some(_)) => enrich_lookup(ctx, input, rule, lookups).await?,
        (RuleKind::Filter, _) => return Err(RuleError::Internal("a filter in the chain")),
    };
    if crate::lake::unstorable_column(&step.rows.schema()).is_some() {
        return Err(RuleError::Internal("a column silver cannot store"));
    }
    Ok((step.rows, step.failures, step.changed, step.read_as_utc))
}

/// Everything of `rule` its step's values and reasons depend on: all but
/// its rationale, its action and whether it is on.
fn key_of(rule: &Rule) -> String {
    format!(
        "{:?}",
        (
            &rule.id,
            rule.kind,
            &rule.column,
            rule.resolved_expression(),
            &rule.lookup,
            rule.cast
        )
    )
}

/// Every SQL text of `rule` is [`reusable`](crate::silver::eval::reusable).
fn rule_reusable(ctx: &SessionContext, rule: &Rule) -> bool {
    let sql = rule.resolved_expression();
    match &rule.lookup {
        None => crate::silver::eval::reusable(ctx, &sql),
        Some(l) => {
            crate::silver::eval::reusable(ctx, &l.on)
                && split_expressions(&sql)
                    .is_ok_and(|e| e.iter().all(|e| crate::silver::eval::reusable(ctx, e)))
        }
    }
}

/// The rows an enrichment's lookup joins, as [`enrich_lookup`] finds them.
fn lookup_rows(rule: &Rule, lookups: &Lookups<'_>) -> Option<RecordBatch> {
    let l = rule.lookup.as_ref()?;
    if l.table.is_silver() {
        lookups.silver.get(&l.table).cloned()
    } else if l.table.is_bronze() {
        lookups.bronze.get(l.table.name()).map(|p| p.rows.clone())
    } else {
        None
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::silver::source::Parsed;
    use datafusion::arrow::array::{Array, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::collections::BTreeMap;

    fn rule(id: &str, kind: &str, column: &str, expression: &str) -> Rule {
        serde_json::from_value(serde_json::json!({"id": id, "kind": kind, "column": column,
            "expression": expression, "enabled": true, "rationale": ""}))
        .expect("rule")
    }

    fn rows() -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("code", DataType::Utf8, true),
                Field::new("qty", DataType::Int64, true),
            ])),
            vec![
                Arc::new(StringArray::from(vec![Some(" a"), Some("dup"), None])),
                Arc::new(Int64Array::from(vec![Some(2), Some(0), Some(5)])),
            ],
        )
        .expect("batch")
    }

    #[test]
    fn an_edit_recomputes_the_edited_rule_and_what_follows_it() {
        futures::executor::block_on(async {
            let ctx = SessionContext::new();
            let cache = StepCache::default();
            let parsed = rows();
            let none = BTreeMap::new();
            let silver = BTreeMap::new();
            let lookups = Lookups { bronze: &none, silver: &silver };
            let n1 = rule("N1", "normalize", "code", "upper(trim(code))");
            let e1 = rule("E1", "enrich", "ratio", "10 / qty");
            let x1 = rule("X1", "expect", "ratio", "ratio > 2");
            let mut steps = cache.take("t", &parsed).expect("steps");
            let first: Vec<Link> = steps
                .chain(&ctx, &[&n1, &e1, &x1], &lookups)
                .await
                .expect("row-local")
                .to_vec();
            // Every row, the zero quantity's failure on its own row.
            assert_eq!(first[1].rows.num_rows(), 3);
            assert_eq!(first[1].failures.len(), 1);
            assert_eq!(first[1].failures[0].0, 1);
            assert!(first[1].failures[0].1.starts_with("E1: 10 / qty failed on this row: "));
            assert_eq!(first[0].changed, vec![0, 1]);
            // X1: ratio 5 passes, NULL (row 1) and 2 (row 2) fail.
            let x1_failed: Vec<i64> = first[2].failures.iter().map(|(a, _)| *a).collect();
            assert_eq!(x1_failed, vec![1, 2]);
            cache.put("t", steps);

            // Same rows, E1 edited: N1's output is reused (the same arrays), E1 and X1 are new.
            let mut steps = cache.take("t", &parsed).expect("steps");
            let e1b = rule("E1", "enrich", "ratio", "qty * 2");
            let second = steps
                .chain(&ctx, &[&n1, &e1b, &x1], &lookups)
                .await
                .expect("row-local")
                .to_vec();
            assert!(Arc::ptr_eq(first[0].rows.column(0), second[0].rows.column(0)));
            let ratio = |l: &Link| l.rows.column_by_name("ratio").cloned().expect("ratio");
            assert!(!Arc::ptr_eq(&ratio(&first[1]), &ratio(&second[1])));
            assert!(second[1].failures.is_empty());
            let x1_failed: Vec<i64> = second[2].failures.iter().map(|(a, _)| *a).collect();
            assert_eq!(x1_failed, vec![1]);
            // A filter evaluated once is the same answer again.
            let f = rule("F1", "filter", "qty", "qty > 4");
            assert_eq!(steps.filter(&ctx, &f).await.expect("filter").len(), 1);
            assert_eq!(steps.filter(&ctx, &f).await.expect("filter").len(), 1);
            cache.put("t", steps);

            // Other arrays (equal values) start over: no step is kept.
            let steps = cache.take("t", &rows()).expect("steps");
            assert!(steps.chain.is_empty() && steps.filters.is_empty());

            // Neither a window nor now() is computed here.
            let mut steps = cache.take("t", &parsed).expect("steps");
            let w = rule("E2", "enrich", "n", "count(*) OVER (PARTITION BY code)");
            assert!(steps.chain(&ctx, &[&n1, &w], &lookups).await.is_none());
            let now = rule("E3", "enrich", "at", "now()");
            assert!(steps.chain(&ctx, &[&now], &lookups).await.is_none());
        });
    }

    #[test]
    fn a_lookup_whose_key_is_not_unique_over_every_row_runs_as_before() {
        futures::executor::block_on(async {
            let ctx = SessionContext::new();
            let lk = RecordBatch::try_new(
                Arc::new(Schema::new(vec![
                    Field::new("code", DataType::Utf8, true),
                    Field::new("name", DataType::Utf8, true),
                ])),
                vec![
                    Arc::new(StringArray::from(vec!["dup", "dup", " a"])),
                    Arc::new(StringArray::from(vec!["one", "two", "A"])),
                ],
            )
            .expect("lookup");
            let mut bronze = BTreeMap::new();
            bronze.insert(
                "lk".to_string(),
                Parsed {
                    rows: lk,
                    rejected: vec![],
                    missing: vec![],
                    read_as_utc: vec![],
                },
            );
            let silver = BTreeMap::new();
            let lookups = Lookups { bronze: &bronze, silver: &silver };
            let mut e = rule("E1", "enrich", "name", "l.name");
            e.lookup = Some(crate::silver::rules::Lookup {
                table: medallion_protocol::TableName::bronze("lk"),
                alias: "l".into(),
                on: "code = l.code".into(),
            });
            let cache = StepCache::default();
            let mut steps = cache.take("t", &rows()).expect("steps");
            // Row 1 (`dup`) matches twice: over every row the join fails.
            assert!(steps.chain(&ctx, &[&e], &lookups).await.is_none());
            assert!(steps.chain.is_empty());
            // Without the `dup` row the same rule runs here.
            let two = rows().slice(0, 1);
            let mut steps = cache.take("t", &two).expect("steps");
            let links = steps.chain(&ctx, &[&e], &lookups).await.expect("unique");
            let names = links[0].rows.column_by_name("name").expect("name");
            assert_eq!(names.len(), 1);
            assert!(names.is_valid(0));
        });
    }
}
