//! One silver table from its parsed bronze rows: every enabled rule in
//! order (filters, normalizations, enrichments), each on the previous one's
//! materialized output so an error names exactly one rule; then the
//! `select` list and the merge's delete events. Also the row trail's replay
//! of the same steps ([`trace_silver`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

use super::enrich::*;
use super::filter::*;
use super::normalize::*;
use super::select::*;
use super::stage::*;
use crate::error::{pipeline_diag, Diagnostic};
use crate::model::SilverTableDef;
use crate::query::*;
use crate::silver::rules::{Action, Rule, RuleKind};
use crate::silver::source::{Parsed, Rejected};
use crate::silver::step_cache::TableSteps;
use medallion_protocol::lineage::TraceEntry;
use medallion_protocol::rules::RuleStat;

/// What one silver table's rules produced.
pub(crate) struct SilverRows {
    /// Rows in silver's layout (declared and added columns, `_event_id`, `_batch_id` last).
    pub rows: RecordBatch,
    /// Rows a `drop` rule failed (all reasons of a stage listed).
    pub rejected: Vec<Rejected>,
    /// Per row of `rows`: is it a delete event (`merge.delete_when`)?
    pub deletes: BooleanArray,
}

/// Applies a rule's action to its failing rows: `drop` records them against
/// their rows, `fail` makes a diagnostic, `warn` only counts. Returns the stat.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_action(
    rule: &Rule,
    checked: usize,
    changed: usize,
    failures: Failures,
    drops: &mut BTreeMap<i64, Vec<String>>,
    diags: &mut Vec<Diagnostic>,
) -> RuleStat {
    let action = rule.action();
    let sample: Vec<String> = failures.iter().take(3).map(|(_, r)| r.clone()).collect();
    let failed = failures.len();
    // A row an earlier rule already sends to quarantine does not stop the update.
    let stopping: Vec<&(i64, String)> = failures
        .iter()
        .filter(|(a, _)| !drops.contains_key(a))
        .collect();
    match action {
        Action::Drop => {
            for (row, reason) in failures {
                drops.entry(row).or_default().push(reason);
            }
        }
        Action::Fail if !stopping.is_empty() => diags.push(Diagnostic::rule(
            &rule.id,
            format!(
                "{n} {rows} failed {id}, whose action is fail: the update of this silver table stopped; it, its quarantine rows and what reads it stay at their previous version. First: {first}",
                n = stopping.len(),
                rows = if stopping.len() == 1 { "row" } else { "rows" },
                id = rule.id,
                first = stopping[0].1
            ),
        )),
        Action::Fail | Action::Warn => {}
    }
    RuleStat {
        silver_table: String::new(),
        rule_id: rule.id.clone(),
        kind: rule.kind,
        action,
        checked,
        failed,
        changed,
        sample,
        read_as_utc: 0,
    }
}

