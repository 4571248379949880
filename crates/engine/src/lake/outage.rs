//! An object store outage on demand (the lab's technical failure, seed 000
//! §8): every lake's store is wrapped in an [`Outage`], which passes
//! everything through until it is armed; armed, it lets a number of writes
//! through, then answers every write with `503 Service Unavailable` until
//! disarmed. Reads always pass. The commit protocol (data files first, the
//! log entry last) is what makes a write that fails halfway leave nothing
//! visible.

use std::fmt;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

#[derive(Debug, Default)]
struct Plan {
    armed: bool,
    /// Writes still let through before the outage begins.
    let_through: usize,
    /// Paths of the writes that went through while armed, then of those refused.
    written: Vec<String>,
    refused: Vec<String>,
}

/// A store that can be made to answer 503 to writes (see the module docs).
pub struct Outage {
    inner: Arc<dyn ObjectStore>,
    plan: Mutex<Plan>,
}

/// What an armed outage saw: writes that went through, then those refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutageReport {
    pub written: Vec<String>,
    pub refused: Vec<String>,
}

impl Outage {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            plan: Mutex::default(),
        }
    }

    /// The store it wraps.
    pub fn inner(&self) -> Arc<dyn ObjectStore> {
        self.inner.clone()
    }

    /// From now on, `let_through` writes pass, then every write fails.
    pub fn arm(&self, let_through: usize) {
        if let Ok(mut p) = self.plan.lock() {
            *p = Plan {
                armed: true,
                let_through,
                ..Plan::default()
            };
        }
    }

    /// Ends the outage; returns what it saw.
    pub fn disarm(&self) -> OutageReport {
        match self.plan.lock() {
            Ok(mut p) => {
                let p = std::mem::take(&mut *p);
                OutageReport {
                    written: p.written,
                    refused: p.refused,
                }
            }
            Err(_) => OutageReport::default(),
        }
    }

    /// May this write go through? (Counts it while armed.)
    fn allows(&self, path: &Path) -> Result<()> {
        let Ok(mut p) = self.plan.lock() else {
            return Ok(());
        };
        if !p.armed {
            return Ok(());
        }
        if p.let_through > 0 {
            p.let_through -= 1;
            p.written.push(path.to_string());
            return Ok(());
        }
        p.refused.push(path.to_string());
        Err(object_store::Error::Generic {
            store: "lake",
            source: "503 Service Unavailable (an outage the lab simulated)".into(),
        })
    }
}

impl fmt::Debug for Outage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Outage({})", self.inner)
    }
}

impl fmt::Display for Outage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Outage {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.allows(location)?;
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.allows(location)?;
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
        self.allows(to)?;
        self.inner.copy_opts(from, to, options).await
    }
}
