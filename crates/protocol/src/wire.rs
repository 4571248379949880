//! Messages between the page and the engine's Web Worker.
//!
//! The page posts a JavaScript object `{ id, request, file? }`: `request` is a
//! [`Request`] as JSON text, `file` an optional `File` (the bytes of an
//! [`Request::Ingest`], never sent as a JSON array of numbers; the worker
//! reads them and fills `bytes`). The worker posts `{ message }`, a
//! [`FromEngine`] as JSON text. Each request has an `id`; every answer and
//! progress report names the id it belongs to, so the page can match them.

use crate::table::TableName;
use serde::{Deserialize, Serialize};

use crate::{PipelineView, Request, Response};

/// Identifies one request of the page to the engine (increasing from 1).
pub type RequestId = u64;

/// A request as the page sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub id: RequestId,
    pub request: Request,
    /// The page's clock when the request was first made, µs since the Unix
    /// epoch (UTC). The engine's clock reads this (plus 1 µs per reading)
    /// during the request, so a request given again to a new worker (after
    /// a cancel) stamps `_ingest_ts` and versions exactly as the first time.
    /// `None`: the worker's own clock.
    #[serde(default)]
    pub now_micros: Option<i64>,
}

/// What the engine's worker tells the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromEngine {
    /// The engine's WebAssembly is downloading: `loaded_bytes` of
    /// `total_bytes` (0 when the server did not say). Sent by the worker's
    /// loader script (`static/engine-loader.js`) before the engine runs.
    Loading { loaded_bytes: u64, total_bytes: u64 },
    /// The engine is loaded and takes requests (sent once, after loading).
    Ready {
        /// The `meta.session` version of the lake it opened from the
        /// browser's storage (OPFS): the state after every saved request
        /// whose `saved` version is at most this one. `None`: nothing was
        /// opened (no saved lake, or it could not be read).
        #[serde(default)]
        opened: Option<u64>,
        /// Does it keep its lake in the browser's storage (OPFS) after
        /// every change? (Only in the tab that owns the saved session.)
        #[serde(default)]
        persisted: bool,
    },
    /// The engine could not start (e.g. the browser refused the module).
    Failed { message: String },
    /// Request `id` is under way: how far it got.
    Progress { id: RequestId, progress: Progress },
    /// Request `id` ran the pipeline: its tables as computed, shown while
    /// their new versions are written ([`PipelineView::saving`] names
    /// them). Only for requests that [`Request::previews`]; `Done` follows.
    Preview {
        id: RequestId,
        view: Box<PipelineView>,
    },
    /// Request `id` is done (successfully or not).
    Done {
        id: RequestId,
        response: Response,
        /// The `meta.session` version in the browser's storage that holds
        /// the state after this request (`None`: not written there).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        saved: Option<u64>,
        /// Why the state after this request could not be written to the
        /// browser's storage (`QuotaExceededError: …` when it is full).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_saved: Option<String>,
    },
}

/// How far a long request got. Each variant names what is being done; the
/// page draws it as a progress bar with a line of text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Progress {
    /// Fetching an example's file `file` from the site: `bytes` of
    /// `total_bytes` arrived (the gzip file's bytes). `total_bytes` is 0
    /// when unknown: a host that sends the `.gz` file with
    /// `Content-Encoding: gzip` hands over the unzipped bytes, which the
    /// gzip size does not bound.
    Downloading {
        file: String,
        bytes: u64,
        total_bytes: u64,
    },
    /// Reading a file into records: `bytes` of `total_bytes` read (bytes),
    /// `records` found so far.
    Reading {
        file: String,
        bytes: u64,
        total_bytes: u64,
        records: u64,
    },
    /// Reading bronze table `table` with its declared schema at
    /// the start of a run: `records` rows; the `n`th of `of` bronze tables.
    Parsing {
        table: TableName,
        records: u64,
        n: u32,
        of: u32,
    },
    /// Running rule `rule` (its id) of silver table `table`:
    /// the `n`th (1-based) of `of` rules of the run.
    Rule {
        table: TableName,
        rule: String,
        n: u32,
        of: u32,
    },
    /// Building gold model `table`, `n` of `of`.
    Model { table: TableName, n: u32, of: u32 },
    /// Writing table `table` to the lake: `n` of `of` tables (an ingest's
    /// new bronze batch is `1` of `1` before the run's tables).
    Writing { table: TableName, n: u32, of: u32 },
    /// Saving the session in the browser's storage (the worker's copy of
    /// the lake, after the engine has answered): `n` of the `of` files
    /// that changed are written.
    Saving { n: u32, of: u32 },
}

impl Progress {
    /// Fraction done, 0.0–1.0, for a progress bar; `None` when the total
    /// is unknown (a bar that only says "working").
    pub fn fraction(&self) -> Option<f64> {
        let (n, of) = match self {
            Progress::Reading {
                bytes, total_bytes, ..
            }
            | Progress::Downloading {
                bytes, total_bytes, ..
            } => (*bytes as f64, *total_bytes as f64),
            Progress::Parsing { n, of, .. }
            | Progress::Rule { n, of, .. }
            | Progress::Model { n, of, .. }
            | Progress::Writing { n, of, .. }
            | Progress::Saving { n, of } => (*n as f64, *of as f64),
        };
        (of > 0.0).then(|| (n / of).clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::Progress;

    /// A download whose total is unknown (0) has no fraction: the bar says
    /// "working" rather than 0 % or, with the gzip size as total, past 100 %.
    #[test]
    fn a_download_of_unknown_total_has_no_fraction() {
        let download = |bytes, total_bytes| Progress::Downloading {
            file: "flights.csv".into(),
            bytes,
            total_bytes,
        };
        assert_eq!(download(31_000_000, 0).fraction(), None);
        assert_eq!(download(3_000_000, 6_000_000).fraction(), Some(0.5));
        assert_eq!(download(7_000_000, 6_000_000).fraction(), Some(1.0));
    }
}
