//! The UI's state: one reducer. [`State`] is everything the page shows
//! besides the engine's own status; [`Action`]s change it and do nothing
//! else (requests to the engine, timers and confirm dialogs stay in `app.rs`
//! and the components).

use std::rc::Rc;

use medallion_protocol::{
    BatchInfo, ErasurePlan, GoldView, Lang, PiiView, PipelineView, Request, Response, RowTrail,
    Rule, SilverView, TableName, TableView, DEFAULT_EXAMPLE, PREVIEW_ROWS,
};
use yew::prelude::*;

/// A message shown in a banner.
#[derive(Clone, PartialEq)]
pub struct Banner {
    pub text: String,
    pub error: bool,
}

#[derive(Clone)]
pub struct State {
    pub lang: Lang,
    /// The engine's last snapshot (`None` until the engine first answers).
    pub view: Option<PipelineView>,
    /// The table shown under the strip (`None` while a scenario loads).
    pub selected: Option<TableName>,
    /// A page of the selected table other than the snapshot's first one.
    pub page: Option<TableView>,
    /// The user's rules (may be ahead of the engine while typing).
    pub rules_draft: Vec<Rule>,
    /// The silver table whose rules the registry panel edits (`None`: the first).
    pub rules_table: Option<TableName>,
    pub gold_draft: String,
    /// Time travel: the earlier version of the selected table being read.
    pub travel: Option<u64>,
    pub corrupt_only: bool,
    /// The messages on screen. Several answers arriving in one tick (a
    /// multi-file drop) each add their message.
    pub banners: Vec<Banner>,
    /// The batch being read again (its dialog is open).
    pub reingest: Option<BatchInfo>,
    pub trail: Option<RowTrail>,
    /// The right-to-be-forgotten plan on screen, if one was asked for.
    pub erasure_plan: Option<ErasurePlan>,
    /// Exported text in the copy dialog.
    pub export: Option<String>,
    /// The right to be forgotten three ways: the engine's last answer.
    pub pii: Option<PiiView>,
    /// The lab's last refusal (an event that does not fit the scenario),
    /// shown in the lab beside the buttons; cleared by the next answer.
    pub lab_notice: Option<String>,
}

pub enum Action {
    /// An engine answer; `reseed_drafts` re-seeds the editors from it.
    Answer {
        response: Response,
        reseed_drafts: bool,
    },
    /// A snapshot after bronze data was added (a drop, a re-read, a poll, an
    /// erasure): the table is shown at its new current version, page one.
    Fresh(PipelineView),
    SetLang(Lang),
    /// A scenario is being loaded; `other` if it is not the current one.
    Loading {
        other: bool,
    },
    Select(TableName),
    SetRulesTable(TableName),
    EditRules(Vec<Rule>),
    EditGoldSql(String),
    Travel(Option<u64>),
    CorruptOnly(bool),
    /// Add a message. Success notes replace earlier success notes; errors
    /// stay (the last three) until closed.
    PushBanner(Banner),
    /// A success that makes earlier messages moot.
    ReplaceBanners(Banner),
    RemoveBanner(usize),
    /// The lab's refusal to show beside its buttons (`None` clears it).
    LabNotice(Option<String>),
    OpenReingest(BatchInfo),
    CloseReingest,
    CloseTrail,
    CloseErasurePlan,
    CloseExport,
}

impl State {
    pub fn new(lang: Lang) -> Self {
        State {
            lang,
            view: None,
            selected: Some(TableName::silver("nyc_taxi_yellow")),
            page: None,
            rules_draft: vec![],
            rules_table: None,
            gold_draft: String::new(),
            travel: None,
            corrupt_only: false,
            banners: vec![],
            reingest: None,
            trail: None,
            erasure_plan: None,
            export: None,
            pii: None,
            lab_notice: None,
        }
    }

