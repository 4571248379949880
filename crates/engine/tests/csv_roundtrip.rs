//! Property test (issue 3): for any generated CSV file (quoted fields,
//! embedded newlines, delimiters and quotes, blank lines, CRLF, a BOM), the
//! batch's header plus its raw payloads, in order, give back the file's
//! records exactly: none lost, none duplicated, none changed.
#![cfg(not(target_arch = "wasm32"))]

use medallion_engine::bronze::{split_file, IngestOptions};
use proptest::prelude::*;

fn field() -> impl Strategy<Value = String> {
    // Letters, digits, spaces, delimiters, quotes, CR and LF, non-ASCII.
    proptest::string::string_regex("[a-z0-9 ,;\"\r\nжё€]{0,8}").unwrap()
}

fn file() -> impl Strategy<Value = (Vec<Vec<String>>, bool, bool, Vec<bool>)> {
    (1usize..5).prop_flat_map(|width| {
        (
            proptest::collection::vec(proptest::collection::vec(field(), width), 1..12),
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec(any::<bool>(), 12),
        )
    })
}

fn read_record(text: &str) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let rec = reader
        .records()
        .next()
        .expect("one record")
        .expect("readable");
    rec.iter().map(str::to_string).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn header_plus_payloads_give_back_every_record((rows, bom, crlf, blank_after) in file()) {
        let terminator: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let mut bytes = Vec::new();
        if bom {
            bytes.extend_from_slice(b"\xEF\xBB\xBF");
        }
        // The header gets plain names so it is always recognised as one.
        let width = rows[0].len();
        let header: Vec<String> = (0..width).map(|i| format!("col{i}")).collect();
        let mut all = vec![header.clone()];
        all.extend(rows.iter().cloned());
        for (i, row) in all.iter().enumerate() {
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new());
            w.write_record(row).unwrap();
            let mut line = w.into_inner().unwrap();
            line.pop();
            bytes.extend_from_slice(&line);
            bytes.extend_from_slice(terminator);
            if blank_after.get(i).copied().unwrap_or(false) {
                bytes.extend_from_slice(terminator);
            }
        }
        let opts = IngestOptions { delimiter: Some(','), has_header: Some(true), skip_rows: Some(0), ..Default::default() };
        let split = split_file(&bytes, &opts).unwrap();
        prop_assert_eq!(&split.header, &header);
        prop_assert_eq!(split.records.len(), rows.len());
        for (rec, row) in split.records.iter().zip(&rows) {
            prop_assert_eq!(rec.corrupt_reason.as_deref(), None);
            prop_assert_eq!(&read_record(&rec.text), row);
        }
        // The texts are the file's own bytes, in order.
        let body = String::from_utf8(bytes).unwrap();
        let header_text = split.header_text.as_deref().unwrap();
        let mut at = body.find(header_text).unwrap() + header_text.len();
        for rec in &split.records {
            let found = body[at..].find(&rec.text).map(|p| p + at);
            prop_assert!(found.is_some(), "record {:?} not found in order", rec.text);
            at = found.unwrap() + rec.text.len();
        }
    }
}
