//! Splitting a file's bytes into bronze records, keeping every byte.
//!
//! Formats are detected from the content, never from the file name:
//! Parquet by its `PAR1` magic, JSON by a first non-blank `{` or `[`
//! (then JSON Lines, one top-level array, or pretty-printed / concatenated
//! values), anything else is CSV with its dialect (delimiter, quote, header
//! line, lines before the header) detected from the first records. Every
//! detected setting can be overridden by [`IngestOptions`].
//!
//! A record that is not well-formed is still a record: it keeps its exact
//! text (and its bytes when they are not UTF-8) and gets a `_corrupt_reason`.
//! Only a file that cannot be split at all (an unreadable Parquet file, bad
//! options) is refused, and then nothing is written.

use serde::de::IgnoredAny;

use medallion_protocol::bronze::{CsvDialect, HeaderRename, IngestOptions, SourceFormat};

use crate::error::{EngineError, Result};

/// One record of a file as bronze keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// The record's exact text, without its line terminator. If the bytes are
    /// not UTF-8, invalid sequences are shown as U+FFFD and `bytes` holds the original.
    pub text: String,
    /// The original bytes, only when they are not valid UTF-8.
    pub bytes: Option<Vec<u8>>,
    /// 1-based line of the file where the record starts (row number for
    /// Parquet); 0 when the record has no line (a Kafka message).
    pub line: i64,
    /// Why silver cannot read this record as it is (`None`: well-formed).
    pub corrupt_reason: Option<String>,
    /// Something silver reads in a defined way but the user should know
    /// (a JSON object with a duplicate key: the last value is read). Unlike
    /// a corrupt reason it does not send the record to the quarantine.
    pub warning: Option<String>,
}

/// Are two names equal ignoring case? Compared under Unicode NFC ([`nfc`]:
/// `cafe` + U+0301 COMBINING ACUTE ACCENT is `café`), then as Java's
/// `String.equalsIgnoreCase` (Spark's case-insensitive column resolver)
/// compares them: character by character, two characters being equal when
/// they are the same, have the same upper-case form, or the same lower-case
/// form of their upper-case forms, with Unicode's one-character (simple)
/// mappings, for every script (`Émission` = `ÉMISSION`, `Straße` =
/// `STRASSE` is not, `straße` = `STRAẞE` is, Turkish `İD` = `id` = `ıd`). Every place that matches names ignoring case
/// (header mapping, binding a declared column to a header name or a JSON
/// key, declared names refused as equal) uses this one rule.
pub fn same_name_ignoring_case(a: &str, b: &str) -> bool {
    // Two ASCII names: already in NFC, and an ASCII letter's Unicode
    // lower- and upper-case forms are its ASCII ones (the same answer, a
    // byte compare; names are matched once per JSON record).
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    same_name_ignoring_case_in_unicode(a, b)
}

/// [`same_name_ignoring_case`] for any two names, character by character.
fn same_name_ignoring_case_in_unicode(a: &str, b: &str) -> bool {
    a == b || {
        let (a, b) = (nfc(a), nfc(b));
        a.chars().count() == b.chars().count()
            && a.chars().zip(b.chars()).all(|(x, y)| {
                let (ux, uy) = (simple_upper(x), simple_upper(y));
                x == y || ux == uy || simple_lower(ux) == simple_lower(uy)
            })
    }
}

/// A character's one-character upper-case form (Java's
/// `Character.toUpperCase`): itself when Unicode maps it to several (`ß`).
fn simple_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// A character's one-character lower-case form (Java's
/// `Character.toLowerCase`). The one character Unicode lower-cases to two,
/// `İ` (U+0130) to `i` + U+0307, has `i` as its one-character mapping.
fn simple_lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// `name` in Unicode Normalization Form C (composed: `e` + U+0301 becomes
/// `é`), borrowed when it already is (every ASCII name is).
pub fn nfc(name: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(name.nfc().collect())
    }
}

/// Is `c` one of the invisible characters a file's column name loses
/// wherever it stands? Every Unicode format character (general category
/// Cf, from the tables of the `unicode-properties` crate, Unicode 18.0):
/// the byte order mark U+FEFF (a BOM of a file pasted after another, or
/// written before each name by some exporters), the zero-width space,
/// (non-)joiners and word joiner U+200B-U+200D, U+2060, the soft hyphen
/// U+00AD, the direction marks and embeddings U+200E, U+200F, U+061C,
/// U+202A-U+202E, U+2066-U+2069 (copied from web pages, word processors
/// and right-to-left text), the invisible operators U+2061-U+2064, the
/// interlinear annotation characters U+FFF9-U+FFFB, the Arabic and Syriac
/// number signs, tag characters U+E0001-U+E007F and the rest. None of them
/// shows on screen, so a name holding one looks like the declared name and
/// would silently not match it. They are removed anywhere in the name, not
/// only at its ends: `q<U+200B>ty` reads as `qty`. A declared name written
/// with them still binds the file's own text exactly (see `crate::silver::source`),
/// and the batch log shows every name that changed.
pub fn is_invisible_in_names(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    c.general_category() == GeneralCategory::Format
}

/// `name` without invisible characters ([`is_invisible_in_names`]), in
/// NFC ([`nfc`]), then trimmed if `trim`.
fn clean_name(name: &str, trim: bool) -> String {
    let visible: String = name
        .chars()
        .filter(|c| !is_invisible_in_names(*c))
        .collect();
    let composed = nfc(&visible).into_owned();
    if trim {
        composed.trim().to_string()
    } else {
        composed
    }
}

/// The names a CSV header's fields are read by, and the ones that differ
/// from the file's text. Deterministic, so that no column is ever lost:
/// - a name loses its invisible characters (every format character,
///   [`is_invisible_in_names`]), is read in Unicode NFC ([`nfc`]: a name
///   typed as `cafe` + U+0301 reads as `café`) and is trimmed;
/// - an empty one becomes `_c<position>` (Spark's name for an unnamed column);
/// - a name equal to an earlier one ignoring case ([`same_name_ignoring_case`],
///   after NFC: `café` and `cafe` + U+0301 are one name) gets `_<n>`, `n` being its occurrence number of that name (`qty`,
///   `qty`, `Qty` become `qty`, `qty_2`, `Qty_3`, as pandas'
///   `mangle_dupe_cols` and Spark's position suffixes keep duplicates apart);
/// - a name equal ignoring case to a column the engine keeps for itself
///   ([`super::RESERVED_COLUMNS`]: `_source_file`, `_batch_id`, ...) is read
///   as if that column came first: `_source_file` becomes `_source_file_2`,
///   so the file's value stays readable and the audit column keeps the
///   real lineage;
/// - a generated name never takes a name the header has anywhere (nor one
///   given already, nor a reserved one), ignoring case: the next free `_<n>`
///   is taken instead (`id,qty,qty,qty_2` reads as `id`, `qty`, `qty_3`,
///   `qty_2`; `a,,_c1` as `a`, `_c1_2`, `_c1`), so a column declared by its
///   own header name always reads that column.
///
/// The result has no two names equal ignoring case. A declared name that
/// matches two of the file's own names ignoring case is still an error
/// (see `crate::silver::source`), never a silent first pick.
pub fn map_header_names(fields: &[String]) -> (Vec<String>, Vec<HeaderRename>) {
    map_names(fields, true, same_name_ignoring_case)
}

/// [`map_header_names`]'s rule with names trimmed or not, and compared by
/// `same` (reserved names are always compared ignoring case).
fn map_names(
    fields: &[String],
    trim: bool,
    same: fn(&str, &str) -> bool,
) -> (Vec<String>, Vec<HeaderRename>) {
    let cleaned: Vec<String> = fields.iter().map(|f| clean_name(f, trim)).collect();
    let in_file = |name: &str| cleaned.iter().any(|t| same(t, name));
    let reserved = |name: &str| super::reserved_column(name).is_some();
    let mut names: Vec<String> = Vec::with_capacity(fields.len());
    let mut renames = Vec::new();
    for (position, original) in fields.iter().enumerate() {
        let own = cleaned
            .get(position)
            .map(String::as_str)
            .unwrap_or_default();
        let taken = |name: &str, names: &[String]| names.iter().any(|x| same(x, name));
        let (base, mut n) = if own.is_empty() {
            (format!("_c{position}"), 1)
        } else {
            let earlier = cleaned
                .iter()
                .take(position)
                .filter(|t| same(t, own))
                .count();
            // A reserved name counts as an occurrence before the file's own.
            (own.to_string(), earlier + 1 + usize::from(reserved(own)))
        };
        let generated = own.is_empty() || n > 1;
        let mut name = if n > 1 {
            format!("{base}_{n}")
        } else {
            base.clone()
        };
        while taken(&name, &names) || reserved(&name) || (generated && in_file(&name)) {
            n += 1;
            name = format!("{base}_{n}");
        }
        if name != *original {
            renames.push(HeaderRename {
                position,
                original: original.clone(),
                name: name.clone(),
            });
        }
        names.push(name);
    }
    (names, renames)
}

/// `"original" → name`, with why when the reason is not the general rule's
/// (invisible characters removed, a name not in NFC, a name the engine
/// keeps for itself).
fn describe_rename(r: &HeaderRename, position: bool) -> String {
    let mut invisible: Vec<String> = Vec::new();
    for c in r.original.chars().filter(|c| is_invisible_in_names(*c)) {
        let code = format!("U+{:04X}", c as u32);
        if !invisible.contains(&code) {
            invisible.push(code);
        }
    }
    let mut why = Vec::new();
    if !invisible.is_empty() {
        why.push(format!(
            "invisible character{} {} removed",
            if invisible.len() == 1 { "" } else { "s" },
            invisible.join(", ")
        ));
    }
    let visible: String = r
        .original
        .chars()
        .filter(|c| !is_invisible_in_names(*c))
        .collect();
    if nfc(&visible) != visible.as_str() {
        why.push("not in Unicode NFC: read in its composed form".to_string());
    }
    if let Some((column, meaning)) = super::reserved_column(&clean_name(&r.original, true)) {
        why.push(format!(
            "{column} is {meaning}; declare {} to read the file's column",
            r.name
        ));
    }
    format!(
        "{:?}{} → {}{}",
        r.original,
        if position {
            format!(" (column {})", r.position + 1)
        } else {
            String::new()
        },
        r.name,
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }
    )
}

