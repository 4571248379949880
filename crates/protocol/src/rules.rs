//! The rule registry: every transformation from bronze to silver written down as
//! data before it runs, with an id and a rationale. This is the "mapping
//! specification" of seed `002_b94de4dc08a8f02d.txt` section 3 (rules F1–F3,
//! N1–N4, E1–E3), applied in the order of its section 4–6: filters, then
//! normalizations, then enrichments, then expectations.
//!
//! Every rule is also an expectation with an action on the rows that fail it
//! (the `ON VIOLATION` of Delta Live Tables expectations): `warn` keeps the
//! row and counts it, `drop` sends it to `silver.quarantine` with the rule id
//! and a reason, `fail` stops the update (the previous silver version stays
//! current). What "fails" means per kind: a filter's condition is TRUE; an
//! expectation's condition is not TRUE (FALSE or NULL); a normalization's value
//! does not convert to its declared `type`, or becomes NULL from a non-NULL
//! value; an enrichment's new column is NULL (a lookup found no match, or
//! the match's values give NULL: the quarantine's reason says which).
//! [`RuleStat`] is what one rule did in a run.

use serde::{Deserialize, Serialize};

use crate::schema::ColumnType;
use crate::table::TableName;

/// The three groups of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// `expression` is a predicate over the typed bronze row; rows where it is
    /// TRUE are **rejected** into `silver.quarantine` (NULL or FALSE keeps the row).
    Filter,
    /// `expression` computes the new value of the existing `column`
    /// (cast, coalesce, trim, ...).
    Normalize,
    /// `expression` computes a new `column`; with `lookup` set, a LEFT JOIN adds
    /// columns from a lookup table (`column` and `expression` are then
    /// comma-separated lists of the same length).
    Enrich,
    /// `expression` is a condition every silver row must satisfy (evaluated
    /// after the enrichments); a row where it is FALSE or NULL fails it.
    Expect,
}

/// What happens to the rows that fail a rule (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Keep the row; count it in the run's rule results.
    Warn,
    /// Quarantine the row with the rule id and reason.
    Drop,
    /// Stop the update: silver, quarantine and gold stay at their last version.
    Fail,
}

impl Action {
    /// Lower-case name as in the JSON form and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "warn",
            Action::Drop => "drop",
            Action::Fail => "fail",
        }
    }
}

impl RuleKind {
    /// Lower-case name as used in the registry table and the JSON form.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Filter => "filter",
            RuleKind::Normalize => "normalize",
            RuleKind::Enrich => "enrich",
            RuleKind::Expect => "expect",
        }
    }
}

/// A LEFT JOIN with a lookup table (seed 002: "LEFT JOIN, not INNER, so no row is lost").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lookup {
    /// Qualified table name, e.g. `bronze.taxi_zone_lookup`. Read through its
    /// declared source schema, so its columns are typed.
    pub table: TableName,
    /// Alias the `on` and `expression` texts use for the lookup's columns, e.g. `pu`.
    pub alias: String,
    /// Join condition in SQL, e.g. `PULocationID = pu.locationid`.
    pub on: String,
}

/// A named value substituted into `expression` wherever `{name}` appears, so a
/// learner can change a threshold or a date without touching the SQL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParam {
    pub name: String,
    pub value: String,
}

/// One row of the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// `F1`, `N2`, `E3`, ...: unique in the registry; quarantine rows carry it.
    pub id: String,
    pub kind: RuleKind,
    /// Column or scope the rule is about (`fare_amount`, `pickup_borough, pickup_zone`).
    pub column: String,
    /// SQL expression (DataFusion dialect), with optional `{param}` placeholders.
    pub expression: String,
    #[serde(default)]
    pub params: Vec<RuleParam>,
    #[serde(default)]
    pub lookup: Option<Lookup>,
    pub enabled: bool,
    /// Why the rule exists, in the learner's words.
    pub rationale: String,
    /// What happens to failing rows; unset: `drop` (`warn` for enrichments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Normalizations: the type the value must convert to, exactly
    /// (`DECIMAL(10,2)`, `INT`); a value that does not fails the rule with
    /// `N1: amount: 'bad_data' is not DECIMAL(10,2)`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub cast: Option<ColumnType>,
}

