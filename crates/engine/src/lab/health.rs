//! The five signs of a healthy medallion (seed 003 §8), each evaluated
//! from what a pipeline holds and did, with a one-line reason in the
//! session's language. The caller (`playground/lab.rs`) gathers the facts
//! ([`HealthFacts`]) for the session and for its twin.

use std::collections::BTreeMap;

use datafusion::arrow::datatypes::SchemaRef;

use super::tr;
use crate::api::Lang;
use medallion_protocol::lab::SignState;
use medallion_protocol::TableName;

/// What the signs are evaluated from, for one pipeline.
pub struct HealthFacts {
    pub lang: Lang,
    /// Records bronze holds, over every table.
    pub bronze_records: usize,
    /// Records the source sent that bronze does not hold: (table, count, how).
    pub lost: Vec<(TableName, usize, String)>,
    /// Records erased by a right-to-be-forgotten request (the one allowed delete).
    pub erased: usize,
    /// Gold models (without the layer) that read bronze tables.
    pub reads_bronze: BTreeMap<String, Vec<String>>,
    /// Each gold table: its schema and the columns that name a row.
    pub gold: Vec<(TableName, SchemaRef, Vec<String>)>,
    /// Gold tables a rebuild from bronze gives otherwise: (table, rows that
    /// differ), or why the rebuild failed. `None`: every run is already a
    /// rebuild (full refresh).
    pub rebuild_differs: Option<Result<Vec<(TableName, usize)>, String>>,
    /// `rebuild_differs` compares a replay with the gold published before
    /// bronze was rewritten (the weekly fix job, the weekly DELETE).
    pub rebuild_against_published: bool,
    /// `rebuild_differs` compares today's gold with a replay of the ingest
    /// that joins the records with today's lookup (a JOIN at ingest).
    pub rebuild_by_join: bool,
    /// Bronze batches an OVERWRITE replaced: the gold published from them
    /// cannot be rebuilt, whatever a replay of today's bronze gives.
    pub overwritten: usize,
    /// Each silver and gold table with its inputs, or why they are unknown,
    /// and whether it has a commit log.
    pub lineage: Vec<(TableName, Result<Vec<String>, String>, bool)>,
}

fn sign(ok: bool, reason: String) -> SignState {
    SignState { ok, reason }
}

/// A gold column name that is a technical artifact, not a business term:
/// an audit or lineage column (`_ingest_ts`, `_event_id`, `raw_payload`),
/// a foreign-key suffix (`user_id_fk`), or a measure named like an id
/// (`_id` on a numeric column that does not name the row).
pub fn technical_column(name: &str, numeric: bool, is_key: bool) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with('_')
        || n == "raw_payload"
        || n.ends_with("_fk")
        || (numeric && !is_key && n.ends_with("_id"))
}

