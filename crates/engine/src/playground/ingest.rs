//! Ingest: a file appended to a bronze table as one batch (seed 000 §2):
//! split into records, the audit columns, raw or typed bronze (Spark's
//! PERMISSIVE, FAILFAST, DROPMALFORMED), the landing copy, and one commit in
//! the table's log; then a run.

use crate::lake::concat_batches;
use medallion_protocol::{Layer, TableName};

use crate::bronze::{
    batch_log, bronze_batch, sha256_hex, split_file_reporting, table_schema, typed_bronze_batch,
    Audit, BatchInfo, IngestOptions, SplitFile,
};
use crate::error::{EngineError, Result};
use crate::lake::log::{Action, CommitInfo, TableLog};
use crate::lake::{decode_parquet, encode_parquet, parquet_round_trip_exact};
use crate::model::BronzeMode;
use crate::silver::source::type_records;

use super::*;

impl Playground {
    /// Appends `bytes` as a new batch of bronze table `table`, then reruns.
    /// Refuses (writing nothing) an unknown table, a file over
    /// [`MAX_FILE_BYTES`], a file the session's memory cannot take besides
    /// what it holds ([`Playground::memory_bytes`], [`estimated_bytes`]),
    /// bad options or an unreadable Parquet file. Records
    /// that are not well-formed are kept with a `_corrupt_reason`.
    pub async fn ingest(
        &mut self,
        table: &str,
        file_name: &str,
        bytes: &[u8],
        options: &IngestOptions,
    ) -> Result<BatchInfo> {
        let info = self.append(table, file_name, bytes, options).await?;
        self.run().await;
        Ok(info)
    }

