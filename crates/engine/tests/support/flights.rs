//! The NYC flights example's downloads read from `static/downloads/`
//! (gunzipped), as the browser's worker fetches them; native only.

use medallion_engine::Playground;

/// Gives `p` every download of the flights example, read from the
/// repository's `static/` folder.
pub fn add_flights_downloads(p: &mut Playground) {
    use std::io::Read;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../static/");
    for d in medallion_engine::examples::find("nyc_flights_2013")
        .expect("the flights example")
        .info
        .downloads
    {
        let gz = std::fs::read(format!("{root}{}", d.path)).expect("download file");
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut bytes)
            .expect("gunzip");
        p.add_download(d.path, bytes).expect("download accepted");
    }
}