    /// The example loaded now (the default before the first answer).
    pub fn example(&self) -> String {
        self.view
            .as_ref()
            .map(|v| v.example.clone())
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| DEFAULT_EXAMPLE.into())
    }

    /// The silver table the rule registry panel shows.
    pub fn active_silver(&self) -> Option<&SilverView> {
        active_silver(self.view.as_ref()?, self.rules_table.as_ref())
    }

    /// The gold model whose SQL is edited.
    pub fn active_gold(&self) -> Option<&GoldView> {
        active_gold(self.view.as_ref()?, self.selected.as_ref())
    }

    /// The selected table as shown: the page read, else the snapshot's first page.
    pub fn table_view(&self) -> Option<TableView> {
        self.page
            .clone()
            .filter(|p| Some(&p.name) == self.selected.as_ref())
            .or_else(|| self.view.as_ref()?.table(self.selected.as_ref()?).cloned())
    }

    /// The rule registry's table's columns (name, type), for new rules' templates.
    pub fn rule_columns(&self) -> Vec<(String, String)> {
        self.active_silver()
            .and_then(|s| self.view.as_ref()?.table(&s.name))
            .map(|tv| {
                tv.columns
                    .iter()
                    .filter(|c| !c.name.starts_with('_'))
                    .map(|c| (c.name.clone(), c.data_type.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The version being read, if the new snapshot still has it.
    fn kept_travel(&self, v: &PipelineView) -> Option<u64> {
        self.travel.filter(|ver| {
            self.selected
                .as_ref()
                .and_then(|t| v.history.get(t))
                .is_some_and(|hs| hs.iter().any(|x| x.version == *ver && x.readable))
        })
    }

    /// After a new snapshot, the request that reads again the page (and
    /// version, and filter) the learner was reading; `None` if page one of
    /// the snapshot is it.
    pub fn page_refetch(&self, v: &PipelineView) -> Option<Request> {
        let old = self.page.as_ref()?;
        let travel = self.kept_travel(v);
        ((old.offset > 0 || travel.is_some() || self.corrupt_only) && v.table(&old.name).is_some())
            .then(|| Request::GetTable {
                table: old.name.clone(),
                offset: old.offset,
                limit: PREVIEW_ROWS,
                version: travel,
                corrupt_only: self.corrupt_only,
            })
    }

    fn snapshot(&mut self, v: PipelineView, reseed_drafts: bool) {
        // A new example opens on its first silver table.
        let selected = match &self.selected {
            Some(t) if v.table(t).is_some() => Some(t.clone()),
            _ => v
                .silver
                .first()
                .map(|s| s.name.clone())
                .or_else(|| v.tables.first().map(|t| t.name.clone())),
        };
        if reseed_drafts {
            self.rules_draft = active_silver(&v, self.rules_table.as_ref())
                .map(|s| s.rules.iter().map(|r| r.rule.clone()).collect())
                .unwrap_or_default();
            self.gold_draft = active_gold(&v, selected.as_ref())
                .map(|g| g.model.sql.clone())
                .unwrap_or_default();
        }
        // The page being read is kept until it is read again (`page_refetch`).
        if self.page_refetch(&v).is_none() {
            self.page = None;
        }
        // A plan holds for the state it was made on only.
        if self
            .erasure_plan
            .as_ref()
            .is_some_and(|pl| pl.state != v.state)
        {
            self.erasure_plan = None;
        }
        self.travel = self.kept_travel(&v);
        self.selected = selected;
        self.view = Some(v);
    }

    fn push_banner(&mut self, b: Banner) {
        let all = &mut self.banners;
        if !b.error {
            all.retain(|x| x.error);
        }
        // The same message twice (several queued edits cancelled at once) is shown once, as the newest.
        all.retain(|x| *x != b);
        all.push(b);
        if all.iter().filter(|x| x.error).count() > 3 {
            if let Some(first) = all.iter().position(|x| x.error) {
                all.remove(first);
            }
        }
    }

    /// The selected table shows its current version, page one, every row.
    fn first_page(&mut self) {
        self.page = None;
        self.travel = None;
        self.corrupt_only = false;
    }
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Answer {
                response,
                reseed_drafts,
            } => match response {
                Response::Snapshot(v) => s.snapshot(v, reseed_drafts),
                Response::Table(tv) => s.page = Some(tv),
                Response::Text { text } => s.export = Some(text),
                Response::Trail(tr) => s.trail = Some(tr),
                Response::ErasurePlan(plan) => s.erasure_plan = Some(plan),
                Response::Pii(v) => s.pii = Some(v),
                Response::Error { message } => s.push_banner(Banner {
                    text: message,
                    error: true,
                }),
            },
            Action::Fresh(v) => {
                s.first_page();
                s.view = Some(v);
            }
            Action::SetLang(lang) => {
                for b in &mut s.banners {
                    b.text = crate::i18n::retranslate(&b.text, s.lang, lang);
                }
                s.lang = lang;
            }
            Action::Loading { other } => {
                if other {
                    s.selected = None;
                    s.rules_table = None;
                }
                s.banners.clear();
            }
            Action::Select(name) => {
                s.first_page();
                if let Some(v) = &s.view {
                    // A silver table's rules and a gold model's SQL follow the selection.
                    if let Some(silver) = v.silver.iter().find(|x| x.name == name) {
                        s.rules_table = Some(name.clone());
                        s.rules_draft = silver.rules.iter().map(|r| r.rule.clone()).collect();
                    }
                    if let Some(g) = v
                        .gold
                        .iter()
                        .find(|g| TableName::gold(&g.model.name) == name)
                    {
                        s.gold_draft = g.model.sql.clone();
                    }
                }
                s.selected = Some(name);
            }
            Action::SetRulesTable(name) => {
                let rules = s.view.as_ref().and_then(|v| {
                    let silver = v.silver.iter().find(|x| x.name == name)?;
                    Some(silver.rules.iter().map(|r| r.rule.clone()).collect())
                });
                if let Some(rules) = rules {
                    s.rules_draft = rules;
                    s.rules_table = Some(name);
                }
            }
            Action::EditRules(rules) => s.rules_draft = rules,
            Action::EditGoldSql(sql) => s.gold_draft = sql,
            Action::Travel(v) => s.travel = v,
            Action::CorruptOnly(on) => s.corrupt_only = on,
            Action::PushBanner(b) => s.push_banner(b),
            Action::ReplaceBanners(b) => s.banners = vec![b],
            Action::RemoveBanner(i) => {
                if i < s.banners.len() {
                    s.banners.remove(i);
                }
            }
            Action::LabNotice(n) => s.lab_notice = n,
            Action::OpenReingest(b) => s.reingest = Some(b),
            Action::CloseReingest => s.reingest = None,
            Action::CloseTrail => s.trail = None,
            Action::CloseErasurePlan => s.erasure_plan = None,
            Action::CloseExport => s.export = None,
        }
        Rc::new(s)
    }
}

/// The silver table the rule registry panel shows: the chosen one, else the first.
fn active_silver<'a>(v: &'a PipelineView, chosen: Option<&TableName>) -> Option<&'a SilverView> {
    v.silver
        .iter()
        .find(|s| Some(&s.name) == chosen)
        .or_else(|| v.silver.first())
}

/// The gold model whose SQL is edited: the selected gold table's, else the first.
fn active_gold<'a>(v: &'a PipelineView, selected: Option<&TableName>) -> Option<&'a GoldView> {
    v.gold
        .iter()
        .find(|g| Some(&TableName::gold(&g.model.name)) == selected)
        .or_else(|| v.gold.first())
}
