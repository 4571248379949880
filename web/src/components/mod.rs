//! One component per panel.
pub mod banners;
pub mod batches;
pub mod checks;
pub mod export;
pub mod forget;
pub mod history;
pub mod kafka;
pub mod lab;
pub mod pii;
pub mod pipeline;
pub mod rules;
pub mod runbar;
pub mod status;
pub mod table;
pub mod topbar;
pub mod trail;

use yew::prelude::*;

/// Whether this tab may change the lake now, and if not, why. Provided by
/// the app as a context; every control that sends a change is disabled
/// while it is not [`Locked::Open`], with the reason as its tooltip, so
/// nothing can be changed and then refused.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub enum Locked {
    /// This tab owns the session (or saves nothing): changes are made.
    #[default]
    Open,
    /// Another tab owns the saved session (Web Locks, see `session.rs`),
    /// or took it over: this tab only shows it.
    ReadOnly,
    /// A new engine is given the session again (after a cancel or a
    /// restart): a change now would be made on a state not shown yet.
    Restoring,
    /// A scenario is being loaded: its tables may be shown already (the
    /// run's preview) while its versions are written; its answer then
    /// seeds the editors, which would undo a change made meanwhile.
    Loading,
}

/// This tab's [`Locked`] state as (controls off?, their tooltip).
#[hook]
pub fn use_locked(lang: medallion_protocol::Lang) -> (bool, Option<AttrValue>) {
    let locked = use_context::<Locked>().unwrap_or_default();
    let hint = match locked {
        Locked::Open => None,
        Locked::ReadOnly => Some(crate::i18n::t(lang, "locked_hint")),
        Locked::Restoring => Some(crate::i18n::t(lang, "refused_restoring")),
        Locked::Loading => Some(crate::i18n::t(lang, "locked_loading")),
    };
    (hint.is_some(), hint.map(AttrValue::from))
}
