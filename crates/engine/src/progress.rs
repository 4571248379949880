//! How far a long request got: the engine reports [`Progress`] (the
//! protocol's type: bytes and records read, rule n of m, the gold model or
//! table being written) to whoever listens; the Web Worker posts it to the
//! page, which draws a progress bar. Natively and in tests nobody listens.

pub use medallion_protocol::wire::Progress;

/// A listener for [`Progress`] reports, or none.
#[derive(Clone, Copy, Default)]
pub struct Reporter<'a>(Option<&'a dyn Fn(Progress)>);

impl<'a> Reporter<'a> {
    /// Nobody listens.
    pub const NONE: Reporter<'static> = Reporter(None);

    pub fn new(listener: Option<&'a dyn Fn(Progress)>) -> Self {
        Reporter(listener)
    }

    /// Tells the listener, if there is one.
    pub fn report(&self, progress: Progress) {
        if let Some(f) = self.0 {
            f(progress);
        }
    }
}
