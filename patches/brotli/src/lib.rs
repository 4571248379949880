//! Decode-only `brotli`: the subset of the crate's API that Parquet's
//! brotli codec calls (`parquet::compression::BrotliCodec`).
//!
//! - [`Decompressor`] is `brotli-decompressor`'s reader, the same type the
//!   real crate re-exports: brotli-compressed Parquet pages decode exactly
//!   as before.
//! - [`CompressorWriter`] takes no bytes: every write fails with
//!   [`std::io::ErrorKind::Unsupported`] and says why. The engine writes its
//!   Parquet files with Snappy (`crate::lake::encode_parquet`), so nothing
//!   it does reaches it; a caller that asks for brotli gets an error, never
//!   a file that is silently not compressed.

pub use brotli_decompressor::reader::Decompressor;

use std::io::{Error, ErrorKind, Write};

/// What a brotli write says.
pub const NO_ENCODER: &str =
    "brotli compression is not built into the playground (it writes Parquet with Snappy; brotli files can be read)";

/// Refuses to compress: [`Write::write`] and [`Write::flush`] return an
/// `Unsupported` error naming [`NO_ENCODER`]. Same constructor as the real
/// crate's (`w`, buffer size, quality, log2 window size).
pub struct CompressorWriter<W: Write> {
    inner: W,
}

impl<W: Write> CompressorWriter<W> {
    /// Same arguments as `brotli::CompressorWriter::new`; only `w` is kept.
    pub fn new(w: W, _buffer_size: usize, _quality: u32, _lgwin: u32) -> Self {
        Self { inner: w }
    }

    /// The writer given to [`CompressorWriter::new`], untouched.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for CompressorWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        Err(Error::new(ErrorKind::Unsupported, NO_ENCODER))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Err(Error::new(ErrorKind::Unsupported, NO_ENCODER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn decodes_a_brotli_stream_and_refuses_to_encode() {
        // Node's zlib.brotliCompressSync("medallion medallion medallion"), quality 11.
        let encoded: &[u8] = &[
            0x1b, 0x1c, 0x00, 0xf8, 0xc5, 0x53, 0x96, 0xaa, 0x5c, 0x6d, 0x04, 0x1b, 0x7f, 0x0c,
            0x15, 0x0a, 0xd0, 0x2c, 0xb6, 0xf9, 0x03,
        ];
        let mut out = Vec::new();
        let read = Decompressor::new(encoded, 4096).read_to_end(&mut out);
        assert_eq!(read.ok(), Some(29));
        assert_eq!(out, b"medallion medallion medallion");
        let mut w = CompressorWriter::new(Vec::new(), 4096, 1, 22);
        let err = w.write_all(b"x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert_eq!(err.to_string(), NO_ENCODER);
        assert!(w.into_inner().is_empty());
    }
}
