//! The comparison of the session and its twin: counts, gold side by side,
//! and what exposes each anti-pattern.

use super::*;

impl Playground {
    /// Fills `view` with the comparison of this session and `twin`.
    pub(super) async fn compare_twin(&self, t: &Twin, view: &mut LabView) -> Result<()> {
        let (twin, left_out) = (&t.twin, &t.left_out);
        let lang = self.lang;
        let mine = self.row_counts();
        let theirs = twin.row_counts();
        let mut names: Vec<TableName> = self
            .def
            .bronze
            .iter()
            .map(|b| TableName::bronze(&b.name))
            .collect();
        names.extend(self.def.silver.iter().map(|s| TableName::silver(&s.name)));
        names.push(TableName::quarantine());
        names.extend(self.def.gold.iter().map(|g| TableName::gold(&g.name)));
        view.counts = names
            .iter()
            .map(|t| LabCount {
                table: t.clone(),
                correct: if t.is_bronze() {
                    self.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    mine.get(t).copied()
                },
                anti: if t.is_bronze() {
                    twin.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    theirs.get(t).copied()
                },
            })
            .collect();
        for g in &self.def.gold {
            let name = TableName::gold(&g.name);
            let key = crate::gold::key_columns(&self.ctx, g).await;
            let error = crate::api::diagnostics_for(twin.diagnostics.iter(), "gold", &g.name)
                .or_else(|| crate::api::diagnostics_for(self.diagnostics.iter(), "gold", &g.name));
            view.gold.push(compare_gold(
                name.clone(),
                &key,
                self.last_good.as_ref().and_then(|o| o.table(&name)),
                twin.last_good.as_ref().and_then(|o| o.table(&name)),
                error,
            )?);
        }
        view.checks = compare_checks(&self.checks, &twin.checks);
        view.findings = self.findings(view, left_out, twin, lang);
        if let Some(published) = &t.published {
            view.findings
                .extend(Box::pin(self.rewrite_findings(t, published)).await?);
        }
        if self.lab.has(AntiPattern::JoinAtIngest) {
            view.findings.extend(self.join_findings(t));
        }
        if self.lab.has(AntiPattern::Shortcut) {
            let (gold, found) = Box::pin(self.shortcut(twin)).await?;
            view.gold.extend(gold);
            view.findings.extend(found);
        }
        Ok(())
    }

