//! The five signs of a healthy medallion (seed 003 §8), for the session or its twin.

use super::*;

impl Playground {
    /// The five signs of a healthy medallion for this playground (the
    /// session, or a twin: `twin` gives the records its ingest left out and
    /// the anti-patterns that did it; it ran `reruns` times more than once).
    pub(super) async fn health(&self, twin: Option<&Twin>, reruns: usize) -> Vec<SignState> {
        let lang = self.lang;
        let out = self.last_good.as_ref();
        let mut lost: Vec<(TableName, usize, String)> = Vec::new();
        for b in &self.def.bronze {
            let t = TableName::bronze(&b.name);
            let dropped: usize = self
                .batches
                .iter()
                .filter(|i| i.table == b.name)
                .map(|i| i.dropped_records)
                .sum();
            if dropped > 0 {
                lost.push((t.clone(), dropped, "DROPMALFORMED".into()));
            }
            if let Some(left_out) = twin.map(|t| &t.left_out) {
                let n: usize = left_out.values().filter_map(|m| m.get(&b.name)).sum();
                if n > 0 {
                    let how: Vec<&str> = left_out
                        .iter()
                        .filter(|(_, m)| m.get(&b.name).is_some_and(|k| *k > 0))
                        .map(|(a, _)| a.key())
                        .collect();
                    lost.push((t, n, how.join(", ")));
                }
            }
        }
        let mut gold = Vec::new();
        let mut lineage = Vec::new();
        for s in &self.def.silver {
            let t = TableName::silver(&s.name);
            let mut inputs = vec![TableName::bronze(&s.source).to_string()];
            inputs.extend(
                s.rules
                    .rules
                    .iter()
                    .filter_map(|r| r.lookup.as_ref().map(|l| l.table.to_string())),
            );
            let known = if self.def.bronze_table(&s.source).is_some() {
                Ok(inputs)
            } else {
                Err(tr(
                    lang,
                    format!(
                        "reads {}, which does not exist",
                        TableName::bronze(&s.source)
                    ),
                    format!("читает {}, которой нет", TableName::bronze(&s.source)),
                ))
            };
            lineage.push((t.clone(), known, !self.history.versions(&t).is_empty()));
        }
        for g in &self.def.gold {
            let t = TableName::gold(&g.name);
            if let Some(b) = out.and_then(|o| o.table(&t)) {
                gold.push((
                    t.clone(),
                    b.schema(),
                    crate::gold::key_columns(&self.ctx, g).await,
                ));
            }
            lineage.push((
                t.clone(),
                crate::gold::inputs(&self.ctx, &g.sql).await,
                !self.history.versions(&t).is_empty(),
            ));
        }
        if let Some(t) = twin {
            for (j, _, _) in &t.joined {
                lineage.push((
                    TableName::bronze(&j.facts),
                    Err(tr(
                        lang,
                        format!("its {} come from a JOIN with {} at ingest, which no log of bronze records", j.columns.join(", "), j.lookup),
                        format!("его {} пришли из JOIN с {} при загрузке, который не записан ни в одном журнале bronze", j.columns.join(", "), j.lookup),
                    )),
                    true,
                ));
            }
        }
        let published = twin.and_then(|t| t.published.as_ref());
        let join_replay = twin.and_then(|t| t.join_replay.as_ref());
        let rebuild_differs = if let Some(p) = published {
            Some(Ok(gold_differs(&self.def, p, self)))
        } else if let Some(r) = join_replay {
            Some(Ok(gold_differs(&self.def, self, r)))
        } else if self.mode == RunMode::Full
            && reruns == 0
            && self.def.gold.iter().all(|g| g.merge_on.is_empty())
        {
            None
        } else {
            match self
                .replay_copy_boxed(self.def.clone(), self.bronze.clone())
                .await
            {
                Ok(fresh) => Some(Ok(gold_differs(&self.def, self, &fresh))),
                Err(why) => Some(Err(why)),
            }
        };
        evaluate(&HealthFacts {
            lang,
            bronze_records: self
                .bronze
                .values()
                .flatten()
                .map(|(_, r)| r.num_rows())
                .sum(),
            lost,
            erased: self.batches.iter().map(|b| b.erased_records).sum(),
            reads_bronze: {
                let mut r = out.map(|o| o.gold_reads_bronze.clone()).unwrap_or_default();
                if let Some(t) = twin {
                    r.extend(t.shortcut_reads.clone());
                }
                r
            },
            gold,
            rebuild_differs,
            rebuild_against_published: published.is_some(),
            rebuild_by_join: join_replay.is_some(),
            overwritten: twin.map_or(0, |t| t.overwritten),
            lineage,
        })
    }
}

/// Gold tables of `def` whose rows differ between `a` and `b` (last good
/// runs), with the number of rows that differ (a multiset diff).
fn gold_differs(def: &PipelineDef, a: &Playground, b: &Playground) -> Vec<(TableName, usize)> {
    let mut differs = Vec::new();
    for g in &def.gold {
        let t = TableName::gold(&g.name);
        let (x, y) = (
            a.last_good.as_ref().and_then(|o| o.table(&t)),
            b.last_good.as_ref().and_then(|o| o.table(&t)),
        );
        if let (Some(x), Some(y)) = (x, y) {
            // A changed row is one out and one in: count it once.
            let n = crate::lake::versions::row_diff(x, y)
                .map(|(p, q)| p.max(q))
                .unwrap_or(usize::MAX);
            if n > 0 {
                differs.push((t, n));
            }
        }
    }
    differs
}