/// What the batch log says about header names read under another name.
fn renames_note(renames: &[HeaderRename]) -> String {
    format!(
        "header names read as: {} (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)",
        renames
            .iter()
            .map(|r| describe_rename(r, false))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A file split into records, before audit columns are added.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitFile {
    pub format: SourceFormat,
    /// CSV only.
    pub dialect: Option<CsvDialect>,
    /// WHATWG name of the encoding the bytes were read as.
    pub encoding: String,
    /// CSV header names (or `_c0`.. without a header); Parquet column names; empty for JSON.
    pub header: Vec<String>,
    /// Exact text of the CSV header record, if any.
    pub header_text: Option<String>,
    /// CSV header names read under another name (trimmed, invisible
    /// characters removed, empty, duplicate, reserved); Parquet column names too.
    pub header_renames: Vec<HeaderRename>,
    /// Exact text of CSV records skipped before the header (banners), in order.
    pub skipped: Vec<String>,
    pub records: Vec<RawRecord>,
    /// Observations for the batch log ("empty file: 0 records", hints).
    pub notes: Vec<String>,
    /// JSON only: the top-level keys of its records, first seen first, up
    /// to [`MAX_KEYS`] (the batch log names those no declared column reads).
    pub keys: Vec<String>,
}

const UTF8: &str = "utf-8";

/// Most records one file may hold. The browser tab keeps every table in
/// memory (wasm32: 4 GiB at most, often less); a 3-million-row Parquet file
/// ran it out of memory, a 336,000-row CSV did not.
pub const MAX_RECORDS: usize = 500_000;

/// Largest file accepted by one ingest (bytes), and the most text a file's
/// records may come to once read: a Parquet file's rows become JSON
/// payloads, which a well-compressed file can make hundreds of times larger
/// than itself. Larger is refused before anything is written: the browser
/// tab holds the whole lake in memory.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

fn too_many(records: usize) -> EngineError {
    EngineError::Ingest(format!(
        "the file holds {records} records; the playground takes at most {MAX_RECORDS} per file (the browser keeps everything in memory). Nothing was written. Split it, or sample it first."
    ))
}

/// Splits a file into records (see the module docs). Errors only for bad
/// options or a file that cannot be split at all; then nothing is written.
pub fn split_file(bytes: &[u8], opts: &IngestOptions) -> Result<SplitFile> {
    split_file_reporting(bytes, opts, &mut |_, _| {})
}

/// How far a split has read, for a progress bar: `report(bytes, records)`
/// is called each time another 2% of the file (at least 256 KiB) has been
/// read, with the bytes of the file read so far (of the file as given, also
/// when it was decoded from another encoding) and the records found so far.
struct ReadProgress<'r> {
    report: &'r mut dyn FnMut(usize, usize),
    /// Bytes of the file as given, and of the body being split.
    file_len: usize,
    body_len: usize,
    /// The next body offset to report at, and the step.
    next: usize,
    step: usize,
}

impl<'r> ReadProgress<'r> {
    fn new(report: &'r mut dyn FnMut(usize, usize), file_len: usize, body_len: usize) -> Self {
        let step = (body_len / 50).max(256 * 1024);
        ReadProgress {
            report,
            file_len,
            body_len,
            next: step,
            step,
        }
    }

    /// The split has reached byte `offset` of the body with `records` found.
    fn at(&mut self, offset: usize, records: usize) {
        if offset < self.next {
            return;
        }
        self.next = offset + self.step;
        let read = (offset as u128 * self.file_len as u128 / self.body_len.max(1) as u128) as usize;
        (self.report)(read.min(self.file_len), records);
    }
}

/// [`split_file`], calling `report(bytes, records)` as it goes: the bytes of
/// `bytes` read so far and the records found so far, about every 2% of the
/// file (the ingest's progress bar, [`crate::progress::Progress::Reading`]).
/// A Parquet file is read in one step.
pub fn split_file_reporting(
    bytes: &[u8],
    opts: &IngestOptions,
    report: &mut dyn FnMut(usize, usize),
) -> Result<SplitFile> {
    let mut notes = Vec::new();
    let is_parquet = bytes.starts_with(b"PAR1");
    if opts.format == Some(SourceFormat::Parquet) || (opts.format.is_none() && is_parquet) {
        return split_parquet(bytes);
    }
    let (body, encoding) = decode(bytes, opts.encoding.as_deref(), &mut notes)?;
    // Text has no NUL bytes to speak of (UTF-16 was decoded above); an image or
    // an archive starts with a magic number or is full of them. A stray NUL in
    // a text file stays in its record.
    let sample = &body[..body.len().min(8192)];
    let nuls = sample.iter().filter(|b| **b == 0).count();
    const MAGIC: [&[u8]; 6] = [
        b"\x89PNG",
        b"PK\x03\x04",
        b"\x1f\x8b",
        b"%PDF",
        b"\xff\xd8\xff",
        b"GIF8",
    ];
    if MAGIC.iter().any(|m| body.starts_with(m)) || (nuls >= 4 && nuls * 100 > sample.len()) {
        return Err(EngineError::Ingest(
            "the file looks binary (it has NUL bytes), not CSV, JSON or Parquet; nothing was written".into(),
        ));
    }
    let body: &[u8] = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&body);
    if body.iter().all(u8::is_ascii_whitespace) {
        notes.push(if body.is_empty() {
            "empty file: 0 records".to_string()
        } else {
            "blank file: 0 records".to_string()
        });
        return Ok(SplitFile {
            format: opts.format.unwrap_or(SourceFormat::Csv),
            dialect: None,
            encoding,
            header: vec![],
            header_text: None,
            header_renames: vec![],
            skipped: vec![],
            records: vec![],
            notes,
            keys: vec![],
        });
    }
    let format = opts.format.unwrap_or_else(|| text_format(body));
    let progress = &mut ReadProgress::new(report, bytes.len(), body.len());
    let mut split = match format {
        SourceFormat::Csv => split_csv(body, opts, &mut notes, progress)?,
        SourceFormat::JsonLines => split_json_lines(body, &mut notes, progress),
        SourceFormat::JsonArray => split_json_array(body, &mut notes, progress),
        SourceFormat::Json => split_json_stream(body, progress),
        SourceFormat::Parquet | SourceFormat::Kafka => not_text_file()?,
    };
    split.encoding = encoding;
    if split.records.len() > MAX_RECORDS {
        return Err(too_many(split.records.len()));
    }
    let corrupt = split
        .records
        .iter()
        .filter(|r| r.corrupt_reason.is_some())
        .count();
    if split.records.is_empty() {
        notes.push(if split.header_text.is_some() {
            "header only: 0 records".to_string()
        } else {
            "no records".to_string()
        });
    } else if corrupt > 0 {
        notes.push(format!(
            "{corrupt} of {} records flagged in _corrupt_reason (kept as they arrived)",
            split.records.len()
        ));
    }
    split.notes.splice(0..0, notes);
    Ok(split)
}

/// Kafka messages are polled, not split from a file (Parquet was handled above).
fn not_text_file() -> Result<SplitFile> {
    Err(EngineError::Internal(
        "Parquet is handled before decoding".into(),
    ))
}

/// The format of a text file read without a format option, from its
/// content as a whole, never from its first byte or line alone (a JSON
/// Lines file may open with a tombstone `null`, a bare `42`, an array or a
/// record cut short; a CSV file may open with a banner `{report}` or
/// bracketed names `[id],[name]`). Each of the first [`SAMPLED_LINES`]
/// non-blank lines is JSON-like ([`json_like_line`]) or not; a `{` or `[`
/// alone on a line, or a line opening with `}` or `]`, means values
/// spanning lines (pretty-printed). Then:
/// - [`SourceFormat::JsonArray`]: the file is one JSON array, or opens
///   like one (`[` alone on its first line, or `[` then `{`, `[` or `"` on a
///   first line that is not a whole value) with no stream of values after it,
///   or (below) opens with a JSON-like `[` line and ends with `]`;
/// - [`SourceFormat::JsonLines`]: no value spans lines, at least one line
///   opens an object (or two lines are whole arrays), and the JSON-like
///   lines outnumber the others or the first line is one (an object
///   followed by a field, `{"a":1}\t5`, counts as text);
/// - [`SourceFormat::Json`] (a stream): the first line opens an object
///   (`{` alone, JSON-like, or any `{` line when no other line is text or a
///   line closes a value), or the file's first values, one per line, lead
///   to an object ([`values_lead_to_an_object`]);
/// - otherwise CSV.
fn text_format(body: &[u8]) -> SourceFormat {
    // Comment lines opening the file (`// exported by …`, `# note`) say
    // nothing of its format; the JSON readers keep each as a flagged record.
    let after = after_comment_lines(body);
    if after >= body.len() {
        // Nothing but comment lines: each a flagged record, none a CSV header.
        return SourceFormat::JsonLines;
    }
    let body = &body[after..];
    let mut lines = line_ranges(body)
        .map(|(s, e)| body[s..e].trim_ascii())
        .filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or_default();
    let whole_value = |l: &[u8]| serde_json::from_slice::<IgnoredAny>(l).is_ok();
    let start = skip_ws(body, 0);
    if body.get(start) == Some(&b'[') {
        let end = json_value_end(body, start).map(|end| skip_ws(body, end));
        if end.is_some_and(|end| end >= body.len()) {
            return SourceFormat::JsonArray;
        }
        let inner = first.get(1..).map(<[u8]>::trim_ascii_start).unwrap_or_default();
        let opens_array = first == b"[" || matches!(inner.first(), Some(b'{' | b'[' | b'"'));
        if opens_array && !whole_value(first) {
            return match end {
                Some(_) if values_lead_to_an_object(body) => SourceFormat::Json,
                _ => SourceFormat::JsonArray,
            };
        }
    }
    // Lines opening with `{` that are not JSON-like (`{@…}`, a banner
    // `{report}`) count for neither side.
    let (mut json, mut not_json, mut objects, mut arrays) = (0usize, 0usize, 0usize, 0usize);
    let (mut openers, mut closers) = (0usize, 0usize);
    for line in lines.by_ref().take(SAMPLED_LINES) {
        let opener = matches!(line, b"{" | b"[");
        let closer = matches!(line.first(), Some(b'}' | b']'));
        (openers, closers) = (openers + usize::from(opener), closers + usize::from(closer));
        if json_like_line(line) {
            json += 1;
            objects += usize::from(line.first() == Some(&b'{'));
            arrays += usize::from(line.first() == Some(&b'[') && whole_value(line));
        } else if line.first() != Some(&b'{') || json_value_end(line, 0).is_some() {
            // Text, or an object followed by a field (`{"a":1}\t5`: a
            // delimited row whose first column is JSON).
            not_json += 1;
        }
    }
    // `{` or `[` alone on a line, or a line closing a value (`}`, `]`):
    // values over several lines (one end may be cut off or broken), which
    // JSON Lines has none of.
    let multi_line_values = openers > 0 || closers > 0;
    let first_is_json = json_like_line(first);
    // (Lines that are each a whole array are JSON Lines too, jsonlines.org's
    // example: records that are not objects, flagged as such.)
    if (objects > 0 || arrays > 1) && !multi_line_values && (json > not_json || first_is_json) {
        return SourceFormat::JsonLines;
    }
    // A first line opening an object: JSON unless other lines are text (a
    // CSV banner `{report}` over a header and rows) and none closes a value.
    let opens_object = first.first() == Some(&b'{')
        && (first_is_json || first == b"{" || not_json == 0 || closers > 0);
    if opens_object || values_lead_to_an_object(body) {
        return SourceFormat::Json;
    }
    // A first line that is a whole array (text after it is a flagged
    // record), or an array whose first element is no object, array or
    // string that ends with `]` (a CSV row of bracketed fields,
    // `[2024-01-01 10:00],INFO`, ends with text).
    if first.first() == Some(&b'[')
        && (whole_value(first) || (first_is_json && trim_end_ws(body).ends_with(b"]")))
    {
        return SourceFormat::JsonArray;
    }
    SourceFormat::Csv
}

