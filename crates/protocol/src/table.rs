//! Table names: a layer and a name, written `layer.name` (`bronze.orders`,
//! `silver.quarantine`, `gold.revenue_by_day`, `meta.session`).
//!
//! Everything that names a table across the engine's boundary uses
//! [`TableName`], never a `"bronze." + name` string: the JSON form is the
//! qualified text, read back with [`TableName::parse`], so a name without a
//! layer or with an unknown one is refused where it is read, with the reason.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The medallion layers (seed `003_d5c9e63b9bc06e62.txt` §1), plus `meta`
/// for the session's own state kept in the lake. JSON: `"bronze"`,
/// `"silver"`, `"gold"`, `"meta"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Bronze,
    Silver,
    Gold,
    Meta,
}

impl Layer {
    /// Every layer, in the order data flows.
    pub const ALL: [Layer; 4] = [Layer::Bronze, Layer::Silver, Layer::Gold, Layer::Meta];

    /// `bronze`, `silver`, `gold` or `meta`: the prefix of a qualified
    /// name and the top folder of the lake.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Bronze => "bronze",
            Layer::Silver => "silver",
            Layer::Gold => "gold",
            Layer::Meta => "meta",
        }
    }
}

impl Layer {
    /// The name within this layer of `text`, a table named in a request
    /// with or without its layer: `orders` for `bronze.orders` and for
    /// `orders` (the bronze layer's).
    pub fn unqualified(self, text: &str) -> &str {
        text.split_once('.')
            .filter(|(l, _)| l.eq_ignore_ascii_case(self.as_str()))
            .map_or(text, |(_, n)| n)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of the quarantine table (in silver).
pub const QUARANTINE: &str = "quarantine";

/// A table: its layer and its name within the layer. Displayed and written
/// in JSON as `layer.name`. Compared, hashed and ordered as that text, so
/// a map keyed by table names can be read with the text
/// (`history["silver.orders"]`).
#[derive(Debug, Clone)]
pub struct TableName {
    /// `layer.name`, the layer in lower case.
    qualified: String,
    layer: Layer,
}

impl PartialEq for TableName {
    fn eq(&self, other: &TableName) -> bool {
        self.qualified == other.qualified
    }
}

impl Eq for TableName {}

impl std::hash::Hash for TableName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.qualified.hash(state)
    }
}

impl PartialOrd for TableName {
    fn partial_cmp(&self, other: &TableName) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TableName {
    fn cmp(&self, other: &TableName) -> std::cmp::Ordering {
        self.qualified.cmp(&other.qualified)
    }
}

impl std::borrow::Borrow<str> for TableName {
    fn borrow(&self) -> &str {
        &self.qualified
    }
}

impl AsRef<str> for TableName {
    fn as_ref(&self) -> &str {
        &self.qualified
    }
}

/// Why a text is not a table name: [`TableName::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableNameError {
    /// The text as given.
    pub text: String,
}

impl fmt::Display for TableNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not a table name: write the layer, a dot and the table (bronze.orders, silver.orders, silver.quarantine, gold.revenue)",
            self.text
        )
    }
}

impl std::error::Error for TableNameError {}

impl TableName {
    /// `layer.name`. `name` is taken as given (the pipeline definition
    /// checks names when it is loaded).
    pub fn new(layer: Layer, name: impl AsRef<str>) -> TableName {
        TableName {
            qualified: format!("{}.{}", layer, name.as_ref()),
            layer,
        }
    }

    /// `bronze.{name}`.
    pub fn bronze(name: impl AsRef<str>) -> TableName {
        TableName::new(Layer::Bronze, name)
    }

    /// `silver.{name}`.
    pub fn silver(name: impl AsRef<str>) -> TableName {
        TableName::new(Layer::Silver, name)
    }

    /// `gold.{name}`.
    pub fn gold(name: impl AsRef<str>) -> TableName {
        TableName::new(Layer::Gold, name)
    }

    /// `meta.{name}`.
    pub fn meta(name: impl AsRef<str>) -> TableName {
        TableName::new(Layer::Meta, name)
    }

    /// `silver.quarantine`: rows a drop expectation or a failed conversion
    /// set aside (seed 002 §7).
    pub fn quarantine() -> TableName {
        TableName::silver(QUARANTINE)
    }

