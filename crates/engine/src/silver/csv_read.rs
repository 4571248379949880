//! Reading a CSV batch's payloads into columns of text, one Arrow
//! `StringArray` per declared column, for [`crate::silver::source`] to
//! convert to the declared types column by column (issue 12: "silver reads a
//! bronze batch's payloads with vectorized readers … the declared schema
//! applied in columns").
//!
//! The payloads are joined into one text and read by one `csv` reader into
//! one reused record: no allocation per record or per field. Each payload is
//! one complete record by construction, and each record read is checked to
//! end exactly where its payload ends; from the first that does not (an
//! unterminated quote that runs into the next payload, an empty payload) the
//! rest of the batch is read payload by payload, each on its own. The values
//! are those of reading every payload alone: the fast path changes the
//! speed, never a value (a property test compares the two).
//!
//! A payload is read as it is stored: a byte order mark at its start is
//! data (the file's own mark was removed at ingest), never stripped, so the
//! text read starts with a newline (the `csv` reader strips a mark only at
//! the very start of its input and skips empty lines).
//!
//! The batch's CSV settings are applied here: a field equal to one of the
//! null tokens is NULL, and in a numeric column the decimal separator `,`
//! becomes `.`. An absent declared column is NULL.

use std::collections::HashMap;

use datafusion::arrow::array::{StringArray, StringBuilder};

use medallion_protocol::schema::SourceSchema;

use crate::bronze::{csv_reader, CsvDialect};

/// Why one CSV payload cannot be read (`silver::source` words it as the
/// record's quarantine reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordError {
    /// `found` fields where the header has `expected`.
    FieldCount { expected: usize, found: usize },
    /// Nothing in it.
    Empty,
    /// The CSV reader's message.
    Unreadable(String),
}

/// The declared columns' texts of the records read so far, one builder per
/// declared column (schema order).
pub(crate) struct TextColumns {
    builders: Vec<StringBuilder>,
}

impl TextColumns {
    /// Empty columns for `ncols` declared columns.
    pub(crate) fn new(ncols: usize) -> Self {
        Self {
            builders: (0..ncols).map(|_| StringBuilder::new()).collect(),
        }
    }

    /// Appends one record's texts (`values[c]` for declared column `c`).
    pub(crate) fn push(&mut self, values: Vec<Option<String>>) {
        for (b, v) in self.builders.iter_mut().zip(values) {
            b.append_option(v);
        }
    }

    /// Appends a record with no values (NULL in every column).
    pub(crate) fn push_nulls(&mut self) {
        for b in &mut self.builders {
            b.append_null();
        }
    }

    /// The texts, one array per declared column.
    pub(crate) fn finish(self) -> Vec<StringArray> {
        self.builders.into_iter().map(|mut b| b.finish()).collect()
    }
}

/// How one batch's CSV records map to the declared columns.
pub(crate) struct CsvLayout<'a> {
    dialect: &'a CsvDialect,
    /// Number of fields of the header (each record must have as many).
    fields: usize,
    /// Per declared column: its field in the record, if the header has it.
    positions: Vec<Option<usize>>,
    /// Per declared column: numeric (the decimal separator applies).
    numeric: Vec<bool>,
}

impl<'a> CsvLayout<'a> {
    /// The layout of a batch with `header` whose declared columns sit at
    /// `header_index` (from `header_positions`).
    pub(crate) fn new(
        dialect: &'a CsvDialect,
        header: &[String],
        header_index: &HashMap<&str, Option<usize>>,
        schema: &SourceSchema,
    ) -> Self {
        Self {
            dialect,
            fields: header.len(),
            positions: schema
                .columns
                .iter()
                .map(|c| header_index.get(c.name.as_str()).copied().flatten())
                .collect(),
            numeric: schema
                .columns
                .iter()
                .map(|c| c.data_type.is_numeric())
                .collect(),
        }
    }

    /// Appends `record`'s declared texts to `out`, or says why it cannot
    /// be read (another number of fields than the header has; nothing is
    /// appended then).
    pub(crate) fn append(
        &self,
        record: &csv::StringRecord,
        out: &mut TextColumns,
    ) -> Result<(), RecordError> {
        if record.len() != self.fields {
            return Err(RecordError::FieldCount {
                expected: self.fields,
                found: record.len(),
            });
        }
        let d = self.dialect;
        for ((b, pos), numeric) in out
            .builders
            .iter_mut()
            .zip(&self.positions)
            .zip(&self.numeric)
        {
            match pos.and_then(|i| record.get(i)) {
                Some(t) if !d.null_tokens.iter().any(|n| n == t) => {
                    if *numeric && d.decimal_separator == ',' && t.contains(',') {
                        b.append_value(t.replace(',', "."));
                    } else {
                        b.append_value(t);
                    }
                }
                _ => b.append_null(),
            }
        }
        Ok(())
    }