    /// What the rewrite of the twin's bronze did: the fix job's UPDATEs and
    /// DELETEs, the weekly DELETE's customer, and each gold model as it was
    /// published against what a replay of the rewritten bronze gives.
    pub(super) async fn rewrite_findings(
        &self,
        t: &Twin,
        published: &Playground,
    ) -> Result<Vec<String>> {
        let lang = self.lang;
        let mut out = Vec::new();
        if self.lab.has(AntiPattern::FixJobInBronze) {
            for (table, f) in t.fixed.iter().filter(|(_, f)| f.updated + f.deleted > 0) {
                let b = TableName::bronze(table);
                out.push(tr(
                    lang,
                    format!("{b}: the weekly fix job rewrote {} {} the source sent: {} UPDATEd in place (the minus of a negative amount dropped), {} DELETEd (the other records silver rejected). The quarantine no longer shows them and the source's originals exist nowhere.", f.updated + f.deleted, if f.updated + f.deleted == 1 { "record" } else { "records" }, f.updated, f.deleted),
                    format!("{b}: еженедельная джоба «исправления» переписала {} присланных записей: {} изменены UPDATE на месте (у отрицательной суммы убран минус), {} удалены DELETE (прочие отклонённые silver записи). В карантине их больше нет, а оригиналов источника нет нигде.", f.updated + f.deleted, f.updated, f.deleted),
                ));
            }
            if t.fixed.values().all(|f| f.updated + f.deleted == 0)
                && !self.rejected_events(None).is_empty()
            {
                out.push(tr(
                    lang,
                    "The weekly fix job finds nothing to fix in the twin: the records silver rejected were already kept out of its bronze by another switch (the filter at ingest, DROPMALFORMED).".into(),
                    "Еженедельной джобе «исправления» в двойнике нечего править: отклонённые silver записи уже не пустил в bronze другой переключатель (фильтр при загрузке, DROPMALFORMED).".into(),
                ));
            } else if t.fixed.values().all(|f| f.updated + f.deleted == 0) {
                out.push(tr(
                    lang,
                    "The weekly fix job finds nothing to fix here: silver rejects no record of this scenario (send a business error, amount = -100, to give it one).".into(),
                    "Еженедельной джобе «исправления» здесь нечего править: silver не отклоняет ни одной записи этого сценария (пришлите бизнес-ошибку, amount = -100).".into(),
                ));
            }
        }
        if self.lab.has(AntiPattern::WeeklyDelete) {
            match &t.deleted_customer {
                Some((column, value)) => {
                    let value = if value.parse::<f64>().is_ok() {
                        value.clone()
                    } else {
                        format!("'{}'", value.replace('\'', "''"))
                    };
                    let n = t.left_out.get(&AntiPattern::WeeklyDelete);
                    let tables: Vec<String> = n
                        .into_iter()
                        .flatten()
                        .filter(|(_, n)| **n > 0)
                        .map(|(table, n)| format!("{} ({n})", TableName::bronze(table)))
                        .collect();
                    out.push(tr(
                        lang,
                        format!("The weekly DELETE … WHERE {column} = {value} removed that customer's records from {}: bronze became a mutable database, its versions before the DELETE no longer match any replay, and the history is gone for every purpose, not only the one the law names. Tokenization or crypto-shredding (PII panel) forget the person without touching bronze.", tables.join(", ")),
                        format!("Еженедельный DELETE … WHERE {column} = {value} удалил записи этого клиента из {}: bronze стал изменяемой базой, его версии до DELETE больше не совпадают ни с одним replay, а история потеряна для всех целей, а не только той, что требует закон. Токенизация или crypto-shredding (панель PII) забывают человека, не трогая bronze.", tables.join(", ")),
                    ));
                }
                None => out.push(tr(
                    lang,
                    "The weekly DELETE request needs a customer column (user_id, customer_id) in bronze: load the Kafka orders scenario.".into(),
                    "Еженедельному DELETE нужна колонка клиента (user_id, customer_id) в bronze: загрузите сценарий заказов из Kafka.".into(),
                )),
            }
        }
        for g in &self.def.gold {
            let name = TableName::gold(&g.name);
            let key = crate::gold::key_columns(&self.ctx, g).await;
            let was = compare_gold(
                name.clone(),
                &key,
                published.last_good.as_ref().and_then(|o| o.table(&name)),
                t.twin.last_good.as_ref().and_then(|o| o.table(&name)),
                None,
            )?;
            if was.changed_rows == 0 {
                continue;
            }
            let totals: Vec<String> = was
                .measures
                .iter()
                .filter(|m| m.correct != m.anti)
                .map(|m| format!("Σ {} {} → {}", m.column, m.correct, m.anti))
                .collect();
            let totals = if totals.is_empty() {
                String::new()
            } else {
                format!(" ({})", totals.join(", "))
            };
            out.push(tr(
                lang,
                format!("{name}: the version published before bronze was rewritten and a replay of today's bronze differ in {} {}{totals}: last period's report can no longer be reproduced.", was.changed_rows, rows_word(lang, was.changed_rows)),
                format!("{name}: версия, опубликованная до переписывания bronze, и replay сегодняшнего bronze расходятся (строк: {}){totals}: отчёт за прошлый период больше не воспроизвести.", was.changed_rows),
            ));
        }
        Ok(out)
    }

