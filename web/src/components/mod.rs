//! One component per panel.
pub mod banners;
pub mod batches;
pub mod checks;
pub mod export;
pub mod forget;
pub mod history;
pub mod kafka;
pub mod pipeline;
pub mod rules;
pub mod runbar;
pub mod status;
pub mod table;
pub mod topbar;
pub mod trail;

use yew::prelude::*;

/// Whether this tab may change the lake: `Locked(true)` while another tab
/// owns the saved session (Web Locks, see `session.rs`), when this tab only
/// shows it. Provided by the app as a context; every control that sends a
/// change is disabled then, with [`locked_hint`] as its tooltip, so nothing
/// can be changed and then refused.
#[derive(Clone, Copy, PartialEq, Default)]
pub struct Locked(pub bool);

/// Is this tab read-only now (see [`Locked`])?
#[hook]
pub fn use_locked() -> bool {
    use_context::<Locked>().is_some_and(|l| l.0)
}

/// The tooltip of a disabled control in a read-only tab, `None` otherwise.
pub fn locked_hint(lang: medallion_protocol::Lang, locked: bool) -> Option<AttrValue> {
    locked.then(|| AttrValue::from(crate::i18n::t(lang, "locked_hint")))
}