    /// Reads one payload alone and appends its texts.
    pub(crate) fn append_payload(
        &self,
        raw: &str,
        out: &mut TextColumns,
    ) -> Result<(), RecordError> {
        let text = format!("\n{raw}");
        let mut reader = dialect_reader(text.as_bytes(), self.dialect);
        let mut record = csv::StringRecord::new();
        match reader.read_record(&mut record) {
            Ok(true) => self.append(&record, out),
            Ok(false) => Err(RecordError::Empty),
            Err(e) => Err(RecordError::Unreadable(e.to_string())),
        }
    }
}

/// A batch's payloads joined, one per line, and where each one's line ends
/// (byte offsets past its `\n`; the last payload has no `\n` after it and
/// ends where the text does, so a quote left open in it runs to the end of
/// the text exactly as it does when the payload is read alone, instead of
/// taking in a newline that is not in the payload).
pub(crate) struct Joined {
    text: String,
    ends: Vec<u64>,
}

impl Joined {
    /// Joins `payloads` (in order).
    pub(crate) fn new<'p>(payloads: impl Iterator<Item = &'p str>) -> Self {
        // See the module's text: a mark at the first payload's start is data.
        let mut text = String::from("\n");
        let mut ends = Vec::new();
        for p in payloads {
            text.push_str(p);
            text.push('\n');
            ends.push(text.len() as u64);
        }
        if let Some(last) = ends.last_mut() {
            text.pop();
            *last -= 1;
        }
        Self { text, ends }
    }
}

/// The joined payloads read record by record, each checked against its
/// payload's end (see the module's text).
pub(crate) struct BulkCsv<'j> {
    reader: csv::Reader<&'j [u8]>,
    record: csv::StringRecord,
    ends: &'j [u64],
    /// The joined text's length in bytes.
    len: u64,
    next: usize,
    aligned: bool,
}

impl<'j> BulkCsv<'j> {
    /// A reader of `joined` with the batch's delimiter, quote and escape.
    pub(crate) fn new(joined: &'j Joined, dialect: &CsvDialect) -> Self {
        Self {
            reader: dialect_reader(joined.text.as_bytes(), dialect),
            record: csv::StringRecord::new(),
            ends: &joined.ends,
            len: joined.text.len() as u64,
            next: 0,
            aligned: true,
        }
    }

    /// The record of the next payload, or `None` from the first payload
    /// whose record does not end where the payload does (read that one and
    /// every later one alone).
    ///
    /// A record that ends at the end of the text belongs to its payload
    /// only if that payload is the last: before empty last payloads, whose
    /// ends are the same offset, a quote left open would end there too.
    pub(crate) fn next_record(&mut self) -> Option<&csv::StringRecord> {
        if !self.aligned {
            return None;
        }
        let end = self.ends.get(self.next).copied();
        self.next += 1;
        let last = self.next == self.ends.len();
        let read = self.reader.read_record(&mut self.record);
        let at = self.reader.position().byte();
        self.aligned = matches!(read, Ok(true)) && Some(at) == end && (at < self.len || last);
        self.aligned.then_some(&self.record)
    }
}