/// The five signs in [`medallion_protocol::lab::HealthSign::ALL`]'s order.
pub fn evaluate(f: &HealthFacts) -> Vec<SignState> {
    let lang = f.lang;
    let lost: usize = f.lost.iter().map(|(_, n, _)| n).sum();
    let bronze = if lost == 0 {
        let erased = if f.erased > 0 {
            tr(lang, format!(" ({} erased on a right-to-be-forgotten request, the one delete the course allows)", f.erased), format!(" ({} удалено по праву на забвение — единственное удаление, которое допускает курс)", f.erased))
        } else {
            String::new()
        };
        sign(true, tr(lang, format!("bronze holds every record the source sent: {} with duplicates and rejects{erased}", f.bronze_records), format!("в bronze каждая присланная запись: {} вместе с дублями и отбраковкой{erased}", f.bronze_records)))
    } else {
        let how: Vec<String> = f
            .lost
            .iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(t, n, how)| format!("{t}: {n} ({how})"))
            .collect();
        sign(
            false,
            tr(
                lang,
                format!(
                    "{lost} {} the source sent {} not in bronze: {}",
                    if lost == 1 { "record" } else { "records" },
                    if lost == 1 { "is" } else { "are" },
                    how.join("; ")
                ),
                format!(
                    "присланных записей нет в bronze: {lost} ({})",
                    how.join("; ")
                ),
            ),
        )
    };
    let readers = if f.reads_bronze.is_empty() {
        sign(
            true,
            tr(
                lang,
                "every gold model reads silver only".into(),
                "каждая gold-модель читает только silver".into(),
            ),
        )
    } else {
        let list: Vec<String> = f
            .reads_bronze
            .iter()
            .map(|(m, t)| format!("{} ← {}", TableName::gold(m), t.join(", ")))
            .collect();
        sign(
            false,
            tr(
                lang,
                format!("gold reads bronze: {}", list.join("; ")),
                format!("gold читает bronze: {}", list.join("; ")),
            ),
        )
    };
    let technical: Vec<String> = f
        .gold
        .iter()
        .flat_map(|(t, schema, key)| {
            schema
                .fields()
                .iter()
                .filter(|c| {
                    let numeric = c.data_type().is_numeric();
                    technical_column(c.name(), numeric, key.is_empty() || key.contains(c.name()))
                })
                .map(move |c| format!("{t}.{}", c.name()))
                .collect::<Vec<_>>()
        })
        .collect();
    let business = if technical.is_empty() {
        sign(
            true,
            tr(
                lang,
                match f.gold.len() {
                    1 => "the gold table uses business names only".to_string(),
                    n => format!("the {n} gold tables use business names only"),
                },
                match f.gold.len() {
                    1 => "в gold-таблице только бизнес-имена".to_string(),
                    n => format!("в gold-таблицах ({n}) только бизнес-имена"),
                },
            ),
        )
    } else {
        sign(
            false,
            tr(
                lang,
                format!("technical column names in gold: {}", technical.join(", ")),
                format!("технические имена колонок в gold: {}", technical.join(", ")),
            ),
        )
    };
    let rebuild = match &f.rebuild_differs {
        None => sign(true, tr(lang, "every run rebuilds silver and gold from all of bronze, so a replay gives the same gold".into(), "каждый запуск пересобирает silver и gold из всего bronze, поэтому replay даёт тот же gold".into())),
        Some(Err(why)) => sign(false, tr(lang, format!("a replay from bronze fails: {why}"), format!("replay из bronze не удаётся: {why}"))),
        Some(Ok(d)) if d.is_empty() => sign(true, tr(lang, "a replay from bronze through silver gives the same gold".into(), "replay из bronze через silver даёт тот же gold".into())),
        Some(Ok(d)) if f.rebuild_by_join => {
            let list: Vec<String> = d.iter().map(|(t, n)| format!("{t} ({n})")).collect();
            sign(false, tr(lang, format!("bronze holds a JOIN made at ingest: a replay of the ingest joins with today's lookup and gives another gold (rows that differ): {}", list.join(", ")), format!("в bronze JOIN, сделанный при загрузке: replay загрузки соединяет с сегодняшним справочником и даёт другой gold (различающихся строк): {}", list.join(", "))))
        }
        Some(Ok(d)) if f.rebuild_against_published => {
            let list: Vec<String> = d.iter().map(|(t, n)| format!("{t} ({n})")).collect();
            sign(false, tr(lang, format!("bronze was rewritten after gold was published: a replay gives another gold than the one published (rows that differ): {}", list.join(", ")), format!("bronze переписан после публикации gold: replay даёт не тот gold, что был опубликован (различающихся строк): {}", list.join(", "))))
        }
        Some(Ok(d)) => {
            let list: Vec<String> = d.iter().map(|(t, n)| format!("{t} ({n})")).collect();
            sign(false, tr(lang, format!("a replay from bronze gives another gold (rows that differ): {}", list.join(", ")), format!("replay из bronze даёт другой gold (различающихся строк): {}", list.join(", "))))
        }
    };
    let rebuild = if f.overwritten > 0 && rebuild.ok {
        sign(false, tr(lang, format!("{} overwritten by a later batch of the same day: the gold published while {} there cannot be rebuilt by replay", if f.overwritten == 1 { "1 bronze batch was".to_string() } else { format!("{} bronze batches were", f.overwritten) }, if f.overwritten == 1 { "it was" } else { "they were" }), format!("перезаписано батчей bronze более поздним батчем того же дня: {}; gold, опубликованный при них, через replay не пересобрать", f.overwritten)))
    } else {
        rebuild
    };
    let unknown: Vec<String> = f
        .lineage
        .iter()
        .filter_map(|(t, inputs, log)| match (inputs, log) {
            (Err(why), _) => Some(format!("{t}: {why}")),
            (Ok(_), false) => Some(tr(
                lang,
                format!("{t}: no commit log"),
                format!("{t}: нет журнала коммитов"),
            )),
            _ => None,
        })
        .collect();
    let lineage = if unknown.is_empty() {
        sign(
            true,
            tr(
                lang,
                format!(
                    "each of the {} silver and gold tables has known inputs and a commit log",
                    f.lineage.len()
                ),
                format!(
                    "у каждой из {} таблиц silver и gold известны входы и есть журнал коммитов",
                    f.lineage.len()
                ),
            ),
        )
    } else {
        sign(
            false,
            tr(
                lang,
                format!("lineage unknown: {}", unknown.join("; ")),
                format!("lineage неизвестен: {}", unknown.join("; ")),
            ),
        )
    };
    vec![bronze, readers, business, rebuild, lineage]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn technical_names_are_audit_columns_foreign_keys_and_id_measures() {
        assert!(technical_column("_ingest_ts", false, false));
        assert!(technical_column("raw_payload", false, true));
        assert!(technical_column("user_id_fk", true, true));
        assert!(technical_column("order_id", true, false));
        assert!(!technical_column("user_id", true, true));
        assert!(!technical_column("revenue", true, false));
        assert!(!technical_column("country", false, true));
    }
}