/// The offset of the first line that is neither blank nor a comment line
/// ([`comment_line_end`]), or the body's end.
fn after_comment_lines(body: &[u8]) -> usize {
    after_comment_lines_from(body, 0)
}

/// [`after_comment_lines`] from `at`.
fn after_comment_lines_from(body: &[u8], at: usize) -> usize {
    let mut at = skip_ws(body, at);
    while let Some(end) = comment_line_end(body, at) {
        at = skip_ws(body, end);
    }
    at
}

/// Where the comment starting at `at` ends (before its line break): `//`
/// or `#` first on its line, to the line's end; or `/*` first on its line,
/// to the end of the line holding its `*/` when nothing but blanks follows
/// that (else to the end of its first line). JSON has no comments, but
/// config-style exporters (JSONC, JSON5) write them; the JSON readers keep
/// such a comment as one flagged record of its own ([`comment_record`]),
/// never as part of the record after it.
fn comment_line_end(body: &[u8], at: usize) -> Option<usize> {
    let rest = body.get(at..)?;
    let block = rest.starts_with(b"/*");
    if !(block || rest.starts_with(b"//") || rest.starts_with(b"#")) {
        return None;
    }
    let line_start = body[..at].iter().rposition(|b| is_break(*b)).map_or(0, |p| p + 1);
    if !body[line_start..at].iter().all(|b| *b == b' ' || *b == b'\t') {
        return None;
    }
    let line_end = |from: usize| from + memchr::memchr2(b'\n', b'\r', &body[from..]).unwrap_or(body.len() - from);
    if block {
        if let Some(close) = memchr::memmem::find(&rest[2..], b"*/").map(|i| at + 2 + i + 2) {
            let end = line_end(close);
            if body[close..end].iter().all(u8::is_ascii_whitespace) {
                return Some(end);
            }
        }
    }
    Some(line_end(at))
}

/// A comment line of a JSON file as its own flagged record.
fn comment_record(raw: &[u8], offset: usize, line: i64) -> RawRecord {
    let (text, bytes, reason) = text_of(raw, offset, line);
    RawRecord {
        text,
        bytes,
        line,
        corrupt_reason: reason.or_else(|| {
            Some("a comment line, which JSON does not have (JSONC / JSON5 style): kept as a row of its own, not read as a record".to_string())
        }),
        warning: None,
    }
}

/// Is this line (trimmed) a JSON record's line: a whole JSON value, or an
/// object or array that opens like JSON (`{"`, `{}`, `[` then a value) and
/// either does not parse (cut short) or parses with only `,` or more values
/// after it on the line (`{…},`, `{…}{…}`)? A CSV line whose first field is
/// an object (`{"a":1}\t5`) is not: its object is followed by a field.
fn json_like_line(line: &[u8]) -> bool {
    if serde_json::from_slice::<IgnoredAny>(line).is_ok() {
        return true;
    }
    let opens = match line {
        [b'{', rest @ ..] => matches!(rest.trim_ascii_start().first(), Some(b'"' | b'}')),
        [b'[', ..] => array_opens_like_json(line),
        _ => false,
    };
    if !opens {
        return false;
    }
    match json_value_end(line, 0) {
        None => true,
        Some(end) => {
            let rest = line[end..].trim_ascii_start();
            let rest = rest.strip_prefix(b",").unwrap_or(rest).trim_ascii_start();
            rest.is_empty() || matches!(rest.first(), Some(b'{' | b'['))
        }
    }
}

/// Does this line open a JSON array: `[`, then `]` or a first element that
/// is a JSON value (or `NaN`, `Infinity`, `-Infinity`, which producers write
/// as if they were JSON) followed by `,`, `]` or the line's end? `[Id]`,
/// `[INFO]` and `[2024-01-01 10:00]` (bracketed CSV fields and log stamps)
/// do not.
fn array_opens_like_json(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"[") else {
        return false;
    };
    let at = skip_ws(rest, 0);
    if rest.get(at) == Some(&b']') {
        return true;
    }
    let end = json_value_end(rest, at).or_else(|| {
        [&b"NaN"[..], b"Infinity", b"-Infinity"]
            .iter()
            .find(|t| rest[at..].starts_with(t))
            .map(|t| at + t.len())
    });
    end.is_some_and(|end| matches!(rest.get(skip_ws(rest, end)), None | Some(b',' | b']')))
}

/// How many non-blank lines [`text_format`] looks at.
const SAMPLED_LINES: usize = 1000;

/// Does the file start with whole JSON values, each on lines of its own, up to
/// one that opens an object (a pretty-printed stream whose first record is
/// a tombstone `null`, a bare `42` or an array)? A CSV file starts with a
/// name or a value followed by a delimiter; a column of numbers has no object.
fn values_lead_to_an_object(body: &[u8]) -> bool {
    let mut at = skip_ws(body, 0);
    for values in 0..SAMPLED_LINES {
        match body.get(at) {
            // An object opening as JSON does (`{"` or `{}`), after values.
            Some(b'{') => {
                let inside = skip_ws(body, at + 1);
                return values > 0 && matches!(body.get(inside), Some(b'"' | b'}'));
            }
            Some(b) if starts_value(*b) => {}
            _ => return false,
        }
        // (`12abc` does not parse: a number ends at a delimiter.) Values one
        // per line: `1\t{…}` is a tab-separated row, not two values.
        let Some(end) = json_value_end(body, at) else {
            return false;
        };
        at = skip_ws(body, end);
        if at < body.len() && !has_break(&body[end..at]) {
            return false;
        }
    }
    false
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The file as UTF-8 bytes: unchanged for UTF-8 (records are checked one by
/// one later), decoded for a declared encoding or a UTF-16 byte-order mark.
fn decode<'a>(
    bytes: &'a [u8],
    label: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<(std::borrow::Cow<'a, [u8]>, String)> {
    let declared = match label.map(str::trim).filter(|l| !l.is_empty()) {
        Some(l) => Some(encoding_rs::Encoding::for_label(l.as_bytes()).ok_or_else(|| {
            EngineError::Ingest(format!(
                "unknown encoding '{l}'; use a name such as utf-8, windows-1251, latin1 or utf-16le. Nothing was written."
            ))
        })?),
        None => None,
    };
    let bom = encoding_rs::Encoding::for_bom(bytes).map(|(e, _)| e);
    let enc = match (declared, bom) {
        (Some(e), _) => e,
        (None, Some(e)) if e != encoding_rs::UTF_8 => e,
        _ => return Ok((std::borrow::Cow::Borrowed(bytes), UTF8.to_string())),
    };
    if enc == encoding_rs::UTF_8 {
        return Ok((std::borrow::Cow::Borrowed(bytes), UTF8.to_string()));
    }
    let (text, used, had_errors) = enc.decode(bytes);
    let name = used.name().to_ascii_lowercase();
    notes.push(if had_errors {
        format!("decoded from {name}; some byte sequences were not valid {name} and show as U+FFFD")
    } else {
        format!("decoded from {name}")
    });
    Ok((
        std::borrow::Cow::Owned(text.into_owned().into_bytes()),
        name,
    ))
}

/// A record's text, with its bytes and a reason when they are not UTF-8.
/// `offset` is the record's byte offset in the file, `line` its first line.
fn text_of(raw: &[u8], offset: usize, line: i64) -> (String, Option<Vec<u8>>, Option<String>) {
    match std::str::from_utf8(raw) {
        Ok(s) => (s.to_string(), None, None),
        Err(e) => {
            let bad_at = offset + e.valid_up_to();
            let bad_line = line + line_breaks(&raw[..e.valid_up_to()], raw.get(e.valid_up_to()).copied());
            (
                String::from_utf8_lossy(raw).into_owned(),
                Some(raw.to_vec()),
                Some(format!(
                    "invalid UTF-8 at line {bad_line}, byte {bad_at} (0x{:02X}); the original bytes are in _raw_bytes",
                    raw[e.valid_up_to()]
                )),
            )
        }
    }
}

fn ascii_option(name: &str, c: Option<char>) -> Result<Option<u8>> {
    match c {
        None => Ok(None),
        Some(c) if c.is_ascii() && c != '\n' && c != '\r' => Ok(Some(c as u8)),
        Some(c) => Err(EngineError::Ingest(format!(
            "the {name} must be one ASCII character other than a line break, not {c:?}; nothing was written"
        ))),
    }
}

/// Line breaks in `bytes`: LF, CRLF (once) and a lone CR (old Mac files).
/// `next` is the byte after `bytes`, so a CR at the end followed by LF counts once.
fn line_breaks(bytes: &[u8], next: Option<u8>) -> i64 {
    // Only the break bytes are visited (memchr skips the others a word at a time).
    let mut n = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        match bytes[i] {
            b'\r' if bytes.get(i + 1).copied().or(next) == Some(b'\n') => {}
            _ => n += 1,
        }
    }
    n
}

/// Each line of `body` as (start, end) byte offsets, the end before its
/// line break. A break is LF, CRLF (once) or a lone CR (old Mac files), as
/// [`line_breaks`] counts them, so every reader numbers lines alike. Text
/// after the last break is a line; an empty one after a final break is too.
/// Read lazily: format detection looks at the first lines of a file only.
fn line_ranges(body: &[u8]) -> impl Iterator<Item = (usize, usize)> + Clone + '_ {
    let mut start = Some(0usize);
    let mut breaks = memchr::memchr2_iter(b'\n', b'\r', body);
    std::iter::from_fn(move || {
        let from = start?;
        match breaks.next() {
            Some(i) => {
                start = Some(if body[i] == b'\r' && body.get(i + 1) == Some(&b'\n') {
                    breaks.next();
                    i + 2
                } else {
                    i + 1
                });
                Some((from, i))
            }
            None => {
                start = None;
                Some((from, body.len()))
            }
        }
    })
}

/// A reader of every record (the header too), whatever its field count.
/// `escape` is the character that makes the next one literal inside a quoted
/// field (the csv crate's `escape`; doubled quotes keep working as well).
pub(crate) fn csv_reader(
    bytes: &[u8],
    delimiter: u8,
    quote: u8,
    escape: Option<u8>,
) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .quote(quote)
        .escape(escape)
        .from_reader(bytes)
}

