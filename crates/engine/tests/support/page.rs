//! A session as the tests that reopen one drive it ([`Tab`]) and the page
//! it shows as one JSON value ([`page`]), to compare with the original.

use std::sync::Arc;

use medallion_engine::api::{Request, Response};
use medallion_engine::env::{RequestClock, SequentialIds};
use medallion_engine::Playground;
use object_store::memory::InMemory;

/// The clock's start: each request is sent at `T0 + at_secs`.
pub const T0: i64 = 1_700_000_000_000_000;

/// A copy of every file of `store` (what the browser's storage keeps
/// across a reload), in a new in-memory store.
#[allow(dead_code)] // not every test file that includes this reopens a copy
pub async fn copy_of(
    store: Arc<dyn object_store::ObjectStore>,
) -> Arc<dyn object_store::ObjectStore> {
    use futures::TryStreamExt;
    use object_store::{ObjectStore, ObjectStoreExt};
    let copy = Arc::new(InMemory::new());
    let metas: Vec<_> = store.list(None).try_collect().await.unwrap();
    for m in metas {
        let bytes = store.get(&m.location).await.unwrap().bytes().await.unwrap();
        copy.put(&m.location, bytes.into()).await.unwrap();
    }
    copy
}

/// A playground with a fixed clock and sequential ids, the pipeline `def`
/// (its JSON) loaded, reusing the last run's rule steps and check results
/// or computing every one (`Playground::set_reuse_last_run`): the two
/// sides the reuse tests compare.
#[allow(dead_code)] // only the reuse tests compare the two sides
pub async fn fixed_session(def: serde_json::Value, reuse: bool) -> Playground {
    let mut p = Playground::with_env(
        Arc::new(medallion_engine::env::FixedClock::new(T0)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.set_reuse_last_run(reuse);
    p.load_pipeline(serde_json::from_value(def).expect("pipeline"))
        .await
        .expect("loads");
    p
}

/// A new in-memory lake for each load.
pub fn store_factory() -> medallion_engine::playground::StoreFactory {
    Arc::new(|| Arc::new(InMemory::new()))
}

/// A playground with its own request clock (set before each request, as the
/// Web Worker sets it) and sequential ids.
pub struct Tab {
    pub p: Playground,
    pub clock: Arc<RequestClock>,
}

impl Tab {
    pub fn new() -> Self {
        let clock = Arc::new(RequestClock::default());
        let p = Playground::with_store(
            clock.clone(),
            Arc::new(SequentialIds::default()),
            store_factory(),
        )
        .unwrap();
        Self { p, clock }
    }

    /// Sends `request` at `T0 + at_secs` seconds.
    pub async fn send(&mut self, at_secs: i64, request: Request) -> Response {
        self.clock.set(T0 + at_secs * 1_000_000);
        self.p.handle(request).await
    }
}

/// Everything the page shows: the view (the last request's notice too) and
/// every table's rows at every version of its history.
pub async fn page(p: &mut Playground) -> serde_json::Value {
    let Response::Snapshot(view) = p.handle(Request::Snapshot).await else {
        panic!("snapshot")
    };
    let mut tables = serde_json::Map::new();
    for t in &view.tables {
        let versions: Vec<u64> = view
            .history
            .get(&t.name)
            .map(|v| v.iter().map(|v| v.version).collect())
            .unwrap_or_default();
        let mut at = vec![None];
        at.extend(versions.into_iter().map(Some));
        for version in at {
            let r = p
                .handle(Request::GetTable {
                    table: t.name.clone(),
                    offset: 0,
                    limit: 1_000_000,
                    version,
                    corrupt_only: false,
                })
                .await;
            tables.insert(
                format!("{}@{version:?}", t.name),
                serde_json::to_value(r).unwrap(),
            );
        }
    }
    let v = serde_json::to_value(&view).unwrap();
    serde_json::json!({ "view": v, "tables": tables })
}