    /// What the JOIN at ingest stored in bronze, and what a lookup change did to it.
    pub(super) fn join_findings(&self, t: &Twin) -> Vec<String> {
        let lang = self.lang;
        let typed: Vec<String> = self
            .ingest_joins()
            .iter()
            .filter(|j| {
                self.def
                    .bronze_table(&j.facts)
                    .is_some_and(|b| b.mode != crate::model::BronzeMode::Raw)
            })
            .map(|j| TableName::bronze(&j.facts).to_string())
            .collect();
        if t.joined.is_empty() && !typed.is_empty() {
            let b = typed.join(", ");
            return vec![tr(
                lang,
                format!("{b} is stored typed here (its columns, not the record's text), so the bronze job has no raw record to write the looked-up columns into: the JOIN at ingest is shown on raw bronze (load the Kafka orders scenario)."),
                format!("{b} здесь хранится типизированно (колонками, а не текстом записи), поэтому bronze-джобе некуда записать колонки справочника: JOIN при загрузке показан на сыром bronze (загрузите сценарий заказов из Kafka)."),
            )];
        }
        if t.joined.is_empty() {
            return vec![tr(
                lang,
                "No silver rule of this scenario looks a table up with a plain key (a = alias.b), so there is no join to move into bronze: load the Kafka orders scenario.".into(),
                "Ни одно правило silver этого сценария не обращается к справочнику по простому ключу (a = alias.b), переносить в bronze нечего: загрузите сценарий заказов из Kafka.".into(),
            )];
        }
        t.joined
            .iter()
            .map(|(j, n, stale)| {
                let b = TableName::bronze(&j.facts);
                let fields: Vec<String> = j.columns.iter().map(|c| j.field(c)).collect();
                let (cols, fields) = (j.columns.join(", "), fields.join(", "));
                let l = &j.lookup;
                if *stale > 0 {
                    tr(
                        lang,
                        format!("{b}: the bronze job joined its {n} records with {l} at ingest and stored {cols} in them ({fields}). {stale} of them hold values {l} no longer has: yesterday's bronze kept the old meaning, a replay of the ingest today would store the new one, and the lineage of {b} now runs through {l}."),
                        format!("{b}: bronze-джоба при загрузке соединила его {n} записей с {l} и сохранила в них {cols} ({fields}). В {stale} из них значения, которых в {l} больше нет: вчерашний bronze сохранил старый смысл, replay загрузки сегодня записал бы новый, а lineage {b} теперь идёт через {l}."),
                    )
                } else {
                    tr(
                        lang,
                        format!("{b}: the bronze job joined its {n} records with {l} at ingest and stored {cols} in them ({fields}). Today they match {l}; let it change (Events: a dimension changes) and yesterday's bronze keeps the old values while silver's lookup moves on."),
                        format!("{b}: bronze-джоба при загрузке соединила его {n} записей с {l} и сохранила в них {cols} ({fields}). Сегодня они совпадают с {l}; пусть он изменится (События: измерение меняется) — и вчерашний bronze сохранит старые значения, а lookup в silver пойдёт дальше."),
                    )
                }
            })
            .collect()
    }

