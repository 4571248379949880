//! An in-memory store whose writes fail on purpose while `faults.on` is set
//! ("the disk filled up between the data file and the log entry"): by
//! default only log entries (`/_delta_log/`); optionally only paths that
//! contain a given text, data files too (or only), and only from the Nth
//! matching write on. Every write that failed is recorded. Shared by
//! `commit_log.rs` and `crash_points.rs` (`#[path]`), each using part of it.

#![allow(dead_code)]

use std::fmt;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

/// Which writes fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Log entries (`…/_delta_log/…`) only.
    #[default]
    Logs,
    /// Everything but log entries (data files, landed files).
    Data,
    /// Every write.
    All,
}

#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub on: bool,
    pub target: Target,
    /// Only writes whose path contains this.
    pub contains: Option<String>,
    /// Let this many matching writes through first (fail the Nth + 1).
    pub skip: usize,
    /// Fail only one write (a crash at one point), not every one after it
    /// (a full disk).
    pub once: bool,
    /// Paths of the writes that failed.
    pub failed: Vec<String>,
    /// Paths of every write that went through (while `on` or not).
    pub written: Vec<String>,
}

impl Faults {
    /// Does this write fail? (Counts it and records it.)
    fn fails(&mut self, path: &str) -> bool {
        let is_log = path.contains("/_delta_log/");
        // The session's save (`meta/session`) fails only when asked for by
        // name: the crash points here are the tables' commits
        // (`meta/bronze_checkpoints`, written by a run, is one of them).
        let is_meta = path.starts_with("meta/session/");
        let matches = self.on
            && (!is_meta
                || self
                    .contains
                    .as_deref()
                    .is_some_and(|c| c.starts_with("meta/session")))
            && match self.target {
                Target::Logs => is_log,
                Target::Data => !is_log,
                Target::All => true,
            }
            && self.contains.as_deref().is_none_or(|c| path.contains(c));
        if matches && self.skip == 0 && !(self.once && !self.failed.is_empty()) {
            self.failed.push(path.to_string());
            return true;
        }
        if matches && self.skip > 0 {
            self.skip -= 1;
        }
        self.written.push(path.to_string());
        false
    }
}

#[derive(Debug)]
pub struct FailingLogStore {
    pub inner: InMemory,
    pub faults: Arc<Mutex<Faults>>,
}

impl fmt::Display for FailingLogStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FailingLogStore")
    }
}

fn no_space() -> object_store::Error {
    object_store::Error::Generic {
        store: "test",
        source: "no space left on device".into(),
    }
}

#[async_trait::async_trait]
impl ObjectStore for FailingLogStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        if self.faults.lock().unwrap().fails(location.as_ref()) {
            return Err(no_space());
        }
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        if self.faults.lock().unwrap().fails(location.as_ref()) {
            return Err(no_space());
        }
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        if self.faults.lock().unwrap().fails(to.as_ref()) {
            return Err(no_space());
        }
        self.inner.copy_opts(from, to, options).await
    }
}

/// Every store a playground made (one per example or pipeline loaded).
pub type Stores = Arc<Mutex<Vec<Arc<FailingLogStore>>>>;

/// An empty playground (fixed clock, sequential ids) whose lakes are
/// [`FailingLogStore`]s sharing one fault switch.
pub fn playground() -> (medallion_engine::Playground, Arc<Mutex<Faults>>, Stores) {
    use medallion_engine::env::{FixedClock, SequentialIds};
    let faults: Arc<Mutex<Faults>> = Arc::default();
    let stores: Stores = Arc::default();
    let (f, s) = (faults.clone(), stores.clone());
    let p = medallion_engine::Playground::with_store(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
        Arc::new(move || {
            let store = Arc::new(FailingLogStore {
                inner: Default::default(),
                faults: f.clone(),
            });
            s.lock().unwrap().push(store.clone());
            store
        }),
    )
    .unwrap();
    (p, faults, stores)
}