/// A reader of CSV payloads with the batch's delimiter, quote and escape.
fn dialect_reader<'a>(bytes: &'a [u8], dialect: &CsvDialect) -> csv::Reader<&'a [u8]> {
    csv_reader(
        bytes,
        dialect.delimiter as u8,
        dialect.quote as u8,
        dialect.escape.map(|e| e as u8),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Array;
    use medallion_protocol::schema::ColumnType;
    use proptest::prelude::*;

    fn dialect(delimiter: char, decimal: char, nulls: &[&str]) -> CsvDialect {
        CsvDialect {
            delimiter,
            quote: '"',
            escape: None,
            has_header: true,
            skip_rows: 0,
            null_tokens: nulls.iter().map(|s| s.to_string()).collect(),
            decimal_separator: decimal,
            detected: vec![],
        }
    }

    /// Per payload: the declared texts or the reason, reading each alone
    /// (`bulk = false`) or the batch in one go.
    type Read = Vec<Result<Vec<Option<String>>, RecordError>>;

    fn read(
        payloads: &[&str],
        d: &CsvDialect,
        header: &[&str],
        schema: &SourceSchema,
        bulk: bool,
    ) -> Read {
        let header: Vec<String> = header.iter().map(|s| s.to_string()).collect();
        let index: HashMap<&str, Option<usize>> = schema
            .columns
            .iter()
            .map(|c| (c.name.as_str(), header.iter().position(|h| *h == c.name)))
            .collect();
        let layout = CsvLayout::new(d, &header, &index, schema);
        let joined = Joined::new(payloads.iter().copied());
        let mut reader = BulkCsv::new(&joined, d);
        let mut out = TextColumns::new(schema.columns.len());
        let mut results = Vec::new();
        for p in payloads {
            let r = match reader.next_record().filter(|_| bulk) {
                Some(record) => layout.append(record, &mut out),
                None => layout.append_payload(p, &mut out),
            };
            results.push(r);
        }
        let cols = out.finish();
        let mut row = 0;
        results
            .into_iter()
            .map(|r| {
                r.map(|()| {
                    let values = cols
                        .iter()
                        .map(|c| c.is_valid(row).then(|| c.value(row).to_string()))
                        .collect();
                    row += 1;
                    values
                })
            })
            .collect()
    }

    fn schema() -> SourceSchema {
        SourceSchema::new(&[
            ("id", ColumnType::Int),
            ("amount", ColumnType::Double),
            ("note", ColumnType::String),
            ("absent", ColumnType::String),
        ])
    }

    #[test]
    fn texts_nulls_decimal_commas_and_field_counts() {
        let d = dialect(';', ',', &["", "NA"]);
        let got = read(
            &["1;2,5;a,b", "2;NA;", "3;4", "\"4\";\"1,25\";\"x\ny\""],
            &d,
            &["id", "amount", "note"],
            &schema(),
            true,
        );
        let s = |v: &str| Some(v.to_string());
        assert_eq!(got[0], Ok(vec![s("1"), s("2.5"), s("a,b"), None]));
        assert_eq!(got[1], Ok(vec![s("2"), None, None, None]));
        assert_eq!(
            got[2],
            Err(RecordError::FieldCount {
                expected: 3,
                found: 2
            })
        );
        assert_eq!(got[3], Ok(vec![s("4"), s("1.25"), s("x\ny"), None]));
        // A byte order mark inside the data is kept, first payload or not,
        // in one go or alone (an INT column then names the value).
        let bom = ["\u{feff}1;2;a", "\u{feff}2;3;b"];
        for bulk in [true, false] {
            let got = read(&bom, &d, &["id", "amount", "note"], &schema(), bulk);
            assert_eq!(got[0], Ok(vec![s("\u{feff}1"), s("2"), s("a"), None]));
            assert_eq!(got[1], Ok(vec![s("\u{feff}2"), s("3"), s("b"), None]));
        }
    }

    #[test]
    fn a_payload_that_runs_into_the_next_is_read_alone_from_there_on() {
        let d = dialect(',', '.', &[""]);
        let payloads = ["1,a", "2,\"open", "3,c", "", "5,e"];
        let joined = Joined::new(payloads.iter().copied());
        let mut reader = BulkCsv::new(&joined, &d);
        assert!(reader.next_record().is_some());
        // The open quote swallows the following payloads: out of step.
        assert!(reader.next_record().is_none());
        assert!(reader.next_record().is_none());
        let got = read(&payloads, &d, &["id", "note"], &schema(), true);
        assert_eq!(got, read(&payloads, &d, &["id", "note"], &schema(), false));
        assert_eq!(
            got[2],
            Ok(vec![Some("3".into()), None, Some("c".into()), None])
        );
        assert_eq!(got[3], Err(RecordError::Empty));
    }

    #[test]
    fn a_quote_left_open_in_the_last_payload_takes_in_no_newline() {
        // Found by the property test below: read in one go, the open quote
        // of the last payload took in the newline the join had put after it.
        let d = dialect(';', '.', &[""]);
        let header = ["id", "amount", "note"];
        for payloads in [vec!["0;;\""], vec!["1;2;x", "0;;\"ab"], vec!["0;;\"", ""]] {
            let got = read(&payloads, &d, &header, &schema(), true);
            assert_eq!(got, read(&payloads, &d, &header, &schema(), false));
            let open = payloads.iter().position(|p| p.starts_with("0;;")).unwrap();
            let last = got[open].as_ref().unwrap();
            assert_eq!(last[0].as_deref(), Some("0"));
            assert!(last[2].as_deref().map_or(true, |t| !t.contains('\n')));
        }
    }

    proptest! {
        // The kind: a batch read in one go gives, for every payload, what
        // reading it alone gives (values, NULLs, reasons).
        #[test]
        fn reading_a_batch_in_one_go_equals_reading_each_payload_alone(
            payloads in prop::collection::vec("[0-9a-c,;\" \n\r\u{FEFF}]{0,12}", 0..12),
            semicolon in any::<bool>(),
            comma in any::<bool>(),
        ) {
            let d = dialect(if semicolon { ';' } else { ',' }, if comma { ',' } else { '.' }, &["", "a"]);
            let payloads: Vec<&str> = payloads.iter().map(String::as_str).collect();
            let header = ["id", "amount", "note"];
            prop_assert_eq!(
                read(&payloads, &d, &header, &schema(), true),
                read(&payloads, &d, &header, &schema(), false)
            );
        }
    }
}