/// The bytes that separate and quote a CSV file's fields.
#[derive(Debug, Clone, Copy)]
struct Dialect {
    delimiter: u8,
    quote: u8,
    escape: Option<u8>,
}

impl Dialect {
    fn reader<'a>(&self, bytes: &'a [u8]) -> csv::Reader<&'a [u8]> {
        csv_reader(bytes, self.delimiter, self.quote, self.escape)
    }
}

/// Why a CSV record's quoting is not well-formed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum QuoteProblem {
    /// Text right after the closing quote of field `field` (1-based); the csv
    /// crate would glue it to the field (`"a"b` → `ab`), garbling the value.
    /// `backslash`: that quote follows a backslash (`\"`), the usual sign of
    /// a file that escapes quotes with a backslash.
    TextAfterQuote { field: usize, backslash: bool },
    /// A quoted field (1-based) still open where the record ends; `open` is
    /// the byte offset of its opening quote in the record.
    Unterminated { field: usize, open: usize },
    /// The reader failed (only on I/O, which bytes in memory never do).
    Unreadable(String),
}

/// What [`check_quoting`] found in one record's bytes.
#[derive(Debug, Default)]
struct Quoting {
    problem: Option<QuoteProblem>,
    /// A quote inside an unquoted field (`12" ruler`): read literally, as
    /// Spark and Python's csv module do, but never inside a record that
    /// spans lines (there it is the sign of a quote that swallowed lines).
    stray: bool,
    /// A quoted field holding a line break closes with a quote (run) that
    /// directly follows a delimiter or a line break: exactly where a later
    /// field's opening quote stands when an earlier quote was left open.
    suspicious: bool,
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Does `raw` hold a line break?
fn has_break(raw: &[u8]) -> bool {
    memchr::memchr2(b'\n', b'\r', raw).is_some()
}

/// Does the quote at `close` (closing the field opened at `open`) start a run
/// of quotes right after a delimiter or a line break?
fn closes_after_separator(raw: &[u8], open: usize, close: usize, d: Dialect) -> bool {
    let mut start = close;
    while start > open + 1 && raw.get(start - 1) == Some(&d.quote) {
        start -= 1;
    }
    start > open + 1
        && raw
            .get(start - 1)
            .is_some_and(|b| *b == d.delimiter || is_break(*b))
}

/// Checks one record's quoting with the csv crate's own state machine
/// (csv-core's NFA: a quote opens a field only at its start, a doubled quote
/// or the escape character makes a literal quote inside it, and a line break
/// outside quotes ends the record).
fn check_quoting(raw: &[u8], d: Dialect) -> Quoting {
    // No quote at all (most records of most files): no field is quoted and
    // none holds a stray quote, which is what the walk below would find.
    if memchr::memchr(d.quote, raw).is_none() {
        return Quoting::default();
    }
    #[derive(Clone, Copy)]
    enum S {
        Start,
        Plain,
        Quoted,
        Escaped,
        AfterQuote,
    }
    let mut q = Quoting::default();
    let mut s = S::Start;
    let mut field = 1usize;
    let mut open = 0usize;
    let mut spans = false;
    for (i, &b) in raw.iter().enumerate() {
        s = match s {
            S::Start if b == d.quote => {
                open = i;
                spans = false;
                S::Quoted
            }
            S::Start | S::Plain if b == d.delimiter => {
                field += 1;
                S::Start
            }
            S::Start | S::Plain if is_break(b) => return q,
            S::Start | S::Plain => {
                q.stray |= b == d.quote;
                S::Plain
            }
            S::Quoted if b == d.quote => S::AfterQuote,
            S::Quoted if Some(b) == d.escape => S::Escaped,
            S::Quoted | S::Escaped => {
                spans |= is_break(b);
                S::Quoted
            }
            S::AfterQuote if b == d.quote => S::Quoted,
            S::AfterQuote => {
                q.suspicious |= spans && closes_after_separator(raw, open, i - 1, d);
                if b == d.delimiter {
                    field += 1;
                    S::Start
                } else if is_break(b) {
                    return q;
                } else {
                    q.problem = Some(QuoteProblem::TextAfterQuote {
                        field,
                        backslash: i >= 2 && raw.get(i - 2) == Some(&b'\\'),
                    });
                    return q;
                }
            }
        };
    }
    match s {
        S::Quoted | S::Escaped => q.problem = Some(QuoteProblem::Unterminated { field, open }),
        S::AfterQuote => {
            q.suspicious |= spans && closes_after_separator(raw, open, raw.len() - 1, d);
        }
        S::Start | S::Plain => {}
    }
    q
}

/// Reads the next record of `reader` (which reads `body[base..]`) into
/// `rec`: its byte offset in `body` and its bytes without line terminators.
fn read_raw<'a>(
    body: &'a [u8],
    base: usize,
    reader: &mut csv::Reader<&'a [u8]>,
    rec: &mut csv::ByteRecord,
) -> std::result::Result<Option<(usize, &'a [u8])>, csv::Error> {
    let start = base + reader.position().byte() as usize;
    if !reader.read_byte_record(rec)? {
        return Ok(None);
    }
    let begin = rec
        .position()
        .map(|p| base + p.byte() as usize)
        .unwrap_or(start);
    let end = (base + reader.position().byte() as usize).min(body.len());
    // The reader's range can include the previous record's CR; no record starts with one.
    let mut raw = body.get(begin..end).unwrap_or_default();
    let mut offset = begin;
    while let [b'\r' | b'\n', rest @ ..] = raw {
        raw = rest;
        offset += 1;
    }
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    Ok(Some((offset, raw)))
}

/// Does `raw` hold a quote that is not one of a doubled pair (`""`)? Only
/// such a quote tells whether the quotes before it were in step: a doubled
/// pair reads the same inside a quoted field (one quote) and at a field's
/// start (an empty field).
fn has_lone_quote(raw: &[u8], quote: u8) -> bool {
    raw.split(|b| *b != quote).any(|run| run.len() % 2 == 1)
}

/// How many records after a suspicious one (see [`Quoting::suspicious`]) are
/// looked at, at most, before it is believed.
const LOOKAHEAD: usize = 32;

/// Is a record that spans lines one record, or did a quote left open swallow
/// the lines after it? It is one record when its quoting has no problem, no
/// quote stands inside an unquoted field, and it has the `expected` field
/// count (when known). If moreover a field spanning lines closes right after
/// a delimiter or a line break (where the opening quote of a later field
/// would be), the records after it (from `next_at`) must be well-formed up to
/// and including the first one with a quote that is not a doubled pair: read
/// with the quotes out of step, that quote would stand inside an unquoted
/// field or leave text after a closing one.
fn spanning_ok(
    body: &[u8],
    d: Dialect,
    q: &Quoting,
    fields: usize,
    expected: Option<usize>,
    next_at: usize,
) -> bool {
    let well_formed = |q: &Quoting, fields: usize| {
        q.problem.is_none() && !q.stray && expected.is_none_or(|e| e == fields)
    };
    if !well_formed(q, fields) {
        return false;
    }
    if !q.suspicious {
        return true;
    }
    let rest = body.get(next_at..).unwrap_or_default();
    let mut reader = d.reader(rest);
    let mut rec = csv::ByteRecord::new();
    for _ in 0..LOOKAHEAD {
        match read_raw(body, next_at, &mut reader, &mut rec) {
            Ok(None) => return true,
            Err(_) => return false,
            Ok(Some((_, raw))) => {
                if !well_formed(&check_quoting(raw, d), rec.len()) {
                    return false;
                }
                if has_lone_quote(raw, d.quote) {
                    return true;
                }
            }
        }
    }
    true
}

/// One CSV record as found in the file.
struct Found<'a> {
    /// Byte offset of its first byte in the body.
    offset: usize,
    /// Its exact bytes, without the line terminator.
    raw: &'a [u8],
    problem: Option<QuoteProblem>,
    /// The csv reader's record spanned lines but was not one record (see
    /// [`spanning_ok`]): this record is its first line, and reading went on
    /// at the next line.
    recovered: bool,
    /// It is the first record of a new csv reader (the body's start, or the
    /// line after a recovered one), where the reader drops a byte order mark.
    at_reader_start: bool,
}

/// Reads a CSV body record by record as the csv crate does, except that a
/// record spanning lines is kept only when it is well-formed (see
/// [`spanning_ok`]); otherwise its first line becomes a record of its own
/// and reading resumes at the next line, as Spark's line-based CSV reader
/// (`multiLine` off) does. So an unterminated quote costs one line, never
/// the records after it, while quoted newlines in well-formed records work.
struct CsvScanner<'a> {
    body: &'a [u8],
    dialect: Dialect,
    /// Where `reader` started in `body`.
    base: usize,
    reader: csv::Reader<&'a [u8]>,
    /// Fields of the last record returned.
    record: csv::ByteRecord,
}

impl<'a> CsvScanner<'a> {
    fn new(body: &'a [u8], dialect: Dialect) -> Self {
        CsvScanner {
            body,
            dialect,
            base: 0,
            reader: dialect.reader(body),
            record: csv::ByteRecord::new(),
        }
    }

    fn restart(&mut self, at: usize) {
        self.base = at.min(self.body.len());
        self.reader = self
            .dialect
            .reader(self.body.get(self.base..).unwrap_or_default());
    }

    /// The fields of the record [`CsvScanner::next`] returned last.
    fn record(&self) -> &csv::ByteRecord {
        &self.record
    }

    /// The next record; `expected` is the field count a record spanning
    /// lines must have to be one record (`None`: not known yet).
    fn next(&mut self, expected: Option<usize>) -> Option<Found<'a>> {
        let body = self.body;
        let start = self.base + self.reader.position().byte() as usize;
        let (offset, raw) = match read_raw(body, self.base, &mut self.reader, &mut self.record) {
            Ok(Some(found)) => found,
            Ok(None) => return None,
            Err(e) => {
                // The csv crate only fails on I/O; keep the rest as one record.
                let mut raw = body.get(start..).unwrap_or_default();
                while let [rest @ .., b'\r' | b'\n'] = raw {
                    raw = rest;
                }
                self.restart(body.len());
                self.record.clear();
                return Some(Found {
                    offset: start,
                    raw,
                    problem: Some(QuoteProblem::Unreadable(e.to_string())),
                    recovered: false,
                    at_reader_start: false,
                });
            }
        };
        let at_reader_start = offset == self.base;
        let quoting = check_quoting(raw, self.dialect);
        let next_at = self.base + self.reader.position().byte() as usize;
        if !has_break(raw)
            || spanning_ok(
                body,
                self.dialect,
                &quoting,
                self.record.len(),
                expected,
                next_at,
            )
        {
            if let Some(QuoteProblem::Unterminated { open, .. }) = quoting.problem {
                fields_without_open_quote(raw, open, self.dialect, &mut self.record);
            }
            return Some(Found {
                offset,
                raw,
                problem: quoting.problem,
                recovered: false,
                at_reader_start,
            });
        }
        // Line-level recovery: the first line alone, then the next line.
        let cut = raw.iter().copied().position(is_break).unwrap_or(raw.len());
        let line = raw.get(..cut).unwrap_or(raw);
        self.restart(offset + cut + 1);
        let mut alone = self.dialect.reader(line);
        if !matches!(alone.read_byte_record(&mut self.record), Ok(true)) {
            self.record.clear();
        }
        let problem =
            check_quoting(line, self.dialect)
                .problem
                .unwrap_or(QuoteProblem::Unterminated {
                    field: self.record.len().max(1),
                    open: line.len(),
                });
        if let QuoteProblem::Unterminated { open, .. } = problem {
            fields_without_open_quote(line, open, self.dialect, &mut self.record);
        }
        Some(Found {
            offset,
            raw: line,
            problem: Some(problem),
            recovered: true,
            at_reader_start,
        })
    }
}

