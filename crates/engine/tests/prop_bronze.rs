//! Property test (issue 9, kind 2): a malformed CSV record never swallows or
//! changes the records around it. Random CSV files (random header width;
//! fields with commas, quotes and newlines, quoted as a CSV writer quotes
//! them; LF or CRLF) get one injected fault: a dropped closing quote, a stray
//! quote, or a short row. Then, split by `split_file`:
//! - every physical line of the file is in exactly one bronze record (or the
//!   header), and each record's text is the file's own bytes from its line on;
//! - every row other than the faulty one is a record of its own, at its own
//!   line, unflagged, with the same text (so the same fields) as in the file
//!   without the fault;
//! - the file without the fault gives exactly its rows, none flagged.
//!
//! One fault per file: two faults can cancel out into a well-formed quoted
//! field (a dropped closing quote, then a stray one later), which no reader
//! can tell from data.
#![cfg(not(target_arch = "wasm32"))]

use medallion_engine::bronze::{split_file, IngestOptions, SplitFile};
use proptest::prelude::*;

/// A field's text. It may start with a comma, a quote or a line break, but
/// never ends with one: a quoted field spanning lines whose text ends so
/// closes with a quote right after a delimiter or a line break, which is
/// exactly how a quote left open earlier reads when it meets a later field's
/// opening quote. That case is ambiguous for any reader (the same bytes are
/// a well-formed file with a fault after it, or a faulty one without), so
/// the splitter believes such a record only when the record after it is
/// well-formed (its unit tests pin both readings); it is left out here.
fn field() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[ab ,\"\n]{0,5}")
        .unwrap()
        .prop_map(|mut f| {
            if f.ends_with([',', '"', '\n']) {
                f.push('a');
            }
            f
        })
}

#[derive(Debug, Clone)]
enum Fault {
    /// Remove the closing quote of the n-th quoted field of the row.
    DropClosingQuote(usize),
    /// Insert a quote at this byte (modulo the row's length + 1).
    StrayQuote(usize),
    /// Leave out the row's last field.
    ShortRow,
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        (0usize..8).prop_map(Fault::DropClosingQuote),
        (0usize..64).prop_map(Fault::StrayQuote),
        Just(Fault::ShortRow),
    ]
}

/// One row as a CSV writer writes it (quotes only where needed), without terminator.
fn write_row(fields: &[String]) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(fields).unwrap();
    let mut bytes = w.into_inner().unwrap();
    bytes.pop();
    String::from_utf8(bytes).unwrap()
}

/// Byte positions of the closing quotes of the row's quoted fields.
fn closing_quotes(row: &str) -> Vec<usize> {
    let b = row.as_bytes();
    let (mut out, mut i, mut at_start, mut quoted) = (Vec::new(), 0, true, false);
    while i < b.len() {
        match (quoted, b[i]) {
            (false, b'"') if at_start => quoted = true,
            (false, b',') => {
                at_start = true;
                i += 1;
                continue;
            }
            (true, b'"') if b.get(i + 1) == Some(&b'"') => i += 1,
            (true, b'"') => {
                quoted = false;
                out.push(i);
            }
            _ => {}
        }
        at_start = false;
        i += 1;
    }
    out
}

/// The faulty row's text, or `None` when the fault does not apply to the row.
fn inject(row: &[String], text: &str, fault: &Fault) -> Option<String> {
    match fault {
        Fault::DropClosingQuote(n) => {
            let quotes = closing_quotes(text);
            let at = *quotes.get(n % quotes.len().max(1))?;
            let mut t = text.to_string();
            t.remove(at);
            Some(t)
        }
        Fault::StrayQuote(p) => {
            let mut t = text.to_string();
            let mut at = p % (t.len() + 1);
            while !t.is_char_boundary(at) {
                at -= 1;
            }
            t.insert(at, '"');
            Some(t)
        }
        Fault::ShortRow if row.len() > 1 => Some(write_row(&row[..row.len() - 1])),
        Fault::ShortRow => None,
    }
}

