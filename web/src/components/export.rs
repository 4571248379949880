//! The dialog with exported text to copy.

use medallion_protocol::Lang;
use yew::prelude::*;

use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub text: String,
    pub lang: Lang,
    pub on_close: Callback<()>,
}

#[function_component(ExportDialog)]
pub fn export_dialog(p: &Props) -> Html {
    html! {
        <div class="modal-backdrop">
            <div class="modal">
                <p>{ t(p.lang, "copy_hint") }</p>
                <textarea class="mono export" readonly=true value={p.text.clone()} />
                <button onclick={p.on_close.reform(|_| ())}>{ t(p.lang, "close") }</button>
            </div>
        </div>
    }
}