    /// Reads `layer.name`: the layer is one of [`Layer::ALL`] (any case),
    /// the name is not empty. The name may itself contain dots.
    ///
    /// # Errors
    /// [`TableNameError`] for a text without a dot, with an unknown layer
    /// or with nothing after the dot.
    pub fn parse(text: &str) -> Result<TableName, TableNameError> {
        let error = || TableNameError {
            text: text.to_string(),
        };
        let (layer, name) = text.trim().split_once('.').ok_or_else(error)?;
        let layer = Layer::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(layer))
            .ok_or_else(error)?;
        if name.is_empty() {
            return Err(error());
        }
        Ok(TableName::new(layer, name))
    }

    pub fn layer(&self) -> Layer {
        self.layer
    }

    /// The name within the layer: `orders` of `bronze.orders`.
    pub fn name(&self) -> &str {
        &self.qualified[self.layer.as_str().len() + 1..]
    }

    /// `layer.name`.
    pub fn as_str(&self) -> &str {
        &self.qualified
    }

    pub fn is_bronze(&self) -> bool {
        self.layer == Layer::Bronze
    }

    pub fn is_silver(&self) -> bool {
        self.layer == Layer::Silver
    }

    pub fn is_gold(&self) -> bool {
        self.layer == Layer::Gold
    }

    /// Is this `silver.quarantine`?
    pub fn is_quarantine(&self) -> bool {
        self.layer == Layer::Silver && self.name() == QUARANTINE
    }

    /// A silver table that is not the quarantine.
    pub fn is_silver_table(&self) -> bool {
        self.is_silver() && !self.is_quarantine()
    }

    /// The table's folder in the lake: `bronze/orders`.
    pub fn path(&self) -> String {
        format!("{}/{}", self.layer, self.name())
    }

    /// The table whose folder in the lake is `path` (`silver/orders`), if
    /// it is one: a known layer, a name without `/`.
    pub fn from_path(path: &str) -> Option<TableName> {
        let (layer, name) = path.split_once('/')?;
        let layer = Layer::ALL.into_iter().find(|l| l.as_str() == layer)?;
        (!name.is_empty() && !name.contains('/')).then(|| TableName::new(layer, name))
    }

    /// Does the qualified text `text` name this table?
    pub fn is(&self, text: &str) -> bool {
        self.qualified == text
    }
}

/// What a lookup by table accepts: a [`TableName`] or its qualified text
/// (`"silver.orders"`; text that is not a table name finds nothing).
pub trait IntoTableName {
    fn into_table_name(self) -> Option<TableName>;
}

impl IntoTableName for TableName {
    fn into_table_name(self) -> Option<TableName> {
        Some(self)
    }
}

impl IntoTableName for &TableName {
    fn into_table_name(self) -> Option<TableName> {
        Some(self.clone())
    }
}

impl IntoTableName for &str {
    fn into_table_name(self) -> Option<TableName> {
        TableName::parse(self).ok()
    }
}

impl IntoTableName for &String {
    fn into_table_name(self) -> Option<TableName> {
        TableName::parse(self).ok()
    }
}

impl PartialEq<&TableName> for TableName {
    fn eq(&self, other: &&TableName) -> bool {
        self == *other
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified)
    }
}

impl FromStr for TableName {
    type Err = TableNameError;

    fn from_str(s: &str) -> Result<TableName, TableNameError> {
        TableName::parse(s)
    }
}

impl PartialEq<str> for TableName {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for TableName {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}

impl PartialEq<String> for TableName {
    fn eq(&self, other: &String) -> bool {
        self.is(other)
    }
}

impl PartialEq<TableName> for String {
    fn eq(&self, other: &TableName) -> bool {
        other.is(self)
    }
}

impl PartialEq<TableName> for &str {
    fn eq(&self, other: &TableName) -> bool {
        other.is(self)
    }
}

impl Serialize for TableName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TableName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TableName, D::Error> {
        let text = String::deserialize(deserializer)?;
        TableName::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_display_and_json_round_trip() {
        let t = TableName::parse("silver.quarantine").unwrap();
        assert_eq!(t, TableName::quarantine());
        assert!(t.is_quarantine() && t.is_silver() && !t.is_silver_table());
        assert_eq!(t.to_string(), "silver.quarantine");
        assert_eq!(t.path(), "silver/quarantine");
        assert_eq!(TableName::from_path("silver/quarantine"), Some(t.clone()));
        assert_eq!(TableName::from_path("landing/x"), None);
        assert_eq!(TableName::from_path("bronze/a/b"), None);
        assert_eq!(
            TableName::parse("Bronze.a.b").unwrap(),
            TableName::bronze("a.b")
        );
        assert_eq!(
            serde_json::to_string(&TableName::gold("g")).unwrap(),
            "\"gold.g\""
        );
        let back: TableName = serde_json::from_str("\"meta.session\"").unwrap();
        assert_eq!(back, TableName::meta("session"));
        assert!(TableName::bronze("orders") == "bronze.orders");
        assert!(TableName::bronze("orders") != "silver.orders");
        let mut m = std::collections::BTreeMap::new();
        m.insert(TableName::silver("b"), 1);
        m.insert(TableName::bronze("z"), 2);
        assert_eq!(m["silver.b"], 1);
        assert_eq!(
            m.keys().map(TableName::as_str).collect::<Vec<_>>(),
            ["bronze.z", "silver.b"]
        );
        assert_eq!(Layer::Bronze.unqualified("bronze.orders"), "orders");
        assert_eq!(Layer::Bronze.unqualified("orders"), "orders");
        assert_eq!(Layer::Gold.unqualified("silver.orders"), "silver.orders");
    }

    #[test]
    fn a_name_without_a_known_layer_is_refused_with_the_reason() {
        for bad in ["orders", "silvr.orders", "silver.", ".orders", ""] {
            let e = TableName::parse(bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("'{bad}' is not a table name: write the layer, a dot and the table (bronze.orders, silver.orders, silver.quarantine, gold.revenue)")
            );
        }
        let e = serde_json::from_str::<TableName>("\"orders\"").unwrap_err();
        assert!(
            e.to_string().starts_with("'orders' is not a table name"),
            "{e}"
        );
    }
}