/// The file's bytes and the line each row starts on.
fn build(header: &str, rows: &[String], crlf: bool) -> (Vec<u8>, Vec<i64>) {
    let term = if crlf { "\r\n" } else { "\n" };
    let mut body = String::new();
    let mut starts = Vec::new();
    let mut line = 1 + header.matches('\n').count() as i64 + 1;
    body.push_str(header);
    body.push_str(term);
    for row in rows {
        starts.push(line);
        let row = if crlf {
            row.replace('\n', "\r\n")
        } else {
            row.clone()
        };
        line += row.matches('\n').count() as i64 + 1;
        body.push_str(&row);
        body.push_str(term);
    }
    (body.into_bytes(), starts)
}

fn split(bytes: &[u8]) -> SplitFile {
    let opts = IngestOptions {
        delimiter: Some(','),
        has_header: Some(true),
        skip_rows: Some(0),
        ..Default::default()
    };
    split_file(bytes, &opts).unwrap()
}

/// Byte offset of the start of each line (1-based index - 1); a break is LF, CRLF or a lone CR.
fn line_starts(body: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\r' if body.get(i + 1) == Some(&b'\n') => {
                i += 2;
                starts.push(i);
            }
            b'\n' | b'\r' => {
                i += 1;
                starts.push(i);
            }
            _ => i += 1,
        }
    }
    starts
}

fn breaks(text: &str) -> usize {
    line_starts(text.as_bytes()).len() - 1
}

/// Every physical line is in exactly one record (or the header), and each
/// record's text is the file's bytes from the start of its line.
fn check_lines(body: &[u8], s: &SplitFile) -> Result<(), TestCaseError> {
    let starts = line_starts(body);
    // The last "line" after the final terminator is empty.
    let lines = starts.len() - usize::from(starts.last() == Some(&body.len()));
    let mut owner = vec![0usize; lines];
    let header = s.header_text.as_deref().unwrap_or("");
    for n in &mut owner[..=breaks(header)] {
        *n += 1;
    }
    for r in &s.records {
        let first = (r.line - 1) as usize;
        let at = starts[first];
        prop_assert_eq!(
            body.get(at..at + r.text.len()),
            Some(r.text.as_bytes()),
            "record at line {} is not the file's text",
            r.line
        );
        let last = first + breaks(&r.text);
        prop_assert!(last < lines, "record at line {} runs past the file", r.line);
        for n in &mut owner[first..=last] {
            *n += 1;
        }
    }
    for (l, n) in owner.iter().enumerate() {
        let blank = body[starts[l]..]
            .first()
            .is_none_or(|b| *b == b'\n' || *b == b'\r');
        prop_assert!(
            *n == 1 || (*n == 0 && blank),
            "line {} is in {} records",
            l + 1,
            n
        );
    }
    Ok(())
}

fn file() -> impl Strategy<Value = (Vec<Vec<String>>, usize, Fault, bool)> {
    (1usize..5).prop_flat_map(|width| {
        (
            proptest::collection::vec(proptest::collection::vec(field(), width), 1..10),
            0usize..10,
            fault(),
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn a_fault_in_one_record_changes_no_other((rows, at, fault, crlf) in file()) {
        let width = rows[0].len();
        let header = (0..width).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
        let texts: Vec<String> = rows.iter().map(|r| write_row(r)).collect();
        let (clean, clean_starts) = build(&header, &texts, crlf);
        let s = split(&clean);
        check_lines(&clean, &s)?;
        prop_assert_eq!(s.records.len(), rows.len(), "the file without the fault: {:?}", s.records);
        for (r, start) in s.records.iter().zip(&clean_starts) {
            prop_assert_eq!(r.corrupt_reason.as_deref(), None, "clean record {:?}", r.text);
            prop_assert_eq!(r.line, *start);
        }

        let at = at % rows.len();
        let Some(faulty) = inject(&rows[at], &texts[at], &fault) else {
            return Ok(());
        };
        let mut faulty_texts = texts.clone();
        faulty_texts[at] = faulty;
        let (bytes, starts) = build(&header, &faulty_texts, crlf);
        let f = split(&bytes);
        check_lines(&bytes, &f)?;
        for (i, clean_record) in s.records.iter().enumerate() {
            if i == at {
                continue;
            }
            let found = f.records.iter().find(|r| r.line == starts[i]);
            prop_assert!(found.is_some(), "row {} (line {}) is no record of its own: {:?}", i, starts[i], f.records);
            let found = found.unwrap();
            prop_assert_eq!(&found.text, &clean_record.text, "row {} changed", i);
            prop_assert_eq!(found.corrupt_reason.as_deref(), None, "row {} flagged", i);
        }
    }
}
