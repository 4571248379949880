//! What a pipeline is made of: bronze tables with their declared source
//! schemas, silver tables with their rule registries, gold models and quality
//! checks. The types are plain serde data in [`medallion_protocol`]
//! (`pipeline_def`, `checks`, `schema`), re-exported here, with the Arrow
//! type of each declared column type ([`ArrowColumnType`]).

use datafusion::arrow::datatypes::{DataType, TimeUnit};

pub use medallion_protocol::checks::{CheckDef, CheckKind, CheckLevel, ContractColumn, Severity};
pub use medallion_protocol::pipeline_def::{
    AntiPatterns, BronzeMode, BronzeTableDef, GoldModelDef, PipelineDef, SilverTableDef,
};
pub use medallion_protocol::schema::{
    AmbiguousTime, ColumnType, NonexistentTime, ReadAsUtc, SourceColumn, SourceSchema,
};

/// A declared [`ColumnType`]'s Arrow type, and back (the type itself lives
/// in [`medallion_protocol`], which has no Arrow).
pub trait ArrowColumnType: Sized {
    /// The Arrow type the column is converted to.
    fn arrow_type(self) -> DataType;
    /// The declared type whose Arrow type is `dt`, if any (for schema checks).
    fn from_arrow(dt: &DataType) -> Option<Self>;
}

impl ArrowColumnType for ColumnType {
    fn arrow_type(self) -> DataType {
        match self {
            ColumnType::String => DataType::Utf8,
            ColumnType::Int => DataType::Int32,
            ColumnType::Bigint => DataType::Int64,
            ColumnType::Double => DataType::Float64,
            ColumnType::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
            ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            ColumnType::Date => DataType::Date32,
            ColumnType::Boolean => DataType::Boolean,
        }
    }

    fn from_arrow(dt: &DataType) -> Option<ColumnType> {
        Some(match dt {
            DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => ColumnType::String,
            DataType::Int32 => ColumnType::Int,
            DataType::Int64 => ColumnType::Bigint,
            DataType::Float64 => ColumnType::Double,
            DataType::Decimal128(precision, scale) => ColumnType::Decimal {
                precision: *precision,
                scale: *scale,
            },
            DataType::Timestamp(TimeUnit::Microsecond, None) => ColumnType::Timestamp,
            DataType::Date32 => ColumnType::Date,
            DataType::Boolean => ColumnType::Boolean,
            _ => return None,
        })
    }
}