/// The fields of a line whose quote opened at byte `open` (at a field's
/// start) is never closed: the fields before it as the csv crate reads them,
/// then the rest of the line without that quote, split at every delimiter
/// (no quoting from there on). So the line has the field count it would
/// have had with the quote closed where the user most likely meant: a
/// header `code,"label,w` reads as `code`, `label`, `w`, and detection
/// (delimiter, lines before the header) counts it as a line of 3 fields,
/// not as a banner of 2.
fn fields_without_open_quote(line: &[u8], open: usize, d: Dialect, record: &mut csv::ByteRecord) {
    record.clear();
    let before = line.get(..open).unwrap_or_default();
    if !before.is_empty() {
        let mut fields = csv::ByteRecord::new();
        if matches!(d.reader(before).read_byte_record(&mut fields), Ok(true)) {
            // Its last field is the (empty) start of the unterminated one.
            for f in fields.iter().take(fields.len().saturating_sub(1)) {
                record.push_field(f);
            }
        }
    }
    for piece in line
        .get(open + 1..)
        .unwrap_or_default()
        .split(|b| *b == d.delimiter)
    {
        record.push_field(piece);
    }
}

/// The learner-facing reason for a record's quoting problem; `header` names
/// the fields when known.
fn quote_reason(problem: &QuoteProblem, header: &[String], recovered: bool) -> String {
    let field = |f: usize| match header.get(f.wrapping_sub(1)) {
        Some(name) => format!("field {f} ({name})"),
        None => format!("field {f}"),
    };
    match problem {
        QuoteProblem::Unterminated { field: f, .. } if recovered => format!(
            "unterminated quote in {}: the quote opened on this line is never closed, so the line is kept as it arrived and the next line is read as a new record",
            field(*f)
        ),
        QuoteProblem::Unterminated { field: f, .. } => format!(
            "unterminated quote in {}: the quote opened on this line is never closed before the file ends; kept as it arrived",
            field(*f)
        ),
        QuoteProblem::TextAfterQuote { field: f, backslash } => {
            let mut s = format!(
                "{} has text after its closing quote: a quote inside a quoted field must be doubled (\"\")",
                field(*f)
            );
            if *backslash {
                s.push_str(
                    "; this one follows a backslash (\\\"): the file seems to escape quotes with a backslash, read it again with escape '\\'",
                );
            }
            s
        }
        QuoteProblem::Unreadable(e) => format!("CSV could not be read from here on: {e}"),
    }
}

/// Field counts of the first records for one dialect.
fn sample_counts(sample: &[u8], d: Dialect) -> Vec<usize> {
    let mut scanner = CsvScanner::new(sample, d);
    let mut counts = Vec::new();
    while counts.len() < 50 {
        if scanner.next(None).is_none() {
            break;
        }
        counts.push(scanner.record().len());
    }
    counts
}

/// The most common field count and how many records have it.
fn modal(counts: &[usize]) -> (usize, usize) {
    let mut best = (1, 0);
    for &c in counts {
        let n = counts.iter().filter(|x| **x == c).count();
        if n > best.1 || (n == best.1 && c > best.0) {
            best = (c, n);
        }
    }
    best
}

fn looks_numeric(field: &[u8]) -> bool {
    std::str::from_utf8(field)
        .ok()
        .map(str::trim)
        .is_some_and(|s| !s.is_empty() && s.parse::<f64>().is_ok())
}

fn split_csv(
    body: &[u8],
    opts: &IngestOptions,
    notes: &mut Vec<String>,
    progress: &mut ReadProgress<'_>,
) -> Result<SplitFile> {
    let quote = ascii_option("quote", opts.quote)?.unwrap_or(b'"');
    let escape = ascii_option("escape", opts.escape)?;
    let mut detected = Vec::new();
    // A sample of whole lines for detection.
    let mut cut = body.len().min(64 * 1024);
    if cut < body.len() {
        cut = body[..cut].iter().rposition(|b| is_break(*b)).unwrap_or(cut);
    }
    let sample = &body[..cut];
    let dialect_for = |delimiter| Dialect {
        delimiter,
        quote,
        escape,
    };
    let delimiter = match ascii_option("delimiter", opts.delimiter)? {
        Some(d) => d,
        None => {
            detected.push("delimiter".to_string());
            // The candidate whose modal field count (> 1) covers most records wins.
            let mut best = (b',', (1, 0));
            for d in [b',', b';', b'\t', b'|'] {
                if d == quote || Some(d) == escape {
                    continue;
                }
                let m = modal(&sample_counts(sample, dialect_for(d)));
                if m.0 > 1 && (m.1 > best.1 .1 || (m.1 == best.1 .1 && m.0 > best.1 .0)) {
                    best = (d, m);
                }
            }
            best.0
        }
    };
    if delimiter == quote || escape.is_some_and(|e| e == quote || e == delimiter) {
        return Err(EngineError::Ingest(format!(
            "the delimiter ({:?}), the quote ({:?}) and the escape ({}) must be three different characters; nothing was written",
            delimiter as char,
            quote as char,
            escape.map(|e| format!("{:?}", e as char)).unwrap_or_else(|| "none".into())
        )));
    }
    let dialect = dialect_for(delimiter);
    let counts = sample_counts(sample, dialect);
    let (usual, _) = modal(&counts);
    let skip_rows = match opts.skip_rows {
        Some(n) => n,
        None => {
            detected.push("skip_rows".to_string());
            // Lines before the first record with the usual field count (banners).
            if usual > 1 {
                counts
                    .iter()
                    .position(|c| *c == usual)
                    .filter(|p| *p <= 10)
                    .unwrap_or(0)
            } else {
                0
            }
        }
    };

    let mut scanner = CsvScanner::new(body, dialect);
    let mut skipped = Vec::new();
    let mut header: Option<(Vec<String>, String)> = None;
    // The header line's own fields, to know a record that repeats it.
    let mut header_fields: Option<csv::ByteRecord> = None;
    let mut header_line = 0i64;
    let mut header_renames = Vec::new();
    let mut has_header = opts.has_header;
    let mut records = Vec::new();
    let mut index = 0usize;
    let mut backslash_quotes = 0usize;
    // Lines are counted here: the reader's own line numbers lag behind a CRLF.
    let (mut counted_to, mut line_no) = (0usize, 1i64);
    loop {
        // A record spanning lines must have the header's field count (before
        // the header is read: the usual count of the sample).
        let expected = if index < skip_rows {
            None
        } else {
            match &header {
                Some((names, _)) => Some(names.len()),
                None => (usual > 1).then_some(usual),
            }
        };
        let Some(found) = scanner.next(expected) else {
            break;
        };
        let (offset, raw) = (found.offset, found.raw);
        progress.at(offset, records.len());
        line_no += line_breaks(
            &body[counted_to.min(offset)..offset],
            body.get(offset).copied(),
        );
        counted_to = offset;
        let line = line_no;
        let this = index;
        index += 1;
        let rec = scanner.record();
        if this < skip_rows {
            skipped.push(String::from_utf8_lossy(raw).into_owned());
            continue;
        }
        if header.is_none() {
            let header_present = *has_header.get_or_insert_with(|| {
                detected.push("has_header".to_string());
                // A first line where most fields are numbers is data, not names.
                rec.iter().filter(|f| looks_numeric(f)).count() * 2 < rec.len().max(1)
            });
            if header_present {
                let fields: Vec<String> = rec
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect();
                let (names, mut renames) = map_header_names(&fields);
                match &found.problem {
                    Some(QuoteProblem::Unterminated { field, .. }) => {
                        // Read without the quote (see `fields_without_open_quote`).
                        let at = field.saturating_sub(1);
                        let original = format!(
                            "{}{}",
                            dialect.quote as char,
                            fields.get(at).map(String::as_str).unwrap_or_default()
                        );
                        match renames.iter_mut().find(|r| r.position == at) {
                            Some(r) => r.original = original.clone(),
                            None => {
                                let name = names.get(at).cloned().unwrap_or_default();
                                let i = renames.partition_point(|r| r.position < at);
                                renames.insert(
                                    i,
                                    HeaderRename {
                                        position: at,
                                        original: original.clone(),
                                        name,
                                    },
                                );
                            }
                        }
                        notes.push(format!(
                            "the header line has an unterminated quote in field {field} ({original}): the quote is never closed, so the header is this line alone, read without that quote and split at every '{}' after it: {} names ({})",
                            dialect.delimiter as char,
                            names.len(),
                            names.join(", ")
                        ));
                    }
                    Some(p) => notes.push(format!(
                        "the header line: {}",
                        quote_reason(p, &names, found.recovered)
                    )),
                    None => {}
                }
                header_renames = renames;
                header = Some((names, String::from_utf8_lossy(raw).into_owned()));
                header_fields = Some(rec.clone());
                header_line = line;
                continue;
            }
            header = Some((
                (0..rec.len()).map(|i| format!("_c{i}")).collect(),
                String::new(),
            ));
            notes.push(if rec.len() == 1 {
                "no header line: the column is named _c0".to_string()
            } else {
                format!(
                    "no header line: columns are named _c0 … _c{}",
                    rec.len() - 1
                )
            });
        }
        let names = header.as_ref().map(|h| h.0.as_slice()).unwrap_or_default();
        let expected = names.len();
        let (text, bytes, mut reason) = text_of(raw, offset, line);
        if let Some(p) = &found.problem {
            if matches!(
                p,
                QuoteProblem::TextAfterQuote {
                    backslash: true,
                    ..
                }
            ) {
                backslash_quotes += 1;
            }
            reason = reason.or_else(|| Some(quote_reason(p, names, found.recovered)));
        }
        // The reader dropped a byte order mark that the record's text keeps:
        // its fields are not the text's (a quote after the mark opened a
        // field here, while in the text it stands inside one), so it is not read.
        if reason.is_none() && found.at_reader_start && raw.starts_with(b"\xEF\xBB\xBF") {
            reason = Some(
                "starts with a byte order mark (U+FEFF) inside the file, which the CSV reader would drop: kept as it arrived, not read"
                    .to_string(),
            );
        }
        // Files joined with their headers (`cat a.csv b.csv`): the header
        // again is no record of data; kept where it stands, flagged.
        if reason.is_none()
            && header_fields
                .as_ref()
                .is_some_and(|h| repeats_header(h, names, rec))
        {
            reason = Some(format!(
                "repeats the header line (line {}): files joined with their headers? Kept as it arrived, not read as data",
                header_line
            ));
        }
        if reason.is_none() && rec.len() != expected {
            reason = Some(format!(
                "{} {}, the header has {expected}",
                rec.len(),
                if rec.len() == 1 { "field" } else { "fields" },
            ));
        }
        records.push(RawRecord {
            text,
            bytes,
            line,
            corrupt_reason: reason,
            warning: None,
        });
    }
    if backslash_quotes > 0 {
        notes.push(format!(
            "{backslash_quotes} {} a backslash before a quote inside a quoted field (\\\"): the file seems to escape quotes with a backslash; read it again with escape '\\' (those records are flagged, never read garbled)",
            if backslash_quotes == 1 { "record has" } else { "records have" }
        ));
    }
    if !header_renames.is_empty() {
        notes.push(renames_note(&header_renames));
    }
    let (header, header_text) = header.unwrap_or_default();
    let null_tokens = opts
        .null_tokens
        .clone()
        .unwrap_or_else(|| vec![String::new()]);
    let decimal_separator = opts.decimal_separator.unwrap_or('.');
    if !matches!(decimal_separator, '.' | ',') {
        return Err(EngineError::Ingest(format!(
            "the decimal separator must be '.' or ',', not {decimal_separator:?}; nothing was written"
        )));
    }
    if decimal_separator as u32 == delimiter as u32 {
        return Err(EngineError::Ingest(format!(
            "the decimal separator and the delimiter are both '{decimal_separator}': a field like 1,5 could not be told apart. Nothing was written."
        )));
    }
    if decimal_separator == '.'
        && delimiter != b','
        && records
            .iter()
            .take(200)
            .any(|r| has_decimal_comma(&r.text, delimiter as char))
    {
        notes.push(
            "some fields look like numbers with a decimal comma (1234,5): they stay text unless the decimal separator is set to ','"
                .to_string(),
        );
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "{} line(s) before the header kept aside in the batch log",
            skipped.len()
        ));
    }
    Ok(SplitFile {
        format: SourceFormat::Csv,
        dialect: Some(CsvDialect {
            delimiter: delimiter as char,
            quote: quote as char,
            escape: escape.map(char::from),
            has_header: has_header.unwrap_or(true),
            skip_rows,
            null_tokens,
            decimal_separator,
            detected,
        }),
        encoding: UTF8.to_string(),
        header,
        header_text: (!header_text.is_empty()).then_some(header_text),
        header_renames,
        skipped,
        records,
        notes: vec![],
        keys: vec![],
    })
}