impl Rule {
    /// The rule's action, with the default for its kind.
    pub fn action(&self) -> Action {
        self.action.unwrap_or(match self.kind {
            RuleKind::Enrich => Action::Warn,
            _ => Action::Drop,
        })
    }

    /// `expression` with every `{name}` replaced by its parameter value.
    pub fn resolved_expression(&self) -> String {
        let mut out = self.expression.clone();
        for p in &self.params {
            out = out.replace(&format!("{{{}}}", p.name), &p.value);
        }
        out
    }

    /// Parameters are pasted into SQL string literals (`TIMESTAMP '{from}'`), so a
    /// value may not contain a quote: that would change the SQL around it.
    pub fn check_params(&self) -> Result<(), String> {
        for p in &self.params {
            if p.value.contains('\'') {
                return Err(format!("parameter {{{}}} must not contain a quote ('): its value is pasted inside a SQL string", p.name));
            }
        }
        Ok(())
    }

    /// Output column names of an enrichment (trimmed, comma-separated `column`).
    pub fn output_columns(&self) -> Vec<String> {
        self.column
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    }
}

/// The ordered list of rules for one silver table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RuleRegistry {
    pub rules: Vec<Rule>,
}

impl RuleRegistry {
    /// Rules in execution order: filters, normalizations, enrichments,
    /// expectations; registry order within each group (seed 002 section 4:
    /// "first drop the garbage, then fix the types, then add context"; then
    /// verify the result).
    pub fn in_execution_order(&self) -> Vec<&Rule> {
        let mut out = Vec::with_capacity(self.rules.len());
        for kind in [
            RuleKind::Filter,
            RuleKind::Normalize,
            RuleKind::Enrich,
            RuleKind::Expect,
        ] {
            out.extend(self.rules.iter().filter(|r| r.kind == kind));
        }
        out
    }

    /// The registry as the markdown table of seed 002 section 3
    /// (`| # | Column / scope | Rule | Kind | On failure | Rationale |`),
    /// disabled rules marked, a normalization's declared type after its rule.
    pub fn to_markdown(&self) -> String {
        self.to_markdown_in(crate::Lang::En)
    }

    /// [`RuleRegistry::to_markdown`] with the header, the kinds and marks
    /// in `lang` (rule ids, expressions and the actions warn / drop / fail
    /// stay: they are the registry's own terms); the rationales are as written.
    pub fn to_markdown_in(&self, lang: crate::Lang) -> String {
        let (header, off) = match lang {
            crate::Lang::En => (
                "| # | Column / scope | Rule | Kind | On failure | Rationale |",
                "off",
            ),
            crate::Lang::Ru => (
                "| № | Колонка / область | Правило | Вид | При ошибке | Обоснование |",
                "выкл.",
            ),
        };
        let mut s = format!("{header}\n|---|---|---|---|---|---|\n");
        for r in &self.rules {
            let mut rule = r.resolved_expression();
            if let Some(l) = &r.lookup {
                rule = format!(
                    "LEFT JOIN {} AS {} ON {} → {}",
                    l.table, l.alias, l.on, rule
                );
            }
            let id = if r.enabled {
                r.id.clone()
            } else {
                format!("{} ({off})", r.id)
            };
            if let Some(t) = r.cast {
                rule = format!("{rule} → {t}");
            }
            s.push_str(&format!(
                "| {} | {} | `{}` | {} | {} | {} |\n",
                md_cell(&id),
                md_cell(&r.column),
                rule.replace('`', "'").replace('|', "\\|"),
                kind_word(r.kind, lang),
                r.action().as_str(),
                md_cell(&r.rationale)
            ));
        }
        s
    }

