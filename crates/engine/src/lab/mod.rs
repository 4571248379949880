//! The instructor's lab (seed 000 §6, seed 003 §6): what the twin of a
//! session is built from and how it is compared with the session. The
//! protocol's [`medallion_protocol::lab`] has the shapes; the
//! [`crate::Playground`] builds the twin (`playground/lab.rs`).
//!
//! - `twin_bronze`: the twin's bronze, the session's batches taken in with
//!   an ingest anti-pattern (`dropDuplicates`, a business filter), or
//!   rewritten after gold was published (the weekly fix job, the weekly
//!   DELETE request).
//! - `shortcut`: the two gold models that read bronze their own way.
//! - `compare`: row counts, gold side by side, measures and checks of the
//!   two sides.

pub mod compare;
pub mod events;
pub mod health;
pub mod shortcut;
pub mod twin_bronze;

pub use medallion_protocol::lab::*;

use crate::api::Lang;

/// A text the lab keeps in both languages (an event's outcome on the
/// timeline), so a language switch translates it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bi {
    pub en: String,
    pub ru: String,
}

impl Bi {
    pub fn new(en: String, ru: String) -> Self {
        Bi { en, ru }
    }

    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Ru => &self.ru,
        }
    }

    pub fn push(&mut self, more: Bi) {
        self.en.push_str(&more.en);
        self.ru.push_str(&more.ru);
    }
}

pub(crate) use crate::api::tr;

/// The column of a bronze table that holds an amount: `amount` (any case),
/// else the first column whose name contains it.
pub fn amount_column(b: &crate::model::BronzeTableDef) -> Option<String> {
    let names: Vec<&str> = b.schema.columns.iter().map(|c| c.name.as_str()).collect();
    names
        .iter()
        .find(|n| n.eq_ignore_ascii_case("amount"))
        .or_else(|| {
            names
                .iter()
                .find(|n| n.to_ascii_lowercase().contains("amount"))
        })
        .map(|n| n.to_string())
}

/// The word for `n` things in the session's language: `one` / `many` in
/// English; in Russian the form after `n` (`1 строка`, `2 строки`, `5 строк`).
pub(crate) fn plural(
    lang: Lang,
    n: usize,
    en: (&'static str, &'static str),
    ru: (&'static str, &'static str, &'static str),
) -> &'static str {
    match lang {
        Lang::En if n == 1 => en.0,
        Lang::En => en.1,
        Lang::Ru => match (n % 10, n % 100) {
            (1, h) if h != 11 => ru.0,
            (2..=4, h) if !(12..=14).contains(&h) => ru.1,
            _ => ru.2,
        },
    }
}

/// "rows" after `n`: `1 row`, `2 rows`; `1 строка`, `3 строки`, `5 строк`.
pub(crate) fn rows_word(lang: Lang, n: usize) -> &'static str {
    plural(lang, n, ("row", "rows"), ("строка", "строки", "строк"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn russian_plurals_follow_the_last_digits() {
        let ru = |n| rows_word(Lang::Ru, n);
        assert_eq!(
            [
                ru(1),
                ru(2),
                ru(5),
                ru(11),
                ru(12),
                ru(21),
                ru(22),
                ru(25),
                ru(111)
            ],
            [
                "строка",
                "строки",
                "строк",
                "строк",
                "строк",
                "строка",
                "строки",
                "строк",
                "строк"
            ]
        );
        assert_eq!(
            (rows_word(Lang::En, 1), rows_word(Lang::En, 0)),
            ("row", "rows")
        );
    }
}
