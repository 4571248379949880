//! Editing the pipeline: a silver table's rule registry and a gold model's
//! SQL, each followed by a run (a failing one keeps the last good results).

use crate::error::{EngineError, Result};
use medallion_protocol::Layer;

use super::*;

impl Playground {
    /// Replaces the rules of `silver_table` (with or without `silver.`) and reruns.
    /// Invalid rules are kept (so they can be fixed) and reported next to their id.
    pub async fn set_rules(
        &mut self,
        silver_table: &str,
        rules: Vec<crate::silver::rules::Rule>,
    ) -> Result<()> {
        let name = Layer::Silver.unqualified(silver_table);
        let s = self
            .def
            .silver
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| EngineError::Request(format!("there is no silver table {name}")))?;
        s.rules.rules = rules;
        self.run().await;
        Ok(())
    }

    /// Replaces the SQL of gold model `model` (with or without `gold.`) and reruns.
    pub async fn set_gold_sql(&mut self, model: &str, sql: &str) -> Result<()> {
        let name = Layer::Gold.unqualified(model);
        let g = self
            .def
            .gold
            .iter_mut()
            .find(|g| g.name == name)
            .ok_or_else(|| EngineError::Request(format!("there is no gold model {name}")))?;
        g.sql = sql.to_string();
        self.run().await;
        Ok(())
    }
}