    /// Ids that appear more than once (each reported once).
    pub fn duplicate_ids(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut dups = std::collections::BTreeSet::new();
        for r in &self.rules {
            if !seen.insert(r.id.as_str()) {
                dups.insert(r.id.clone());
            }
        }
        dups.into_iter().collect()
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// What one rule did in a run (its expectation results).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleStat {
    /// Silver table (name without the layer).
    pub silver_table: String,
    pub rule_id: String,
    pub kind: RuleKind,
    pub action: Action,
    /// Rows the rule checked.
    pub checked: usize,
    /// Rows that failed it (see [`crate::rules`] for what fails per kind);
    /// passed = checked − failed.
    pub failed: usize,
    /// Normalize: values the rule changed.
    pub changed: usize,
    /// Reasons of up to three failing rows.
    pub sample: Vec<String>,
    /// Normalize with a declared TIMESTAMP type: values without an offset
    /// that were taken as UTC (a declared zone is not possible here: convert
    /// with an offset in the text, or declare the source column's time_zone).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_as_utc: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A rule kind as the page names it in `lang` (`filter`, `фильтр`, ...).
fn kind_word(kind: RuleKind, lang: crate::Lang) -> &'static str {
    match (lang, kind) {
        (crate::Lang::En, k) => k.as_str(),
        (crate::Lang::Ru, RuleKind::Filter) => "фильтр",
        (crate::Lang::Ru, RuleKind::Normalize) => "нормализация",
        (crate::Lang::Ru, RuleKind::Enrich) => "обогащение",
        (crate::Lang::Ru, RuleKind::Expect) => "ожидание",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, kind: RuleKind) -> Rule {
        Rule {
            id: id.into(),
            kind,
            column: "c".into(),
            expression: "c > {limit}".into(),
            params: vec![RuleParam {
                name: "limit".into(),
                value: "5".into(),
            }],
            lookup: None,
            enabled: true,
            rationale: "why | not".into(),
            action: None,
            cast: None,
        }
    }

    #[test]
    fn execution_order_groups_by_kind() {
        let reg = RuleRegistry {
            rules: vec![
                rule("E1", RuleKind::Enrich),
                rule("F1", RuleKind::Filter),
                rule("N1", RuleKind::Normalize),
            ],
        };
        let ids: Vec<_> = reg
            .in_execution_order()
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(ids, ["F1", "N1", "E1"]);
    }

    #[test]
    fn markdown_substitutes_params_and_escapes_pipes() {
        let reg = RuleRegistry {
            rules: vec![rule("F1", RuleKind::Filter)],
        };
        assert_eq!(
            reg.to_markdown(),
            "| # | Column / scope | Rule | Kind | On failure | Rationale |\n|---|---|---|---|---|---|\n| F1 | c | `c > 5` | filter | drop | why \\| not |\n"
        );
    }

    #[test]
    fn markdown_in_russian_translates_header_kinds_and_off_mark() {
        let mut off = rule("F1", RuleKind::Filter);
        off.enabled = false;
        let reg = RuleRegistry { rules: vec![off] };
        assert_eq!(
            reg.to_markdown_in(crate::Lang::Ru),
            "| № | Колонка / область | Правило | Вид | При ошибке | Обоснование |\n|---|---|---|---|---|---|\n| F1 (выкл.) | c | `c > 5` | фильтр | drop | why \\| not |\n"
        );
    }

    #[test]
    fn json_round_trip() {
        let reg = RuleRegistry {
            rules: vec![rule("F1", RuleKind::Filter)],
        };
        let json = serde_json::to_string(&reg).unwrap();
        assert!(json.contains("\"kind\":\"filter\""));
        assert_eq!(serde_json::from_str::<RuleRegistry>(&json).unwrap(), reg);
    }
}