/// Is `rec` the header line again: the same names once read as header names
/// are (trimmed, invisible characters such as a byte order mark removed,
/// NFC; see [`map_header_names`]), equal ignoring case? `header` is the
/// header line's own fields, `names` the names read from them. A data
/// record is told apart by its first field alone (nothing is allocated).
fn repeats_header(header: &csv::ByteRecord, names: &[String], rec: &csv::ByteRecord) -> bool {
    if rec.len() != header.len() || rec.is_empty() {
        return false;
    }
    // (A first field that is a value, nearly every record, stops here.)
    let (first, own) = (rec.get(0).unwrap_or_default(), header.get(0).unwrap_or_default());
    let (first, own) = (first.trim_ascii(), own.trim_ascii());
    if own.is_ascii() {
        let same = if first.is_ascii() {
            first.eq_ignore_ascii_case(own)
        } else {
            // (Only a name with invisible characters, e.g. a BOM, can match.)
            let visible: String = String::from_utf8_lossy(first)
                .chars()
                .filter(|c| !is_invisible_in_names(*c))
                .collect();
            visible.trim().as_bytes().eq_ignore_ascii_case(own)
        };
        if !same {
            return false;
        }
    }
    let fields: Vec<String> = rec.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
    let (read, _) = map_header_names(&fields);
    read.len() == names.len() && read.iter().zip(names).all(|(a, b)| same_name_ignoring_case(a, b))
}

fn has_decimal_comma(record: &str, delimiter: char) -> bool {
    record.split(delimiter).any(|f| {
        let f = f.trim();
        f.split_once(',').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
        })
    })
}

/// The shape of a JSON value, as far as bronze cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonShape {
    Object,
    Null,
    Other,
}

/// Walks a JSON value without building it, collecting the keys an object
/// holds twice as dotted paths (`status`, `customer.name`, `items[0].sku`).
struct DuplicateKeys<'p> {
    path: Option<String>,
    found: &'p mut Vec<String>,
    /// At the top level: who hears the object's keys.
    keys: Option<&'p mut TopKeys>,
}

/// Most top-level keys a file's JSON records are listed by ([`SplitFile::keys`]).
pub const MAX_KEYS: usize = 1000;

/// The distinct top-level keys of a file's JSON records, first seen first,
/// up to [`MAX_KEYS`].
#[derive(Debug, Default)]
pub(crate) struct TopKeys {
    order: Vec<String>,
    /// Each key's place in `order`.
    seen: std::collections::HashMap<String, usize>,
    /// Where the next key of this object is expected in `order` (records
    /// of one file mostly hold the same keys in the same order: one string
    /// compare per key then, no hashing).
    next: usize,
}

impl TopKeys {
    /// The keys, first seen first.
    pub(crate) fn into_keys(self) -> Vec<String> {
        self.order
    }

    /// A new object's keys come next.
    fn start(&mut self) {
        self.next = 0;
    }