/// Filters, then normalizations, enrichments and expectations, for one
/// silver table. Filters are evaluated together on the typed rows; rows a
/// `drop` filter rejects leave before the normalizations (seed 002 §4: drop
/// the garbage first). Normalizations, enrichments and expectations then
/// each see every remaining row, and a row failing `drop` rules among them
/// is quarantined with all their reasons.
///
/// With `steps` (the table's steps of the last run, over the same typed
/// rows: [`crate::silver::step_cache`]) only the rules that changed are
/// computed; the result is the same.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn build_silver(
    ctx: &SessionContext,
    def: &SilverTableDef,
    parsed: &Parsed,
    lookups: &Lookups<'_>,
    stats: &mut Vec<RuleStat>,
    mut trace: Option<&mut Vec<TraceEntry>>,
    progress: crate::progress::Reporter<'_>,
    mut steps: Option<&mut TableSteps>,
) -> std::result::Result<SilverRows, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let enabled = def.rules.rules.iter().filter(|r| r.enabled).count() as u32;
    let mut at = 0u32;
    let mut report = |rule: &Rule| {
        at += 1;
        progress.report(crate::progress::Progress::Rule {
            table: medallion_protocol::TableName::silver(&def.name),
            rule: rule.id.clone(),
            n: at,
            of: enabled,
        });
    };
    for id in def.rules.duplicate_ids() {
        diags.push(Diagnostic::rule(
            &id,
            format!("rule id {id} is used more than once; ids must be unique"),
        ));
    }
    let element = crate::silver::explode::element_label(def.explode.as_ref());
    let n = parsed.rows.num_rows();
    // The trail records what each rule did to its rows: it runs them all.
    if trace.is_some() {
        steps = None;
    }
    let typed = match &steps {
        Some(s) => s.typed().clone(),
        None => with_column(
            &parsed.rows,
            ARRIVAL,
            Arc::new(datafusion::arrow::array::Int64Array::from_iter_values(
                0..n as i64,
            )),
        )
        .map_err(|e| vec![pipeline_diag(e)])?,
    };

    // Filters: each evaluated on the typed rows.
    let mut drops: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for rule in def
        .rules
        .rules
        .iter()
        .filter(|r| r.enabled && r.kind == RuleKind::Filter)
    {
        report(rule);
        if let Err(e) = check_rule(rule) {
            diags.push(Diagnostic::rule(&rule.id, e.to_string()));
            continue;
        }
        let evaluated = match steps.as_deref_mut() {
            Some(s) => s.filter(ctx, rule).await,
            None => eval_condition(ctx, &typed, rule, true).await,
        };
        match evaluated {
            Ok(failures) => {
                if let Some(t) = trace.as_deref_mut() {
                    trace_rule(t, rule, &typed, None, &failures);
                }
                stats.push(apply_action(rule, n, 0, failures, &mut drops, &mut diags));
            }
            Err(e) => diags.push(Diagnostic::rule(&rule.id, e.to_string())),
        }
    }
    let mut rejected = Vec::new();
    // Per typed row (arrival position): no filter dropped it.
    let through =
        reject_dropped(&typed, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;

    // Normalizations, enrichments, expectations: each on the materialized
    // output of the previous rule; failures collected per row.
    let chain: Vec<&Rule> = def
        .rules
        .in_execution_order()
        .into_iter()
        .filter(|r| r.enabled && r.kind != RuleKind::Filter)
        .collect();
    // Computed over every typed row before (or now), the rows let through
    // taken from there: the same values, failures and counts as below.
    let computed = match steps {
        Some(s) if through.true_count() > 0 && chain.iter().all(|r| check_rule(r).is_ok()) => {
            s.chain(ctx, &chain, lookups).await
        }
        _ => None,
    };
    // The rows let through, copied once: from the chain's last step when it
    // was computed over every row, else from the typed rows.
    let mut current = datafusion::arrow::compute::filter_record_batch(
        computed
            .and_then(|links| links.last())
            .map_or(&typed, |last| &last.rows),
        &through,
    )
    .map_err(|e| vec![pipeline_diag(e.into())])?;
    if let Some(links) = computed {
        let through = through.values();
        let counted = |rows: &[i64]| rows.iter().filter(|a| through.value(**a as usize)).count();
        for (rule, link) in chain.iter().zip(links) {
            report(rule);
            let failures: Failures = link
                .failures
                .iter()
                .filter(|(a, _)| through.value(*a as usize))
                .cloned()
                .collect();
            let mut stat = apply_action(
                rule,
                current.num_rows(),
                counted(&link.changed),
                failures,
                &mut drops,
                &mut diags,
            );
            stat.read_as_utc = counted(&link.read_as_utc);
            stats.push(stat);
        }
    }
    let mut expect_rows: Option<RecordBatch> = None;
    for rule in chain.iter().filter(|_| computed.is_none()) {
        report(rule);
        if let Err(e) = check_rule(rule) {
            diags.push(Diagnostic::rule(&rule.id, e.to_string()));
            continue;
        }
        // A rule that reads other rows (a window, a subquery over the rows)
        // sees only the rows still headed for silver: rows an earlier `drop`
        // rule failed leave first, as filtered rows do, so they are neither
        // counted nor ranked (`count(*) OVER (...)` after a failed CAST).
        let reads_others = !drops.is_empty()
            && crate::silver::eval::uses_other_rows(ctx, &rule.resolved_expression());
        if reads_others && rule.kind != RuleKind::Expect {
            current = split_rejected(&current, &mut drops, &mut rejected, element)
                .map_err(|e| vec![e])?;
        }
        let checked = current.num_rows();
        if rule.kind == RuleKind::Expect {
            // Expectations all see the same rows: the output of the last
            // enrichment (less the dropped ones, for a rule reading other rows).
            let shared = expect_rows.get_or_insert_with(|| current.clone());
            let remaining;
            let batch = if reads_others {
                remaining = without_dropped(shared, &drops).map_err(|e| vec![e])?;
                &remaining
            } else {
                &*shared
            };
            let checked = batch.num_rows();
            match eval_condition(ctx, batch, rule, false).await {
                Ok(failures) => {
                    if let Some(t) = trace.as_deref_mut() {
                        trace_rule(t, rule, batch, None, &failures);
                    }
                    stats.push(apply_action(
                        rule, checked, 0, failures, &mut drops, &mut diags,
                    ));
                }
                Err(e) => diags.push(Diagnostic::rule(&rule.id, e.to_string())),
            }
            continue;
        }
        let result = match (&rule.kind, &rule.lookup) {
            (RuleKind::Normalize, _) => normalize(ctx, &current, rule).await,
            (RuleKind::Enrich, None) => enrich_computed(ctx, &current, rule).await,
            (RuleKind::Enrich, Some(_)) => enrich_lookup(ctx, &current, rule, lookups).await,
            (RuleKind::Filter | RuleKind::Expect, _) => continue,
        };
        match result {
            Ok(step) => {
                // A column silver cannot store is this rule's error.
                if let Some(why) = crate::lake::unstorable_column(&step.rows.schema()) {
                    diags.push(Diagnostic::rule(&rule.id, why));
                    continue;
                }
                if let Some(t) = trace.as_deref_mut() {
                    trace_rule(t, rule, &current, Some(&step.rows), &step.failures);
                }
                let mut stat = apply_action(
                    rule,
                    checked,
                    step.changed.len(),
                    step.failures,
                    &mut drops,
                    &mut diags,
                );
                stat.read_as_utc = step.read_as_utc.len();
                stats.push(stat);
                current = step.rows;
            }
            Err(e) => diags.push(Diagnostic::rule(&rule.id, e.to_string())),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let current =
        split_rejected(&current, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;

    // Delete events of a merged table; a row whose condition cannot be
    // computed is quarantined.
    let table_diag = |what: &str, m: RuleError| {
        vec![Diagnostic {
            scope: "pipeline".into(),
            id: def.name.clone(),
            message: format!(
                "{}{what}: {m}",
                medallion_protocol::TableName::silver(&def.name)
            ),
            table: String::new(),
        }]
    };
    let arrival = arrivals(&current);
    let deletes = match def.merge.as_ref().and_then(|m| m.delete_when.as_deref()) {
        Some(cond) => {
            let (mask, errors) = predicate_mask(ctx, &current, cond)
                .await
                .map_err(|m| table_diag(": delete_when", m))?;
            for (row, error) in errors {
                drops
                    .entry(arrival[row])
                    .or_default()
                    .push(format!("delete_when: {cond} failed on this row: {error}"));
            }
            mask
        }
        None => BooleanArray::from(vec![false; current.num_rows()]),
    };

    // The declared select list (renames, chosen columns), lineage kept.
    let current = if def.select.is_empty() {
        current
    } else {
        let (selected, failures) = select_columns(ctx, &current, &def.select)
            .await
            .map_err(|m| table_diag(" select", m))?;
        for (a, reason) in failures {
            drops.entry(a).or_default().push(reason);
        }
        selected
    };
    let (current, deletes) = if drops.is_empty() {
        (current, deletes)
    } else {
        let keep = not_dropped(&arrival, &drops);
        let deletes = datafusion::arrow::compute::filter(&deletes, &keep)
            .map_err(|e| vec![pipeline_diag(e.into())])?
            .as_any()
            .downcast_ref::<BooleanArray>()
            .cloned()
            .unwrap_or_else(|| BooleanArray::from(Vec::<bool>::new()));
        let current =
            split_rejected(&current, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;
        (current, deletes)
    };

    // A merged table's rows need their business key (and sequence), named
    // as silver names them (after the select list). Such rows are quarantined.
    let (current, deletes) = match &def.merge {
        Some(m) => {
            let arrival = arrivals(&current);
            let mut keep = vec![true; current.num_rows()];
            // With null_safe_keys a NULL key part is a value (NULL = NULL).
            let keys = m.keys.iter().filter(|_| !m.null_safe_keys);
            for (col, what) in keys
                .map(|k| (k, "a merge key"))
                .chain(m.sequence_by.iter().map(|s| (s, "the sequence_by column")))
            {
                if let Some(values) = current.column_by_name(col) {
                    for (row, a) in arrival.iter().enumerate() {
                        if values.is_null(row) {
                            keep[row] = false;
                            drops.entry(*a).or_default().push(format!(
                                "merge: {col} is NULL ({what} of silver.{})",
                                def.name
                            ));
                        }
                    }
                }
            }
            // A NaN sequence value is no order (neither before nor after a number).
            let key_values: Option<Vec<ArrayRef>> = m
                .keys
                .iter()
                .map(|k| current.column_by_name(k).cloned())
                .collect();
            if let Some(values) = m
                .sequence_by
                .as_ref()
                .and_then(|s| current.column_by_name(s))
            {
                let seq = m.sequence_by.as_deref().unwrap_or_default();
                for (row, a) in arrival.iter().enumerate() {
                    if crate::silver::merge::is_nan(values.as_ref(), row) {
                        keep[row] = false;
                        let key = key_values
                            .as_ref()
                            .map(|k| {
                                format!(
                                    " for {}",
                                    crate::silver::merge::describe_key(&m.keys, k, row)
                                )
                            })
                            .unwrap_or_default();
                        drops.entry(*a).or_default().push(format!(
                            "merge: {seq} is NaN{key} (the sequence_by column of silver.{}: NaN is not an order, neither before nor after any value)",
                            def.name
                        ));
                    }
                }
            }
            let deletes = datafusion::arrow::compute::filter(&deletes, &BooleanArray::from(keep))
                .map_err(|e| vec![pipeline_diag(e.into())])?
                .as_any()
                .downcast_ref::<BooleanArray>()
                .cloned()
                .unwrap_or_else(|| BooleanArray::from(Vec::<bool>::new()));
            let current = split_rejected(&current, &mut drops, &mut rejected, element)
                .map_err(|e| vec![e])?;
            (current, deletes)
        }
        None => (current, deletes),
    };

    // Silver's columns: everything but the bronze text, with the lineage ids last.
    let schema = current.schema();
    let mut order: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !is_internal(schema.field(i).name().as_str()))
        .collect();
    for name in ["_event_id", "_batch_id"] {
        if let Ok(i) = schema.index_of(name) {
            order.push(i);
        }
    }
    let rows = current
        .project(&order)
        .map_err(|e| vec![pipeline_diag(e.into())])?;
    Ok(SilverRows {
        rows,
        rejected,
        deletes,
    })
}

/// Records what `rule` did to each row of `before` (`after`: the rule's
/// output, for normalizations and enrichments).
pub(crate) fn trace_rule(
    trace: &mut Vec<TraceEntry>,
    rule: &Rule,
    before: &RecordBatch,
    after: Option<&RecordBatch>,
    failures: &Failures,
) {
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S"));
    let show = |batch: &RecordBatch, col: &str, row: usize| -> String {
        batch
            .column_by_name(col)
            .and_then(|a| {
                ArrayFormatter::try_new(a.as_ref(), &opts)
                    .ok()
                    .map(|f| f.value(row).to_string())
            })
            .unwrap_or_else(|| "?".into())
    };
    let after_rows: std::collections::HashMap<i64, usize> = after
        .map(|a| {
            arrivals(a)
                .into_iter()
                .enumerate()
                .map(|(i, x)| (x, i))
                .collect()
        })
        .unwrap_or_default();
    for (row, arrival) in arrivals(before).into_iter().enumerate() {
        let failure = failures.iter().find(|(a, _)| *a == arrival);
        let text = match (failure, rule.kind, after.zip(after_rows.get(&arrival))) {
            (Some((_, reason)), _, _) => format!("failed ({}): {reason}", rule.action().as_str()),
            (None, RuleKind::Normalize, Some((a, &r))) => {
                let col = rule.column.trim();
                let (old, new) = (show(before, col, row), show(a, col, r));
                match rule.cast {
                    Some(ty) if old == "NULL" => format!("{col}: NULL → {new} as {ty}"),
                    Some(ty) => format!("{col}: '{old}' → {new} as {ty}"),
                    None if old == new => format!("{col} unchanged ({old})"),
                    None => format!("{col}: {old} → {new}"),
                }
            }
            (None, RuleKind::Enrich, Some((a, &r))) => rule
                .output_columns()
                .iter()
                .map(|c| format!("{c} = {}", show(a, c, r)))
                .collect::<Vec<_>>()
                .join(", "),
            _ => "passed".into(),
        };
        trace.push(TraceEntry {
            arrival,
            rule_id: rule.id.clone(),
            kind: rule.kind,
            text,
            failed: failure.is_some(),
        });
    }
}

/// Runs one silver table's rules over a few parsed bronze records and
/// records what every rule did to each (the row trail). Returns the entries
/// by `_event_id`, and the rows quarantined with their reasons.
pub(crate) async fn trace_silver(
    ctx: &SessionContext,
    def: &SilverTableDef,
    parsed: &Parsed,
    lookups: &Lookups<'_>,
) -> std::result::Result<(Vec<(String, TraceEntry)>, Vec<Rejected>), RuleError> {
    let mut entries = Vec::new();
    let mut stats = Vec::new();
    let built = build_silver(
        ctx,
        def,
        parsed,
        lookups,
        &mut stats,
        Some(&mut entries),
        crate::progress::Reporter::NONE,
        None,
    )
    .await
    .map_err(RuleError::Failed)?;
    let events = parsed
        .rows
        .column_by_name("_event_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .map(|a| {
            (0..a.len())
                .map(|i| a.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    Ok((
        entries
            .into_iter()
            .filter_map(|e| events.get(e.arrival as usize).map(|ev| (ev.clone(), e)))
            .collect(),
        built.rejected,
    ))
}

/// A rule's parameters fit its kind, and its SQL is not too long to run.
fn check_rule(rule: &Rule) -> std::result::Result<(), RuleError> {
    rule.check_params().map_err(RuleError::Params)?;
    check_size(&rule.resolved_expression(), MAX_EXPRESSION_TOKENS)?;
    if let Some(l) = &rule.lookup {
        check_size(&l.on, MAX_EXPRESSION_TOKENS)?;
    }
    Ok(())
}