    /// The shortcut's two gold models, each over the twin's bronze, side
    /// by side with the same measure over the session's silver, and how
    /// far they disagree.
    pub(super) async fn shortcut(
        &self,
        twin: &Playground,
    ) -> Result<(Vec<crate::lab::LabGold>, Vec<String>)> {
        let lang = self.lang;
        let Some(sc) = crate::lab::shortcut::models(&self.def, |t| self.decimal_of(t)) else {
            return Ok((vec![], vec![tr(
                lang,
                "The shortcut needs a bronze table with an amount column and a business key, stored raw from CSV or JSON (or typed): load the Kafka orders scenario.".into(),
                "Для shortcut нужна таблица bronze с колонкой суммы и бизнес-ключом, сырая из CSV или JSON (или типизированная): загрузите сценарий заказов из Kafka.".into(),
            )]));
        };
        let one = |ctx: &datafusion::prelude::SessionContext, sql: String| {
            let ctx = ctx.clone();
            async move {
                let df = ctx.sql(&sql).await?;
                let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
                let batches = df.collect().await?;
                Ok::<_, EngineError>(crate::lake::concat_batches(&schema, &batches)?)
            }
        };
        let truth = match one(&self.ctx, sc.silver_sql[0].clone()).await {
            Ok(t) => t,
            Err(_) => one(&self.ctx, sc.silver_sql[1].clone()).await?,
        };
        // Bronze's records as the declared schema parses them, in arrival order.
        let parsed = twin
            .last_good
            .as_ref()
            .and_then(|o| o.typed_bronze.get(&sc.table))
            .cloned()
            .ok_or_else(|| {
                EngineError::Internal(format!("the twin has no parsed bronze.{}", sc.table))
            })?;
        let arrival: datafusion::arrow::array::ArrayRef = std::sync::Arc::new(
            datafusion::arrow::array::Int64Array::from_iter_values(0..parsed.num_rows() as i64),
        );
        let mut fields: Vec<datafusion::arrow::datatypes::FieldRef> =
            parsed.schema().fields().iter().cloned().collect();
        fields.push(std::sync::Arc::new(
            datafusion::arrow::datatypes::Field::new(
                "_arrival",
                datafusion::arrow::datatypes::DataType::Int64,
                false,
            ),
        ));
        let mut columns = parsed.columns().to_vec();
        columns.push(arrival);
        let source = RecordBatch::try_new(
            std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
            columns,
        )?;
        let _ = twin.ctx.deregister_table(crate::lab::shortcut::SOURCE);
        twin.ctx
            .register_batch(crate::lab::shortcut::SOURCE, source)
            .map_err(EngineError::from)?;
        let mut gold = Vec::new();
        // Per model: its (records, total) as text.
        let mut figures: Vec<(String, Option<(String, String)>)> = Vec::new();
        let mut silver_says = None;
        for (name, sql) in &sc.models {
            let (rows, error) = match one(&twin.ctx, sql.clone()).await {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let g = compare_gold(
                TableName::gold(name),
                &[],
                Some(&truth),
                rows.as_ref(),
                error,
            )?;
            let m = |side: bool| -> Option<String> {
                let v: Vec<String> = ["records", "total"]
                    .iter()
                    .map(|c| {
                        g.measures.iter().find(|m| m.column == *c).map(|m| {
                            if side {
                                m.anti.clone()
                            } else {
                                m.correct.clone()
                            }
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(v.join("\u{1f}"))
            };
            silver_says = silver_says.or_else(|| m(false));
            figures.push((
                name.clone(),
                m(true).and_then(|v| {
                    v.split_once('\u{1f}')
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                }),
            ));
            gold.push(g);
        }
        let mut found = Vec::new();
        let truth = silver_says
            .as_deref()
            .and_then(|v| v.split_once('\u{1f}'))
            .map(|(a, b)| (a.to_string(), b.to_string()));
        if let ([(a, Some((ra, ta))), (b, Some((rb, tb)))], Some((rs, ts))) =
            (figures.as_slice(), truth)
        {
            // The gap as a share of the second model's figure; none when it is 0 or NULL.
            let pct = |x: &str, y: &str| match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(x), Ok(y)) if y != 0.0 => {
                    format!(" ({:.1}%)", (x - y).abs() / y.abs() * 100.0)
                }
                _ => String::new(),
            };
            let (t, k, amount) = (TableName::bronze(&sc.table), &sc.key, &sc.amount);
            let s = TableName::silver(&sc.silver);
            let mut apart = Vec::new();
            if ta != tb {
                apart.push(tr(
                    lang,
                    format!("Σ {amount} {ta} against {tb}{}", pct(ta, tb)),
                    format!("Σ {amount} {ta} против {tb}{}", pct(ta, tb)),
                ));
            }
            if ra != rb {
                apart.push(tr(
                    lang,
                    format!("{ra} records against {rb}{}", pct(ra, rb)),
                    format!("записей: {ra} против {rb}{}", pct(ra, rb)),
                ));
            }
            found.push(if apart.is_empty() {
                tr(lang, format!("gold.{a} and gold.{b} both read {t}, each with its own cleaning, and agree today (Σ {amount} {ta}, {ra} records); silver ({s}) says {ts} over {rs}. Send a business error or re-send a file (Events) and watch them drift apart."), format!("gold.{a} и gold.{b} обе читают {t}, каждая со своей очисткой, и сегодня совпадают (Σ {amount} {ta}, записей {ra}); silver ({s}) говорит {ts} по {rs}. Пришлите бизнес-ошибку или файл повторно (События) — и они разойдутся."))
            } else {
                tr(lang, format!("Two gold models read {t} and clean it their own way: gold.{a} keeps distinct payloads, gold.{b} the newest record of each {k} with {amount} > 0. They disagree: {}. Silver, the one cleaned source ({s}), says Σ {amount} {ts} over {rs} records. Which dashboard is right? Nobody can tell.", apart.join(", ")), format!("Две gold-модели читают {t} и чистят его каждая по-своему: gold.{a} оставляет различные payload, gold.{b} — последнюю запись каждого {k} с {amount} > 0. Они расходятся: {}. Silver, единственный очищенный источник ({s}), говорит Σ {amount} {ts} по {rs} записям. Какая витрина права? Никто не знает.", apart.join(", ")))
            });
        }
        Ok((gold, found))
    }

    /// What monolithic silver did with the last failed silver job: the
    /// twin's whole run stopped, the session held back only what reads the
    /// failed table (from its last run's `not_refreshed`).
    pub(super) fn monolithic_finding(&self, twin: &Playground, lang: Lang) -> String {
        let Some(f) = &self.lab.job_failed else {
            return tr(
                lang,
                "One job builds every silver table in the twin. Fire \"A silver job fails halfway\" (Events): one table's failure then stops all of them.".into(),
                "В двойнике все таблицы silver строит одна джоба. Нажмите «Джоба silver падает на полпути» (События): сбой одной таблицы остановит их все.".into(),
            );
        };
        let t = TableName::silver(&f.table);
        let waiting: Vec<TableName> = self
            .last_good
            .as_ref()
            .map(|o| o.not_refreshed.clone())
            .unwrap_or_default();
        let gold_waiting = waiting.iter().filter(|w| w.is_gold()).count();
        let (silver_n, gold_n) = (self.def.silver.len(), self.def.gold.len());
        let names = |v: &[TableName]| {
            v.iter()
                .map(TableName::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let fresh: Vec<TableName> = self
            .def
            .silver
            .iter()
            .map(|s| TableName::silver(&s.name))
            .chain(self.def.gold.iter().map(|g| TableName::gold(&g.name)))
            .filter(|n| !waiting.contains(n))
            .collect();
        let stopped = !twin.run_info.ok
            && twin
                .last_good
                .as_ref()
                .is_some_and(|o| o.not_refreshed.is_empty());
        let (w, fr) = (names(&waiting), names(&fresh));
        match (stopped, fresh.is_empty()) {
            (true, false) => tr(
                lang,
                format!("The job of {t} failed. Monolithic silver: the whole run stopped, and no silver table ({silver_n}) and no gold model was refreshed (gold models waiting for the retry: {gold_n} of {gold_n}). With independent jobs only these wait: {w} (gold models: {gold_waiting} of {gold_n}); up to date: {fr}."),
                format!("Джоба {t} упала. Монолитный silver: остановился весь запуск, не обновилась ни одна таблица silver ({silver_n}) и ни одна gold-модель (gold-моделей ждут повтора: {gold_n} из {gold_n}). С независимыми джобами ждут только: {w} (gold-моделей: {gold_waiting} из {gold_n}); актуальны: {fr}."),
            ),
            (true, true) => tr(
                lang,
                format!("The job of {t} failed and the whole monolithic run stopped; here every table reads {t}, so the independent jobs wait too."),
                format!("Джоба {t} упала, и весь монолитный запуск остановился; здесь каждая таблица читает {t}, поэтому независимые джобы тоже ждут."),
            ),
            (false, _) => tr(
                lang,
                format!("The job of {t} failed; the twin's run did not stop as a whole (see its error)."),
                format!("Джоба {t} упала; запуск двойника не остановился целиком (см. его ошибку)."),
            ),
        }
    }

    /// What exposes each anti-pattern that is on, from the figures compared.
    pub(super) fn findings(
        &self,
        view: &LabView,
        left_out: &LeftOut,
        twin: &Playground,
        lang: Lang,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let count = |t: &TableName| view.counts.iter().find(|c| &c.table == t);
        for a in &view.on {
            match a {
                AntiPattern::OverwritePartition | AntiPattern::DropMalformed => {
                    for b in &self.def.bronze {
                        let t = TableName::bronze(&b.name);
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
                        let Some(c) = count(&t) else { continue };
                        let (sent, kept) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                        if *a == AntiPattern::DropMalformed {
                            if n > 0 {
                                out.push(tr(
                                    lang,
                                    format!("{t}: DROPMALFORMED dropped {n} of {sent} records that did not fit the declared schema; bronze holds {kept}. With PERMISSIVE they stay, with their reason, and reach the quarantine."),
                                    format!("{t}: DROPMALFORMED отбросил {n} из {sent} записей, не подошедших к объявленной схеме; в bronze {kept}. С PERMISSIVE они остаются вместе с причиной и попадают в карантин."),
                                ));
                            }
                            continue;
                        }
                        let batches =
                            |p: &Playground| p.batches.iter().filter(|i| i.table == b.name).count();
                        let (mine, theirs) = (batches(self), batches(twin));
                        if mine > theirs {
                            out.push(tr(
                                lang,
                                format!("{t}: {} of its {mine} batches {} overwritten by a later batch of the same day; {} {n} {} gone ({sent} → {kept}). Time travel to the versions {} made and a replay of that day can only show the last batch.", mine - theirs, if mine - theirs == 1 { "was" } else { "were" }, if mine - theirs == 1 { "its" } else { "their" }, if n == 1 { "record is" } else { "records are" }, if mine - theirs == 1 { "it" } else { "they" }),
                                format!("{t}: {} из {mine} батчей {} более поздним батчем того же дня; записей из них больше нет: {n} ({sent} → {kept}). Time travel к их версиям и replay этого дня покажут только последний батч.", mine - theirs, if (mine - theirs) % 10 == 1 && (mine - theirs) % 100 != 11 { "перезаписан" } else { "перезаписаны" }),
                            ));
                        }
                    }
                    if *a == AntiPattern::OverwritePartition
                        && !out
                            .iter()
                            .any(|f| f.contains("overwritten") || f.contains("перезаписаны"))
                    {
                        out.push(tr(
                            lang,
                            "Every bronze table has one batch a day so far, so nothing is overwritten yet: drop a second file on a bronze table (or load the landing-zone retry scenario).".into(),
                            "Пока у каждой таблицы bronze один батч в день, перезаписывать нечего: добавьте второй файл в таблицу bronze (или загрузите сценарий с повторной выгрузкой).".into(),
                        ));
                    }
                }
                AntiPattern::DedupAtIngest | AntiPattern::FilterAtIngest => {
                    for b in &self.def.bronze {
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
                        let Some(c) = count(&TableName::bronze(&b.name)) else {
                            continue;
                        };
                        // This switch's own effect, whatever the others left out.
                        let sent = c.correct.unwrap_or(0);
                        let kept = sent.saturating_sub(n);
                        if n == 0 {
                            continue;
                        }
                        let t = TableName::bronze(&b.name);
                        out.push(match a {
                            AntiPattern::DedupAtIngest => tr(
                                lang,
                                format!("{t}: the source sent {sent} {}, bronze with dropDuplicates holds {kept}. {} (re-deliveries, later changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known.", if sent == 1 { "record" } else { "records" }, if n == 1 { "The one dropped".to_string() } else { format!("The {n} dropped") }),
                                format!("{t}: источник прислал {sent} записей, bronze с dropDuplicates хранит {kept}. {n} отброшенных (повторные доставки, последующие изменения ключа) не учесть при сверке, не переиграть и не проверить: что прислал источник, больше неизвестно."),
                            ),
                            _ => tr(
                                lang,
                                format!("{t}: {n} of the {sent} records the source sent failed a business rule and {} never written. An audit query over bronze for them finds 0 rows (the correct bronze: {n}); a rule relaxed later cannot bring them back by replay.", if n == 1 { "was" } else { "were" }),
                                format!("{t}: из {sent} присланных записей бизнес-правило не прошли и не записаны {n}. Аудит-запрос к bronze находит 0 строк (в правильном bronze: {n}); ослабленное позже правило не вернёт их через replay."),
                            ),
                        });
                    }
                    if *a == AntiPattern::FilterAtIngest {
                        if let Some(q) = count(&TableName::quarantine()) {
                            if q.correct != q.anti {
                                out.push(tr(
                                    lang,
                                    format!("silver.quarantine: open rows: {} in the correct pipeline, {} with the filter at ingest: nobody sees what was rejected, or why.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                    format!("silver.quarantine: открытых строк в правильном пайплайне — {}, с фильтром при загрузке — {}: никто не видит, что отброшено и почему.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                ));
                            }
                        }
                    }
                }
                // Their findings come from the twin as published (`rewrite_findings`) and the shortcut's models.
                AntiPattern::FixJobInBronze
                | AntiPattern::WeeklyDelete
                | AntiPattern::Shortcut
                | AntiPattern::JoinAtIngest => {}
                AntiPattern::MonolithicSilver => out.push(self.monolithic_finding(twin, lang)),
                AntiPattern::InsertInsteadOfMerge => {
                    let reruns = self.lab.reruns();
                    let merged = self.inserted_tables();
                    let again: Vec<String> = crate::lab::twin_bronze::repeated(&self.batches)
                        .iter()
                        .filter_map(|id| self.batches.iter().find(|b| &b.batch_id == id))
                        .filter(|b| {
                            merged.iter().any(|t| {
                                self.def.silver.iter().any(|s| {
                                    TableName::silver(&s.name) == *t && s.source == b.table
                                })
                            })
                        })
                        .map(|b| b.file_name.clone())
                        .collect();
                    if merged.is_empty() {
                        out.push(tr(
                            lang,
                            "No silver table of this scenario is written by MERGE, so INSERT changes nothing here: load the Kafka orders scenario.".into(),
                            "В этом сценарии нет таблиц silver, которые пишутся через MERGE, поэтому INSERT здесь ничего не меняет: загрузите сценарий заказов из Kafka.".into(),
                        ));
                    } else if reruns == 0 && !again.is_empty() {
                        let files = again.join(", ");
                        for t in &merged {
                            if let Some(c) = count(t) {
                                let (m, i) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                                out.push(tr(
                                    lang,
                                    format!("{t}: {m} rows with MERGE, {i} with INSERT: what the source delivered again ({files}) was inserted again; MERGE matched it to the rows it repeats."),
                                    format!("{t}: строк с MERGE — {m}, с INSERT — {i}: то, что источник доставил повторно ({files}), вставлено ещё раз; MERGE сопоставил это со строками, которые оно повторяет."),
                                ));
                            }
                        }
                    } else if reruns == 0 {
                        let names = merged
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", ");
                        out.push(tr(
                            lang,
                            format!("One run of the job gives the same silver with INSERT INTO ({names}) as with MERGE. Now let the orchestrator re-run the job (Events): INSERT appends the same rows again, MERGE changes nothing."),
                            format!("Один запуск джобы даёт тот же silver с INSERT INTO ({names}), что и с MERGE. Теперь пусть оркестратор перезапустит джобу (События): INSERT допишет те же строки ещё раз, MERGE ничего не изменит."),
                        ));
                    } else {
                        for t in &merged {
                            if let Some(c) = count(t) {
                                // The first run, one per batch delivered again, the re-runs.
                                let (m, i, runs) = (
                                    c.correct.unwrap_or(0),
                                    c.anti.unwrap_or(0),
                                    reruns + 1 + again.len(),
                                );
                                // INSERT appends the same rows each run: one run's share.
                                let per_run = i / runs;
                                out.push(if i > m || (per_run > 0 && i == per_run * runs && runs > 1) {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job ({per_run} each run): every re-run appended the same rows again."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы (по {per_run} за запуск): каждый перезапуск дописал те же строки ещё раз."),
                                    )
                                } else {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы."),
                                    )
                                });
                            }
                        }
                    }
                }
            }
        }
        for a in &view.on {
            let none = left_out.get(a).is_some_and(|m| m.values().all(|n| *n == 0));
            let why = match a {
                AntiPattern::DedupAtIngest => Some(tr(lang, "dropDuplicates at ingest changes nothing here: no two records of a bronze table share a business key (re-send a file or let the Kafka consumer crash to see it).".into(), "dropDuplicates при загрузке здесь ничего не меняет: ни у каких двух записей таблицы bronze нет общего бизнес-ключа (пришлите файл повторно или уроните консьюмер Kafka, чтобы увидеть эффект).".into())),
                AntiPattern::FilterAtIngest => Some(tr(lang, "The business filter at ingest changes nothing here: silver's rules reject no record of this scenario (send a business error to see it).".into(), "Бизнес-фильтр при загрузке здесь ничего не меняет: правила silver не отклоняют ни одной записи этого сценария (пришлите бизнес-ошибку, чтобы увидеть эффект).".into())),
                AntiPattern::DropMalformed => Some(tr(lang, "DROPMALFORMED changes nothing here: every record fits the declared schema; the records silver rejects fail its rules (a cast, an expectation), which a read mode does not apply. Load the e-commerce scenario, whose files have records that do not fit.".into(), "DROPMALFORMED здесь ничего не меняет: каждая запись подходит к объявленной схеме; записи, которые отклоняет silver, не проходят его правила (приведение типа, ожидание), а режим чтения их не применяет. Загрузите сценарий e-commerce — там есть неподходящие записи.".into())),
                _ => None,
            };
            if let (true, Some(why)) = (none, why) {
                out.push(why);
            }
        }
        for g in &view.gold {
            for m in &g.measures {
                if m.correct != m.anti {
                    let ratio = m
                        .ratio
                        .map(|r| format!(" (×{})", medallion_protocol::lab::ratio_text(r)))
                        .unwrap_or_default();
                    out.push(tr(
                        lang,
                        format!("{}: total {} is {} in the correct pipeline and {}{ratio} with the anti-pattern.", g.model, m.column, m.correct, m.anti),
                        format!("{}: итог {} — {} в правильном пайплайне и {}{ratio} с антипаттерном.", g.model, m.column, m.correct, m.anti),
                    ));
                }
            }
        }
        out
    }
}