    fn add(&mut self, key: &str) {
        if self.order.get(self.next).is_some_and(|k| k == key) {
            self.next += 1;
            return;
        }
        match self.seen.get(key) {
            Some(at) => self.next = at + 1,
            None if self.order.len() < MAX_KEYS => {
                self.seen.insert(key.to_string(), self.order.len());
                self.order.push(key.to_string());
                self.next = self.order.len();
            }
            None => {}
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for DuplicateKeys<'_> {
    type Value = JsonShape;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<JsonShape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for DuplicateKeys<'_> {
    type Value = JsonShape;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Other)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Other)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Other)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Other)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Other)
    }
    fn visit_unit<E>(self) -> std::result::Result<JsonShape, E> {
        Ok(JsonShape::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<JsonShape, A::Error> {
        let mut i = 0usize;
        let base = self.path.unwrap_or_default();
        while seq
            .next_element_seed(DuplicateKeys {
                path: Some(format!("{base}[{i}]")),
                found: &mut *self.found,
                keys: None,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(JsonShape::Other)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<JsonShape, A::Error> {
        let mut seen = std::collections::HashSet::new();
        let mut top = self.keys;
        if let Some(top) = top.as_deref_mut() {
            top.start();
        }
        while let Some(key) = map.next_key::<String>()? {
            if let Some(top) = top.as_deref_mut() {
                top.add(&key);
            }
            let path = match &self.path {
                Some(p) => format!("{p}.{key}"),
                None => key.clone(),
            };
            if !seen.insert(key) && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            map.next_value_seed(DuplicateKeys {
                path: Some(path),
                found: &mut *self.found,
                keys: None,
            })?;
        }
        Ok(JsonShape::Object)
    }
}

/// Why a JSON record is not a readable object (if it is not), and a warning
/// when an object holds a key twice (silver reads the last value, as
/// serde_json, Spark and most JSON readers do; RFC 8259 §4 leaves it open).
fn json_check(
    raw: &[u8],
    offset: usize,
    line: i64,
    keys: &mut TopKeys,
) -> (Option<String>, Option<String>) {
    let mut duplicates = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(raw);
    let shape = serde::de::DeserializeSeed::deserialize(
        DuplicateKeys {
            path: None,
            found: &mut duplicates,
            keys: Some(keys),
        },
        &mut de,
    )
    .and_then(|shape| de.end().map(|()| shape));
    let warning = match duplicates.as_slice() {
        [] => None,
        [one] => Some(format!(
            "duplicate key \"{one}\": the last value is read, as most JSON readers do"
        )),
        many => Some(format!(
            "duplicate keys {}: the last value of each is read, as most JSON readers do",
            many.iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    let reason = match shape {
        Err(e) => {
            // serde_json counts lines (LF only) and columns (1-based) within
            // the record; column 0 is the line break ending the line before
            // (a string that runs into it): reported as that line's last
            // column. Its byte is then placed on the file's own lines (a
            // CRLF or a lone CR ends a line too, see `line_ranges`).
            let (mut in_line, mut col) = (e.line().max(1), e.column());
            let lf_starts: Vec<usize> = std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', raw).map(|i| i + 1))
                .collect();
            if col == 0 && in_line > 1 {
                in_line -= 1;
                let begin = lf_starts.get(in_line - 1).copied().unwrap_or(0);
                let end = lf_starts.get(in_line).copied().unwrap_or(raw.len());
                col = end.saturating_sub(begin);
            }
            let in_raw = lf_starts.get(in_line - 1).copied().unwrap_or(0) + col.saturating_sub(1);
            let starts: Vec<usize> = line_ranges(raw).map(|(s, _)| s).collect();
            let index = starts.partition_point(|s| *s <= in_raw).max(1) - 1;
            let (in_line, col) = (index + 1, in_raw - starts[index] + 1);
            let byte = offset + in_raw;
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            Some(format!(
                "invalid JSON at byte {byte} (line {}, column {col}): {msg}",
                line + in_line as i64 - 1
            ))
        }
        Ok(JsonShape::Object) => None,
        Ok(JsonShape::Null) => Some(
            "tombstone: the record is JSON null (a Kafka/CDC delete marker), not an object"
                .to_string(),
        ),
        // The value's own text (a number keeps every digit it was written with).
        Ok(JsonShape::Other) => {
            let text = String::from_utf8_lossy(raw);
            let text = text.trim();
            Some(format!(
                "not a JSON object: {} {}",
                match text.as_bytes().first() {
                    Some(b't' | b'f') => "a boolean",
                    Some(b'"') => "a string",
                    Some(b'[') => "an array",
                    _ => "a number",
                },
                short(text)
            ))
        }
    };
    (reason, warning)
}

fn short(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A JSON record with its reason, if it is not a readable object.
/// `keys` hears the top-level keys of the record's object.
pub(crate) fn json_record(raw: &[u8], offset: usize, line: i64, keys: &mut TopKeys) -> RawRecord {
    if comment_line_end(raw, skip_ws(raw, 0)) == Some(raw.len()) {
        return comment_record(raw, offset, line);
    }
    let (text, bytes, reason) = text_of(raw, offset, line);
    let (json_reason, warning) = json_check(raw, offset, line, keys);
    RawRecord {
        text,
        bytes,
        line,
        corrupt_reason: reason.or(json_reason),
        warning,
    }
}

fn empty_json(format: SourceFormat, records: Vec<RawRecord>, keys: TopKeys) -> SplitFile {
    SplitFile {
        format,
        dialect: None,
        encoding: UTF8.to_string(),
        header: vec![],
        header_text: None,
        header_renames: vec![],
        skipped: vec![],
        records,
        notes: vec![],
        keys: keys.order,
    }
}

/// JSON Lines: each non-blank line is a record, as Spark reads JSON without
/// `multiLine`, so a line that is no JSON value costs that line only. Two
/// readings keep a good record whole where its line is not one value:
/// - a line opening with an object that parses, followed by more text
///   (`{…},` or `{…}{…}` or `{…},{…}`): the object is a record, and the rest
///   of the line is read the same way (a record for each further value, a
///   `,` between them a separator, one flagged record for text that is no
///   value, up to the line's end);
/// - a value that does not parse on its line but does once the next lines
///   are added, ending at a line's end, when none of those lines is a JSON
///   value of its own (an object a producer broke over lines): one record
///   over those lines.
fn split_json_lines(
    body: &[u8],
    notes: &mut Vec<String>,
    progress: &mut ReadProgress<'_>,
) -> SplitFile {
    let mut records = Vec::new();
    let mut keys = TopKeys::default();
    // Lines whose objects are followed by a `,` and nothing else.
    let mut trailing_commas = 0usize;
    // (start, end without the line break) of each line.
    let lines: Vec<(usize, usize)> = line_ranges(body).collect();
    let whole_value = |l: &[u8]| serde_json::from_slice::<IgnoredAny>(l).is_ok();
    let mut i = 0usize;
    while i < lines.len() {
        let (start, end) = lines[i];
        progress.at(start, records.len());
        let line = &body[start..end];
        let number = i as i64 + 1;
        i += 1;
        if is_blank(line) {
            continue;
        }
        if whole_value(line) {
            records.push(json_record(line, start, number, &mut keys));
            continue;
        }
        if let Some(objects) = whole_objects(line) {
            trailing_commas += usize::from(line.trim_ascii_end().ends_with(b","));
            for (at, end) in objects {
                records.push(json_record(&line[at..end], start + at, number, &mut keys));
            }
            continue;
        }
        // A value broken over lines: it parses from here and ends where a
        // line ends, and none of the lines it takes in is a value itself.
        if let Some(value_end) = json_value_end(body, start) {
            let last = lines[i..]
                .iter()
                .position(|(_, e)| *e >= value_end)
                .map(|k| i + k);
            if let Some(last) = last {
                let (_, last_end) = lines[last];
                let taken = &lines[i..=last];
                if body[value_end..last_end].iter().all(u8::is_ascii_whitespace)
                    && taken.iter().all(|(s, e)| !whole_value(&body[*s..*e]))
                {
                    records.push(json_record(&body[start..last_end], start, number, &mut keys));
                    i = last + 1;
                    continue;
                }
            }
        }
        records.push(json_record(line, start, number, &mut keys));
    }
    if trailing_commas > 0 {
        notes.push(format!(
            "{trailing_commas} {} with a ',' after the record{}, which JSON Lines does not have (an array's elements without its brackets?): read as if it were not there",
            if trailing_commas == 1 { "line ends" } else { "lines end" },
            if trailing_commas == 1 { "" } else { "s" },
        ));
    }
    empty_json(SourceFormat::JsonLines, records, keys)
}

/// The objects of a JSON Lines line holding more than one, as (start, end)
/// byte ranges: `{…} {…}` or `{…},{…}` (a `,` after each allowed). `None`
/// unless the whole line is objects and separators: `{"a":1} extra`,
/// `{"a":1} 5` or `{"a":1},{"b":` is one line, so one record (flagged),
/// never a good record plus a piece of text cut from its line.
fn whole_objects(line: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut objects = Vec::new();
    let mut at = skip_ws(line, 0);
    while at < line.len() {
        if line[at] != b'{' {
            return None;
        }
        let end = json_value_end(line, at)?;
        objects.push((at, trim_end_ws(&line[..end]).len()));
        at = skip_ws(line, end);
        if line.get(at) == Some(&b',') {
            at = skip_ws(line, at + 1);
        }
    }
    (!objects.is_empty()).then_some(objects)
}

/// Line numbers of byte offsets in a body, counted forward from the last
/// offset asked (offsets asked in increasing order cost one pass in all).
struct LineCounter<'a> {
    body: &'a [u8],
    at: usize,
    line: i64,
}

impl<'a> LineCounter<'a> {
    fn new(body: &'a [u8]) -> Self {
        LineCounter {
            body,
            at: 0,
            line: 1,
        }
    }

    /// The 1-based line of the byte at `offset`.
    fn line(&mut self, offset: usize) -> i64 {
        let offset = offset.min(self.body.len());
        if offset < self.at {
            (self.at, self.line) = (0, 1);
        }
        self.line += line_breaks(
            self.body.get(self.at..offset).unwrap_or_default(),
            self.body.get(offset).copied(),
        );
        self.at = offset;
        self.line
    }
}

/// The first byte at or after `at` that is not JSON whitespace.
fn skip_ws(body: &[u8], at: usize) -> usize {
    at + body
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// `raw` without the whitespace at its end.
fn trim_end_ws(mut raw: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r' | b' ' | b'\t'] = raw {
        raw = rest;
    }
    raw
}

/// Where the JSON value starting at `at` ends, if it parses.
fn json_value_end(body: &[u8], at: usize) -> Option<usize> {
    let mut stream =
        serde_json::Deserializer::from_slice(body.get(at..)?).into_iter::<IgnoredAny>();
    match stream.next() {
        Some(Ok(_)) => Some(at + stream.byte_offset()),
        _ => None,
    }
}

/// Can a JSON value start with this byte?
fn starts_value(b: u8) -> bool {
    matches!(
        b,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    )
}

/// What holds the records of a JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonContainer {
    /// Values one after the other (pretty-printed or concatenated objects).
    Stream,
    /// The elements of one top-level array.
    Array,
}

/// Most record starts looked at after a value that does not parse.
const RESYNC_TRIES: usize = 256;

/// Where reading starts again after a JSON value (starting at `start`) that
/// does not parse: the first later value start that is where a record of
/// this file would start, and reads as one. Candidates are
///   - any value first on its line, indented no deeper than the bad value
///     (a pretty-printer indents what is inside a record deeper; a tombstone
///     `null` or a bare `42` after a broken record is a record of its own), or
///   - in an array, right after a `,` (one-line arrays), a value opening
///     the same way as the bad one (`{`, or `[`; any value after a scalar).
///
/// A stream candidate must parse and be followed by another value or the
/// end (not by `,`, `]`, `}` or `:`, which would make it part of a larger
/// value). An array candidate must parse and so must the elements after
/// it, up to [`LOOKAHEAD`] of them or the array's `]` closing the file: a
/// value inside the bad element is followed by the rest of that element.
/// `None`: no such start, the bad value runs to the end.
fn resync(body: &[u8], start: usize, container: JsonContainer) -> Option<usize> {
    let opener = body.get(start).copied();
    // After a `,` only a value opening as the bad one did: a `,` inside it
    // is followed by the rest of it.
    let fits_after_comma = |b: u8| match opener {
        Some(b'{') => b == b'{',
        Some(b'[') => b == b'[',
        _ => starts_value(b),
    };
    let mut line_start = body
        .get(..start)
        .and_then(|before| before.iter().rposition(|b| is_break(*b)))
        .map_or(0, |p| p + 1);
    let indent = start - line_start;
    let (mut only_blanks, mut last, mut tried) = (false, opener.unwrap_or(b' '), 0usize);
    for (i, &b) in body.iter().enumerate().skip(start + 1) {
        if is_break(b) {
            (line_start, only_blanks) = (i + 1, true);
            continue;
        }
        if b.is_ascii_whitespace() {
            continue;
        }
        let first_on_line = only_blanks && i - line_start <= indent;
        let after_comma = container == JsonContainer::Array && last == b',';
        if (first_on_line && starts_value(b)) || (after_comma && fits_after_comma(b)) {
            if tried == RESYNC_TRIES {
                return None;
            }
            tried += 1;
            if record_starts_at(body, i, container) {
                return Some(i);
            }
        }
        (only_blanks, last) = (false, b);
    }
    None
}

/// Does a record of this container read from `at` (see [`resync`])?
fn record_starts_at(body: &[u8], at: usize, container: JsonContainer) -> bool {
    let mut at = at;
    for _ in 0..LOOKAHEAD {
        let Some(end) = json_value_end(body, at) else {
            return false;
        };
        // (A comment line between two records is a record of its own.)
        let mut next = skip_ws(body, end);
        while let Some(end) = comment_line_end(body, next) {
            next = skip_ws(body, end);
        }
        match (container, body.get(next)) {
            (_, None) => return true,
            (JsonContainer::Stream, Some(b)) => return !matches!(b, b',' | b']' | b'}' | b':'),
            (JsonContainer::Array, Some(b',')) => {
                at = after_comment_lines_from(body, next + 1);
                // A trailing comma before the array's closing `]`.
                if body.get(at) == Some(&b']') && skip_ws(body, at + 1) >= body.len() {
                    return true;
                }
            }
            (JsonContainer::Array, Some(b']')) => return skip_ws(body, next + 1) >= body.len(),
            (JsonContainer::Array, Some(_)) => return false,
        }
    }
    true
}

/// One top-level JSON array: each element is a record with its exact text
/// and line. An element that does not parse (or is not separated from the
/// one before by a `,`) is a flagged record of its own, and reading goes on
/// at the next element (see [`resync`]), so one bad element never costs
/// the others; text after the closing `]` is a flagged record too. An
/// array that is never closed keeps the elements read and says so in a note.
fn split_json_array(
    body: &[u8],
    notes: &mut Vec<String>,
    progress: &mut ReadProgress<'_>,
) -> SplitFile {
    let mut records = Vec::new();
    let mut keys = TopKeys::default();
    let mut lines = LineCounter::new(body);
    let mut pos = skip_ws(body, 0);
    while let Some(end) = comment_line_end(body, pos) {
        records.push(comment_record(trim_end_ws(&body[pos..end]), pos, lines.line(pos)));
        pos = skip_ws(body, end);
    }
    if body.get(pos) != Some(&b'[') {
        // Read as an array by option, but it is none: one corrupt record.
        notes.push(
            "the file was read as a JSON array but does not start with '[': kept as one corrupt record"
                .to_string(),
        );
        let mut rec = json_record(trim_end_ws(&body[pos..]), pos, lines.line(pos), &mut keys);
        if rec.corrupt_reason.is_none() {
            rec.corrupt_reason = Some("not a JSON array".to_string());
        }
        records.push(rec);
        return empty_json(SourceFormat::JsonArray, records, keys);
    }
    pos += 1;
    // After `[` or `,` an element comes; after an element, `,` or `]`.
    let mut expect_element = true;
    // Was the last thing read a `,` (so a `]` now closes `[…,]`)?
    let mut after_comma = false;
    // `,` with no element before it (`,,`, `[,`): nothing to keep, but said.
    let mut empty_elements = 0usize;
    let mut closed = false;
    // The array's own closing bracket, if the file ends with one.
    let last_bracket = trim_end_ws(body)
        .len()
        .checked_sub(1)
        .filter(|i| body.get(*i) == Some(&b']'));
    loop {
        pos = skip_ws(body, pos);
        progress.at(pos, records.len());
        let Some(&b) = body.get(pos) else {
            break;
        };
        if b == b']' {
            closed = true;
            pos += 1;
            if after_comma {
                notes.push(
                    "the JSON array ends with a ',' before its ']' (a trailing comma, which JSON does not allow): read as if it were not there"
                        .to_string(),
                );
            }
            break;
        }
        if b == b',' && !expect_element {
            expect_element = true;
            after_comma = true;
            pos += 1;
            continue;
        }
        if let Some(end) = comment_line_end(body, pos) {
            records.push(comment_record(trim_end_ws(&body[pos..end]), pos, lines.line(pos)));
            pos = end;
            continue;
        }
        if expect_element {
            if let Some(end) = json_value_end(body, pos) {
                records.push(json_record(&body[pos..end], pos, lines.line(pos), &mut keys));
                (pos, expect_element, after_comma) = (end, false, false);
                continue;
            }
        }
        // A bad element, or an element with no `,` before it: a record up
        // to where the next element starts (or the array ends).
        let missing_comma = !expect_element;
        let stop = resync(body, pos, JsonContainer::Array)
            .or(last_bracket.filter(|b| *b >= pos))
            .unwrap_or(body.len());
        let raw = trim_end_ws(&body[pos..stop]);
        let raw = trim_end_ws(raw.strip_suffix(b",").unwrap_or(raw));
        empty_elements += usize::from(raw.is_empty());
        if !raw.is_empty() {
            let mut rec = json_record(raw, pos, lines.line(pos), &mut keys);
            if rec.corrupt_reason.is_none() {
                rec.corrupt_reason = Some(if missing_comma {
                    "malformed JSON array: no ',' between this element and the one before it; kept as it arrived".to_string()
                } else {
                    "malformed JSON array here; kept as it arrived".to_string()
                });
            }
            records.push(rec);
        }
        (pos, expect_element, after_comma) = (stop, true, false);
    }
    let after = skip_ws(body, pos);
    if closed && after < body.len() {
        let raw = trim_end_ws(&body[after..]);
        let (text, bytes, reason) = text_of(raw, after, lines.line(after));
        records.push(RawRecord {
            text,
            bytes,
            line: lines.line(after),
            corrupt_reason: reason.or_else(|| {
                Some(
                    "text after the end of the JSON array (its closing ']'); kept as it arrived"
                        .to_string(),
                )
            }),
            warning: None,
        });
    }
    if empty_elements > 0 {
        notes.push(format!(
            "the JSON array has {empty_elements} empty {} (a ',' with no value before it, as in ',,'), which JSON does not allow: read past, nothing was lost",
            if empty_elements == 1 { "element" } else { "elements" }
        ));
    }
    if !closed {
        notes.push(format!(
            "the JSON array is never closed (no ']' at its end): the file may be cut short; the {} element(s) before its end are records",
            records.len()
        ));
    }
    empty_json(SourceFormat::JsonArray, records, keys)
}

/// Concatenated (often pretty-printed) JSON values, each a record, a `,`
/// between two of them a separator. A value that does not parse runs to
/// the next value first on its line, no deeper indented than it (see
/// [`resync`]).
fn split_json_stream(body: &[u8], progress: &mut ReadProgress<'_>) -> SplitFile {
    let mut records = Vec::new();
    let mut keys = TopKeys::default();
    let mut lines = LineCounter::new(body);
    let mut pos = skip_ws(body, 0);
    while pos < body.len() {
        progress.at(pos, records.len());
        if let Some(end) = comment_line_end(body, pos) {
            records.push(comment_record(trim_end_ws(&body[pos..end]), pos, lines.line(pos)));
            pos = skip_ws(body, end);
            continue;
        }
        let next = match json_value_end(body, pos) {
            Some(end) => {
                records.push(json_record(&body[pos..end], pos, lines.line(pos), &mut keys));
                end
            }
            None => {
                let next = resync(body, pos, JsonContainer::Stream).unwrap_or(body.len());
                let raw = trim_end_ws(&body[pos..next]);
                records.push(json_record(raw, pos, lines.line(pos), &mut keys));
                next
            }
        };
        pos = skip_ws(body, next);
        // Values separated by `,` (an array without its brackets): the `,`
        // separates them, it is no record.
        if body.get(pos) == Some(&b',') && pos > 0 {
            pos = skip_ws(body, pos + 1);
        }
    }
    empty_json(SourceFormat::Json, records, keys)
}

fn split_parquet(bytes: &[u8]) -> Result<SplitFile> {
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let refuse = |e: String| {
        EngineError::Ingest(format!(
            "the file is not a readable Parquet file ({e}); nothing was written"
        ))
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| refuse(e.to_string()))?;
    let schema = builder.schema().clone();
    let rows = builder.metadata().file_metadata().num_rows().max(0) as usize;
    if rows > MAX_RECORDS {
        return Err(too_many(rows));
    }
    let reader = builder.build().map_err(|e| refuse(e.to_string()))?;
    // Two columns with the same name would be one JSON key (the last one
    // read): the later ones get `_<n>` as CSV header names do (names that
    // differ only by case stay apart; a declared name matching both is an
    // error, see `crate::silver::source`); invisible characters are removed and a
    // reserved name (`_source_file`) is read as `_source_file_2`, as in CSV.
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let (header, header_renames) = map_names(&names, false, |a, b| a == b);
    let renamed = (!header_renames.is_empty()).then(|| {
        std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
            schema
                .fields()
                .iter()
                .zip(&header)
                .map(|(f, name)| f.as_ref().clone().with_name(name))
                .collect::<Vec<_>>(),
            schema.metadata().clone(),
        ))
    });
    let mut records = Vec::new();
    let mut text_bytes = 0usize;
    for batch in reader {
        let mut batch = batch.map_err(|e| refuse(e.to_string()))?;
        if let Some(renamed) = &renamed {
            batch = datafusion::arrow::array::RecordBatch::try_new(
                renamed.clone(),
                batch.columns().to_vec(),
            )
            .map_err(|e| refuse(e.to_string()))?;
        }
        let mut buf = Vec::new();
        let mut writer = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
        writer
            .write(&batch)
            .map_err(|e| refuse(format!("a row could not be written as JSON: {e}")))?;
        writer.finish().map_err(|e| refuse(e.to_string()))?;
        drop(writer);
        // Stopped as soon as the records pass what a text file may hold,
        // before a file of a few KB builds a gigabyte of payloads.
        text_bytes += buf.len();
        if text_bytes > MAX_FILE_BYTES {
            return Err(EngineError::Ingest(format!(
                "the file's {rows} rows come to more than {mib} MiB once read as records (JSON text; the Parquet file itself is {} bytes, its values compress well); the playground accepts at most {mib} MiB of records per file, as it does of a CSV or JSON file. Nothing was written. Split it, or sample it first.",
                bytes.len(),
                mib = MAX_FILE_BYTES / 1048576,
            )));
        }
        for line in buf.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let n = records.len() as i64 + 1;
            records.push(RawRecord {
                text: String::from_utf8_lossy(line).into_owned(),
                bytes: None,
                line: n,
                corrupt_reason: None,
                warning: None,
            });
        }
    }
    let mut notes = vec![format!(
        "Parquet: {} rows; columns {}",
        records.len(),
        schema
            .fields()
            .iter()
            .map(|f| format!("{} ({})", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if records.is_empty() {
        notes.push("no rows: 0 records".to_string());
    }
    if !header_renames.is_empty() {
        notes.push(format!(
            "Parquet column names read as: {} (a repeated name gets _<n>, an empty one _c<position>, never a name the file has)",
            header_renames
                .iter()
                .map(|r| describe_rename(r, true))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(SplitFile {
        format: SourceFormat::Parquet,
        dialect: None,
        encoding: "binary".to_string(),
        header,
        header_text: None,
        header_renames,
        skipped: vec![],
        records,
        notes,
        keys: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Two ASCII names compare as the Unicode rule compares them: the
        /// byte compare is a shortcut, not another rule.
        #[test]
        fn ascii_names_compare_as_the_unicode_rule_does(
            a in "[ -~]{0,12}",
            flips in proptest::collection::vec(any::<bool>(), 12),
            other in "[ -~]{0,12}",
        ) {
            // `a` with some letters' case flipped, and an unrelated name.
            let flipped: String = a
                .chars()
                .zip(flips.iter().chain(std::iter::repeat(&false)))
                .map(|(c, f)| if *f { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                .collect();
            for b in [&a, &flipped, &other] {
                prop_assert_eq!(
                    same_name_ignoring_case(&a, b),
                    same_name_ignoring_case_in_unicode(&a, b),
                    "{:?} {:?}", a, b
                );
            }
            prop_assert!(same_name_ignoring_case(&a, &flipped));
            let composed = nfc(&a);
            prop_assert_eq!(composed.as_ref(), a.as_str());
        }
    }

    #[test]
    fn a_name_with_a_kelvin_sign_still_matches_by_the_unicode_rule() {
        // U+212A KELVIN SIGN is K in NFC: not ASCII, so not the shortcut.
        assert!(same_name_ignoring_case("\u{212A}ey", "key"));
        assert!(same_name_ignoring_case("Straße", "STRAẞE"));
        assert!(!same_name_ignoring_case("Straße", "STRASSE"));
    }

    #[test]
    fn turkish_dotted_and_dotless_i_match_as_in_java() {
        // Java: "İD".equalsIgnoreCase("id") and "ıd".equalsIgnoreCase("ID").
        assert!(same_name_ignoring_case("İD", "id"));
        assert!(same_name_ignoring_case("ıd", "ID"));
        assert!(same_name_ignoring_case("ŞEHİR", "şehir"));
        assert!(same_name_ignoring_case("ΟΔΟΣ", "οδος"));
        assert!(!same_name_ignoring_case("İD", "jd"));
        assert!(!same_name_ignoring_case("ß", "s"));
    }
}
