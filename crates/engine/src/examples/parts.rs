//! What the bundled definitions are written with: texts in both
//! languages, rules, and the files an example ingests.

use crate::api::Lang;
use crate::model::{CheckDef, CheckKind, CheckLevel};
use crate::silver::rules::{Rule, RuleKind};

/// `(bronze table, file name, bytes)` of a scenario.
pub type ExampleFile = (&'static str, &'static str, &'static [u8]);

/// A text in both languages.
pub(crate) struct Tr {
    pub en: &'static str,
    pub ru: &'static str,
}

/// Sets a normalization's declared type.
pub(crate) fn typed(mut r: Rule, ty: &str) -> Rule {
    r.cast = ty.parse().ok();
    r
}

pub(crate) fn tr(lang: Lang, t: Tr) -> String {
    match lang {
        Lang::En => t.en,
        Lang::Ru => t.ru,
    }
    .to_string()
}

/// A check of `level` with its description in `lang` and the default severity.
pub(crate) fn check(lang: Lang, id: &str, level: CheckLevel, d: Tr, kind: CheckKind) -> CheckDef {
    CheckDef {
        id: id.into(),
        level,
        description: tr(lang, d),
        kind,
        severity: Default::default(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn rule(
    lang: Lang,
    id: &str,
    kind: RuleKind,
    column: &str,
    expression: &str,
    enabled: bool,
    why: Tr,
) -> Rule {
    Rule {
        id: id.into(),
        kind,
        column: column.into(),
        expression: expression.into(),
        params: vec![],
        lookup: None,
        enabled,
        rationale: tr(lang, why),
        action: None,
        cast: None,
    }
}