    pub(super) async fn append(
        &mut self,
        table: &str,
        file_name: &str,
        bytes: &[u8],
        options: &IngestOptions,
    ) -> Result<BatchInfo> {
        let table = Layer::Bronze.unqualified(table).to_string();
        self.def.bronze_table(&table).ok_or_else(|| {
            EngineError::Ingest(format!(
                "there is no bronze table {table}; drop the file on one of: {}",
                self.def
                    .bronze
                    .iter()
                    .map(|b| TableName::bronze(&b.name).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if let Some(refusal) = file_too_big(file_name, bytes.len() as u64) {
            return Err(refusal);
        }
        self.check_memory(file_name, bytes).await?;
        // Settings left unset fall back to the table's remembered ones.
        let options = &options.or(&self
            .def
            .bronze_table(&table)
            .map(|b| b.ingest_options.clone())
            .unwrap_or_default());
        // Everything is prepared before the first write, so a refusal leaves no trace.
        let reading = |bytes_read: usize, records: usize| {
            self.reporter().report(crate::progress::Progress::Reading {
                file: file_name.to_string(),
                bytes: bytes_read as u64,
                total_bytes: bytes.len() as u64,
                records: records as u64,
            })
        };
        reading(0, 0);
        let split =
            split_file_reporting(bytes, options, &mut |read, records| reading(read, records))?;
        reading(bytes.len(), split.records.len());
        if split.format == crate::bronze::SourceFormat::Parquet {
            self.check_memory_of_records(file_name, bytes.len() as u64, &split.records)
                .await?;
        }
        self.commit_batch(NewBatch {
            table,
            file_name: file_name.to_string(),
            split,
            bytes,
            landing: true,
            options: options.clone(),
            source_files: vec![],
            producer_ts: vec![],
            notes: vec![],
        })
        .await
    }

    /// Writes one batch to bronze: Parquet file, version, batch log entry.
    pub(super) async fn commit_batch(&mut self, nb: NewBatch<'_>) -> Result<BatchInfo> {
        let NewBatch {
            table,
            file_name,
            split,
            bytes,
            landing,
            options,
            source_files,
            producer_ts,
            notes,
        } = nb;
        let def = self
            .def
            .bronze_table(&table)
            .cloned()
            .ok_or_else(|| EngineError::Ingest(format!("there is no bronze table {table}")))?;
        // Typing, encoding and hashing the batch take a moment on a big
        // file: the progress line says so rather than staying at "read".
        self.reporter().report(crate::progress::Progress::Writing {
            table: TableName::bronze(&table),
            n: 1,
            of: 1,
        });
        // Kafka micro-batches name their topic as the source system (seed 000 §3).
        let source_system = match split.format {
            crate::bronze::SourceFormat::Kafka => {
                format!("kafka_{}", file_name.split(':').next().unwrap_or_default())
            }
            _ => def.source_system.clone(),
        };
        let mut split = split;
        let mut notes = notes;
        let mut dropped = 0usize;
        // A declared column the file lacks is never a silent NULL: the batch log says so.
        let absent = crate::silver::source::absent_columns(&def.schema, &split);
        if !absent.is_empty() {
            notes.push(crate::silver::source::absent_columns_note(
                &absent,
                def.mode.is_typed(),
            ));
        }
        notes.extend(crate::silver::source::foreign_header_note(&def.schema, &split));
        // A raw bronze keeps what the schema does not declare; say what silver
        // will not read (a typed bronze says what it did not store, below).
        if !def.mode.is_typed() {
            let unread = crate::silver::source::unread_columns(&def.schema, &split);
            if !unread.is_empty() {
                notes.push(crate::silver::source::unread_columns_note(&unread, split.format));
            }
        }
        // Typed bronze: the declared schema is applied here, in the mode the table declares.
        let typed = if def.mode.is_typed() {
            let mut typed = type_records(&def.schema, &split)?;
            if def.mode == BronzeMode::FailFast {
                if let Some((i, reason)) = typed
                    .reasons
                    .iter()
                    .enumerate()
                    .find_map(|(i, r)| r.as_ref().map(|r| (i, r)))
                {
                    let at = match split.records[i].line {
                        0 => format!("record {}", i + 1),
                        line => format!("line {line}"),
                    };
                    return Err(EngineError::Ingest(format!(
                        "FAILFAST: {at} of {file_name} does not fit the declared schema ({reason}); the whole batch was refused and nothing was written"
                    )));
                }
            }
            if def.mode == BronzeMode::DropMalformed {
                let keep: Vec<bool> = typed.reasons.iter().map(Option::is_none).collect();
                let lost: Vec<String> = split
                    .records
                    .iter()
                    .zip(&keep)
                    .enumerate()
                    .filter(|(_, (_, k))| !**k)
                    .map(|(i, (r, _))| match r.line {
                        0 => format!("record {}", i + 1),
                        line => format!("line {line}"),
                    })
                    .collect();
                dropped = lost.len();
                if dropped > 0 {
                    notes.push(format!(
                        "DROPMALFORMED dropped {dropped} of {} records ({}): they are not in bronze, so no replay can bring them back",
                        split.records.len(),
                        lost.join(", ")
                    ));
                    let mask = datafusion::arrow::array::BooleanArray::from(keep.clone());
                    typed.columns = typed
                        .columns
                        .iter()
                        .map(|c| datafusion::arrow::compute::filter(c.as_ref(), &mask))
                        .collect::<std::result::Result<_, _>>()?;
                    let mut k = keep.iter();
                    split.records.retain(|_| *k.next().unwrap_or(&true));
                    typed.reasons.retain(Option::is_none);
                }
            }
            for (r, reason) in split.records.iter_mut().zip(&typed.reasons) {
                if r.corrupt_reason.is_none() {
                    r.corrupt_reason = reason.clone();
                }
            }
            // The split's count covered malformed records only; typing flags more.
            let flagged = split
                .records
                .iter()
                .filter(|r| r.corrupt_reason.is_some())
                .count();
            split
                .notes
                .retain(|n| !n.contains("records flagged in _corrupt_reason"));
            if flagged > 0 {
                split.notes.insert(
                    0,
                    format!(
                        "{flagged} of {} records flagged in _corrupt_reason (their text kept in _corrupt_record)",
                        split.records.len()
                    ),
                );
            }
            if !typed.undeclared.is_empty() {
                notes.push(format!(
                    "not stored (the declared schema lacks them; a raw bronze would keep them): {}",
                    typed.undeclared.join(", ")
                ));
            }
            notes.extend(typed.read_as_utc.iter().map(|r| {
                format!(
                    "{}: {} of {} values had no offset and were stored as UTC (declare the column's time_zone if they are local times)",
                    r.column, r.without_offset, r.values
                )
            }));
            Some(typed)
        } else {
            None
        };
        let batch_id = self.ids.new_id().to_string();
        let event_ids = crate::bronze::event_ids(self.ids.as_ref(), split.records.len());
        let ts = self.clock.now_micros();
        let audit = Audit {
            ingest_ts_micros: ts,
            source_system: &source_system,
            source_file: &file_name,
            source_files,
            producer_ts,
            batch_id: &batch_id,
            event_ids,
        };
        let read_as_utc = typed
            .as_ref()
            .map(|t| t.read_as_utc.clone())
            .unwrap_or_default();
        let rows = match typed {
            Some(t) => typed_bronze_batch(&def.schema, t.columns, &split.records, audit)?,
            None => bronze_batch(&split.records, audit)?,
        };
        let table_schema = table_schema(&def);
        let encoded = encode_parquet(table_schema.clone(), std::slice::from_ref(&rows))?;
        let seq = self.bronze.get(&table).map(Vec::len).unwrap_or(0) + 1;
        let path = format!("{}/part-{seq:06}.parquet", TableName::bronze(&table).path());
        // What silver sees is what Parquet holds: the rows as written when
        // every column comes back from Parquet exactly (bronze's types),
        // else decoded from the file before committing.
        let exact = rows.schema().fields() == table_schema.fields()
            && rows
                .columns()
                .iter()
                .all(|c| parquet_round_trip_exact(c.as_ref()));
        let stored = if exact {
            RecordBatch::try_new(table_schema.clone(), rows.columns().to_vec())?
        } else {
            concat_batches(&table_schema, &decode_parquet(encoded.clone())?)?
        };
        let landing_path = if landing {
            let p = format!("landing/{table}/{batch_id}/{}", safe_file_name(&file_name));
            self.lake.put_bytes(&p, bytes.to_vec()).await?;
            Some(p)
        } else {
            None
        };
        let qualified = TableName::bronze(&table);
        let mut all_notes = split.notes;
        all_notes.extend(notes);
        let warned_records = split.records.iter().filter(|r| r.warning.is_some()).count();
        if warned_records > 0 {
            all_notes.push(format!(
                "{warned_records} {} a warning in _warning (a JSON object with a duplicate key: silver reads the last value); not quarantined",
                if warned_records == 1 { "record has" } else { "records have" }
            ));
        }
        let sha = sha256_hex(bytes);
        // Reading a landed file again is the same bytes by design: no note then.
        if let Some(same) = self.rereading.is_none().then_some(()).and(
            self.batches
                .iter()
                .find(|b| b.table == table && b.sha256 == sha && !bytes.is_empty()),
        ) {
            all_notes.push(format!(
                "same content (SHA-256) as batch {} ({}): appended again; bronze keeps duplicates, and only a silver table merged by a key (MERGE ON) removes them",
                same.batch_id.chars().take(8).collect::<String>(),
                same.file_name
            ));
        }
        let log = TableLog::new(self.lake.store(), qualified.path());
        let read_version = log.latest().await?;
        let mut info = BatchInfo {
            batch_id: batch_id.clone(),
            table: table.clone(),
            source_system,
            file_name: file_name.clone(),
            format: split.format,
            dialect: split.dialect,
            encoding: split.encoding,
            header: split.header,
            header_text: split.header_text,
            header_renames: split.header_renames,
            skipped_lines: split.skipped,
            records: stored.num_rows(),
            dropped_records: dropped,
            mode: def.mode,
            erased_records: 0,
            superseded_by: None,
            corrupt_records: split
                .records
                .iter()
                .filter(|r| r.corrupt_reason.is_some())
                .count(),
            warned_records,
            read_as_utc,
            bytes: bytes.len(),
            sha256: sha,
            ingest_ts_micros: ts,
            path: path.clone(),
            landing_path: landing_path.clone(),
            options,
            version: read_version.map_or(0, |v| v + 1),
            notes: all_notes,
        };
        // The batch log is read from this entry (`bronze::batch_log`).
        let commit = batch_log::write_params(
            CommitInfo::new(
                ts,
                "WRITE",
                format!("batch {seq}: {file_name}"),
                stored.num_rows(),
                0,
            )
            .with("mode", "Append")
            .with("batchId", batch_id.clone())
            .with("sourceFile", file_name.clone()),
            &info,
            self.batches.len(),
            self.rereading.as_deref(),
        )?;
        // The file first, its log entry last: the batch exists only once the
        // entry does (a failure in between leaves the previous version).
        let committed = async {
            self.lake.put_bytes(&path, encoded.to_vec()).await?;
            log.commit(
                read_version,
                &[
                    Action::CommitInfo(commit),
                    Action::add_file(
                        format!("part-{seq:06}.parquet"),
                        encoded.len() as u64,
                        ts / 1000,
                        Some(stored.num_rows()),
                    ),
                ],
            )
            .await?;
            Ok::<_, EngineError>(())
        }
        .await;
        if let Err(e) = committed {
            // No entry names the files: they go, so SQL over the table's
            // folder never reads a batch the log does not have.
            let _ = self.lake.delete(&path).await;
            if let Some(p) = &landing_path {
                let _ = self.lake.delete(p).await;
            }
            return Err(e);
        }
        self.history.refresh(&self.lake, &qualified).await?;
        info.version = self.history.current(&qualified).unwrap_or(info.version);
        self.batches.push(info.clone());
        self.bronze
            .entry(table.clone())
            .or_default()
            .push((info.clone(), stored));
        self.refresh_batch_log(&table).await?;
        self.register_bronze(&table).await?;
        Ok(self
            .batches
            .iter()
            .find(|b| b.batch_id == batch_id)
            .cloned()
            .unwrap_or(info))
    }

    /// Reads bronze `table`'s batch log again from its commit log
    /// ([`batch_log::read`]): every batch the session holds of it takes
    /// the logged state (superseded, erased, its file), so what the page
    /// shows is what the lake says. Errors: the log cannot be read.
    pub(super) async fn refresh_batch_log(&mut self, table: &str) -> Result<()> {
        let log = TableLog::new(self.lake.store(), TableName::bronze(table).path());
        for (_, logged) in batch_log::read(&log).await? {
            if let Some(b) = self
                .batches
                .iter_mut()
                .find(|b| b.batch_id == logged.batch_id)
            {
                *b = logged.clone();
            }
            if let Some((b, _)) = self
                .bronze
                .get_mut(table)
                .into_iter()
                .flatten()
                .find(|(b, _)| b.batch_id == logged.batch_id)
            {
                *b = logged;
            }
        }
        Ok(())
    }
}

/// One batch about to be written to bronze.
pub(super) struct NewBatch<'a> {
    /// Bronze table without the layer.
    pub(super) table: String,
    pub(super) file_name: String,
    pub(super) split: SplitFile,
    /// What arrived (its size and SHA-256 go to the batch log).
    pub(super) bytes: &'a [u8],
    /// Keep `bytes` in the landing zone (files), so they can be read again.
    pub(super) landing: bool,
    pub(super) options: IngestOptions,
    /// Per-record `_source_file` (Kafka `topic:partition:offset`), or empty.
    pub(super) source_files: Vec<String>,
    /// Per-record producer time (Kafka), or empty.
    pub(super) producer_ts: Vec<Option<i64>>,
    pub(super) notes: Vec<String>,
}

/// A file name usable as one object-store path segment.
pub(super) fn safe_file_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "file".to_string()
    } else {
        cleaned
    }
}
