//! Integer arithmetic that fails instead of wrapping around (issue 9: never
//! silently wrong).
//!
//! DataFusion computes integer `+`, `-`, `*` and unary minus with wrapping
//! arithmetic (its `BinaryExpr` has `fail_on_overflow: false`, `NegativeExpr`
//! negates with `neg_wrapping`) and `sum` adds with `add_wrapping`: an INT
//! `100000 * 30000` is `-1294967296`, a BIGINT `9223372036854775807 + 1` is
//! `-9223372036854775808`, a confident wrong number. The playground follows
//! Spark's ANSI mode (the default in Spark 4 and Databricks SQL:
//! `[ARITHMETIC_OVERFLOW] integer overflow`) and PostgreSQL (`integer out of
//! range`): an integer result outside its type is an error that names the
//! values, never a wrapped value. The result type stays what DataFusion and
//! Spark give (INT × INT is INT); a cast to BIGINT or DECIMAL(38, 0)
//! computes a larger value, and the message says so.
//!
//! Where it applies:
//! - every query the session plans (gold models, checks, trails, rule
//!   expressions that run as queries: windows and subqueries): the
//!   [`CheckedArithmeticRule`] (an analyzer rule, and again as the last
//!   optimizer rule) replaces each integer `a + b`, `a - b`, `a * b`, `-a`
//!   by a checked function with the same output name and type;
//! - row-local rule expressions, which are evaluated as physical expressions
//!   without a plan: [`checked_arithmetic`] (and [`checked_logical`] before
//!   the simplifier, so that a constant such as `9223372036854775807 + 1`
//!   is not folded to a wrapped literal first);
//! - `sum` (and `sum(...) OVER (...)`, `sum(DISTINCT ...)`) over integers
//!   and DECIMAL(p, s): [`ExactSum`] adds exactly (in 128 bits) and fails
//!   when the total does not fit the result type (BIGINT, or
//!   DECIMAL(min(38, p + 10), s): DataFusion adds decimals with wrapping
//!   128-bit arithmetic and keeps totals wider than the precision, shown with
//!   digits lost), naming the total. Floats are summed as DataFusion does;
//!   DECIMAL(76) sums and `avg` of decimals are not checked. `avg` of integers is
//!   computed in DOUBLE by DataFusion and `count` is a BIGINT row count:
//!   neither wraps.
//!
//! Errors are DataFusion execution errors, so a rule's failing row is
//! quarantined with the message (`E1: qty * unit_cents failed on this row:
//! integer overflow: 100000 * 30000 = 3000000000 is outside the INT range
//! ...`), and a gold model fails with it (keeping its last good table).

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Datum, ListArray, RecordBatch,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Decimal128Type, Field, FieldRef, Int32Type, Int64Type, Schema,
    UInt64Type,
};
use datafusion::arrow::error::ArrowError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, DataFusionError, Result, ScalarValue};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::{merge_schema, AggregateOrderSensitivity};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Documentation, Expr, ExprSchemable,
    EmitTo, GroupsAccumulator, LogicalPlan, Operator, ReturnFieldArgs, ReversedUDAF, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, SetMonotonicity, Signature, Volatility,
};
use datafusion::optimizer::analyzer::AnalyzerRule;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::physical_expr::expressions::{BinaryExpr, CastExpr, Column, NegativeExpr};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::SessionContext;

/// An integer operation that is checked for overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Arith {
    Add,
    Subtract,
    Multiply,
    /// Unary minus.
    Negate,
}

impl Arith {
    fn of(op: &Operator) -> Option<Arith> {
        match op {
            Operator::Plus => Some(Arith::Add),
            Operator::Minus => Some(Arith::Subtract),
            Operator::Multiply => Some(Arith::Multiply),
            _ => None,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Arith::Add => "+",
            Arith::Subtract | Arith::Negate => "-",
            Arith::Multiply => "*",
        }
    }

    fn function_name(self) -> &'static str {
        match self {
            Arith::Add => "checked_add",
            Arith::Subtract => "checked_subtract",
            Arith::Multiply => "checked_multiply",
            Arith::Negate => "checked_negate",
        }
    }

    /// The exact result in 128 bits (`None` when even that overflows, which
    /// only an unsigned BIGINT product can).
    fn exact(self, l: i128, r: i128) -> Option<i128> {
        match self {
            Arith::Add => l.checked_add(r),
            Arith::Subtract => l.checked_sub(r),
            Arith::Multiply => l.checked_mul(r),
            Arith::Negate => l.checked_neg(),
        }
    }
}

/// The smallest and largest value of an integer type, and its SQL name.
fn int_range(dt: &DataType) -> Option<(i128, i128, &'static str)> {
    Some(match dt {
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into(), "TINYINT"),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into(), "SMALLINT"),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into(), "INT"),
        DataType::Int64 => (i64::MIN.into(), i64::MAX.into(), "BIGINT"),
        DataType::UInt8 => (0, u8::MAX.into(), "TINYINT UNSIGNED"),
        DataType::UInt16 => (0, u16::MAX.into(), "SMALLINT UNSIGNED"),
        DataType::UInt32 => (0, u32::MAX.into(), "INT UNSIGNED"),
        DataType::UInt64 => (0, u64::MAX.into(), "BIGINT UNSIGNED"),
        _ => return None,
    })
}

/// What to cast to so that a value outside `dt` can be computed.
fn wider_hint(dt: &DataType) -> &'static str {
    match dt {
        DataType::Int64 | DataType::UInt64 => "DECIMAL(38, 0)",
        _ => "BIGINT (or DECIMAL(38, 0))",
    }
}

/// `integer overflow: 100000 * 30000 = 3000000000 is outside the INT range
/// (-2147483648 to 2147483647); CAST an operand to BIGINT ...`.
fn overflow_message(op: Arith, l: i128, r: Option<i128>, dt: &DataType) -> String {
    let (lo, hi, name) = int_range(dt).unwrap_or((0, 0, "integer"));
    let operation = match (op, r) {
        (Arith::Negate, _) | (_, None) => format!("-({l})"),
        (_, Some(r)) => format!("{l} {} {r}", op.symbol()),
    };
    let value = match op.exact(l, r.unwrap_or_default()) {
        Some(v) => format!("{operation} = {v}"),
        None => operation,
    };
    let cast = if op == Arith::Negate {
        format!("CAST the value to {} first", wider_hint(dt))
    } else {
        format!("CAST an operand to {} to compute it", wider_hint(dt))
    };
    format!("integer overflow: {value} is outside the {name} range ({lo} to {hi}); {cast}")
}

fn is_overflow(e: &ArrowError) -> bool {
    matches!(e, ArrowError::ArithmeticOverflow(_))
}

fn as_datum(v: &ColumnarValue) -> Result<Box<dyn Datum>> {
    Ok(match v {
        ColumnarValue::Array(a) => Box::new(Arc::clone(a)),
        ColumnarValue::Scalar(s) => Box::new(s.to_scalar()?),
    })
}

/// The values of an integer array, exactly, as 128-bit integers.
fn exact_values(array: &ArrayRef) -> Result<Vec<Option<i128>>> {
    fn widen<T: ArrowPrimitiveType>(array: &ArrayRef) -> Vec<Option<i128>>
    where
        T::Native: Into<i128>,
    {
        array.as_primitive::<T>().iter().map(|v| v.map(Into::into)).collect()
    }
    match array.data_type() {
        // A decimal's unscaled value: summed at its own scale.
        DataType::Decimal128(_, _) => return Ok(array.as_primitive::<Decimal128Type>().iter().collect()),
        // The types a sum reads (DataFusion widens smaller integers first).
        DataType::Int64 => return Ok(widen::<Int64Type>(array)),
        DataType::UInt64 => return Ok(widen::<UInt64Type>(array)),
        DataType::Int32 => return Ok(widen::<Int32Type>(array)),
        _ => {}
    }
    let wide = cast(array, &DataType::Decimal128(38, 0))?;
    Ok(wide.as_primitive::<Decimal128Type>().iter().collect())
}

/// Evaluates `op` over integer `args` (one for [`Arith::Negate`], two of the
/// same integer type otherwise) with overflow checks: the first row whose
/// result does not fit the type is an error naming its values.
pub(crate) fn checked_op(op: Arith, args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let result = match (op, args) {
        (Arith::Negate, [a]) => {
            let a = a.to_array(if all_scalar { 1 } else { rows })?;
            numeric::neg(a.as_ref())
        }
        (Arith::Add | Arith::Subtract | Arith::Multiply, [l, r]) => {
            let (l, r) = (as_datum(l)?, as_datum(r)?);
            match op {
                Arith::Add => numeric::add(l.as_ref(), r.as_ref()),
                Arith::Subtract => numeric::sub(l.as_ref(), r.as_ref()),
                _ => numeric::mul(l.as_ref(), r.as_ref()),
            }
        }
        _ => {
            return Err(DataFusionError::Internal(format!(
                "{} takes {} arguments, got {}",
                op.function_name(),
                if op == Arith::Negate { 1 } else { 2 },
                args.len()
            )))
        }
    };
    match result {
        Ok(out) if all_scalar => Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)),
        Ok(out) => Ok(ColumnarValue::Array(out)),
        Err(e) if is_overflow(&e) => Err(first_overflow(op, args, rows)
            .unwrap_or_else(|| DataFusionError::ArrowError(Box::new(e), None))),
        Err(e) => Err(DataFusionError::ArrowError(Box::new(e), None)),
    }
}

/// The error for the first row of `args` whose result overflows its type.
fn first_overflow(op: Arith, args: &[ColumnarValue], rows: usize) -> Option<DataFusionError> {
    let arrays: Vec<ArrayRef> = args
        .iter()
        .map(|a| a.to_array(rows))
        .collect::<Result<_>>()
        .ok()?;
    let dt = arrays.first()?.data_type().clone();
    let (lo, hi, _) = int_range(&dt)?;
    let values: Vec<Vec<Option<i128>>> = arrays
        .iter()
        .map(exact_values)
        .collect::<Result<_>>()
        .ok()?;
    let left = values.first()?;
    let right = values.get(1);
    (0..left.len()).find_map(|row| {
        let l = (*left.get(row)?)?;
        let r = match right {
            Some(r) => Some((*r.get(row)?)?),
            None => None,
        };
        let fits = op
            .exact(l, r.unwrap_or_default())
            .is_some_and(|v| (lo..=hi).contains(&v));
        (!fits).then(|| DataFusionError::Execution(overflow_message(op, l, r, &dt)))
    })
}

/// Are these the types of a checked operation: one signed integer for a
/// negation, two equal integer types otherwise?
fn checked_types(op: Arith, types: &[DataType]) -> bool {
    match (op, types) {
        (Arith::Negate, [t]) => t.is_signed_integer(),
        (_, [l, r]) => l == r && l.is_integer(),
        _ => false,
    }
}

/// The checked operation as a scalar function (what [`CheckedArithmeticRule`]
/// puts in a plan): same result type and output name as the operator it
/// replaces (`qty * unit_cents`), an error instead of a wrapped value.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedArithUdf {
    op: Arith,
    signature: Signature,
}

impl CheckedArithUdf {
    fn udf(op: Arith) -> Arc<ScalarUDF> {
        let arity = if op == Arith::Negate { 1 } else { 2 };
        Arc::new(ScalarUDF::new_from_impl(CheckedArithUdf {
            op,
            signature: Signature::any(arity, Volatility::Immutable),
        }))
    }
}

impl ScalarUDFImpl for CheckedArithUdf {
    fn name(&self) -> &str {
        self.op.function_name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        arg_types
            .first()
            .cloned()
            .ok_or_else(|| DataFusionError::Internal(format!("{} without arguments", self.name())))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let nullable = args.arg_fields.iter().any(|f| f.is_nullable());
        Ok(Arc::new(Field::new(
            self.name(),
            self.return_type(&types)?,
            nullable,
        )))
    }

    /// The operator's own name (`t.qty * t.unit_cents`, `(- t.n)`), so
    /// that columns keep their names.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        Ok(match args {
            [a] => format!("(- {})", a.schema_name()),
            [l, r] => format!(
                "{} {} {}",
                l.schema_name(),
                self.op.symbol(),
                r.schema_name()
            ),
            _ => self.name().to_string(),
        })
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        checked_op(self.op, &args.args, args.number_rows)
    }
}

/// Replaces integer `+`, `-`, `*` and unary minus in every expression of a
/// plan (subqueries included) by their checked form. Registered as an
/// analyzer rule (after type coercion, before constant folding, so that a
/// constant `2147483647 * 2` is not folded to a wrapped value) and as the
/// last optimizer rule (for arithmetic an optimizer rule writes).
#[derive(Debug, Default)]
pub(crate) struct CheckedArithmeticRule;

impl CheckedArithmeticRule {
    fn rewrite_plan(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        plan.transform_up_with_subqueries(|plan| {
            let mut schema = merge_schema(&plan.inputs());
            if let LogicalPlan::TableScan(scan) = &plan {
                schema.merge(&DFSchema::try_from_qualified_schema(
                    scan.table_name.clone(),
                    &scan.source.schema(),
                )?);
            }
            let names = NamePreserver::new(&plan);
            plan.map_expressions(|expr| {
                let name = names.save(&expr);
                checked_tree(expr, &schema).map(|t| t.update_data(|e| name.restore(e)))
            })
        })
    }
}

fn checked_tree(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| checked_expr(e, schema))
}

/// `expr` (over `schema`'s columns) with its integer arithmetic in checked
/// form, for an expression evaluated without a plan. Call it before the
/// simplifier folds constants: folding `9223372036854775807 + 1` evaluates
/// DataFusion's wrapping operator (`n + (9223372036854775807 + 1)` would
/// be `n - 9223372036854775808`); the checked form is not folded when it
/// overflows, and fails on each row instead.
pub(crate) fn checked_logical(expr: Expr, schema: &DFSchema) -> Result<Expr> {
    Ok(checked_tree(expr, schema)?.data)
}

/// `e` in checked form if it is integer arithmetic over `schema`'s columns.
fn checked_expr(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (op, args) = match &e {
        Expr::BinaryExpr(b) => match Arith::of(&b.op) {
            Some(op) => (op, vec![b.left.as_ref(), b.right.as_ref()]),
            None => return Ok(Transformed::no(e)),
        },
        Expr::Negative(a) => (Arith::Negate, vec![a.as_ref()]),
        _ => return Ok(Transformed::no(e)),
    };
    let types: Option<Vec<DataType>> = args.iter().map(|a| a.get_type(schema).ok()).collect();
    if !types.is_some_and(|t| checked_types(op, &t)) {
        return Ok(Transformed::no(e));
    }
    let args = match e {
        Expr::BinaryExpr(b) => vec![*b.left, *b.right],
        Expr::Negative(a) => vec![*a],
        other => return Ok(Transformed::no(other)),
    };
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(CheckedArithUdf::udf(op), args),
    )))
}

impl AnalyzerRule for CheckedArithmeticRule {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        Ok(Self::rewrite_plan(plan)?.data)
    }

    fn name(&self) -> &str {
        "medallion_checked_arithmetic"
    }
}

impl OptimizerRule for CheckedArithmeticRule {
    fn name(&self) -> &str {
        "medallion_checked_arithmetic"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        Self::rewrite_plan(plan)
    }
}

/// A physical `BinaryExpr` (+, -, *) or `NegativeExpr` that runs checked
/// when its operands are integers (decided per batch from the schema), and
/// as the original expression otherwise.
#[derive(Debug, Eq)]
struct CheckedPhysical {
    op: Arith,
    /// The DataFusion expression it replaces.
    original: Arc<dyn PhysicalExpr>,
}

impl PartialEq for CheckedPhysical {
    fn eq(&self, other: &Self) -> bool {
        self.op == other.op && self.original.eq(&other.original)
    }
}

impl Hash for CheckedPhysical {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.op.hash(state);
        self.original.hash(state);
    }
}

impl fmt::Display for CheckedPhysical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.original)
    }
}

impl PhysicalExpr for CheckedPhysical {
    fn return_field(&self, input_schema: &Schema) -> Result<FieldRef> {
        self.original.return_field(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let schema = batch.schema();
        let children = self.original.children();
        let types: Vec<DataType> = children
            .iter()
            .map(|c| c.data_type(&schema))
            .collect::<Result<_>>()?;
        if !checked_types(self.op, &types) {
            return self.original.evaluate(batch);
        }
        let args: Vec<ColumnarValue> = children
            .iter()
            .map(|c| c.evaluate(batch))
            .collect::<Result<_>>()?;
        checked_op(self.op, &args, batch.num_rows())
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        self.original.children()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(Arc::new(CheckedPhysical {
            op: self.op,
            original: Arc::clone(&self.original).with_new_children(children)?,
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.original.fmt_sql(f)
    }
}

/// `expr` with every integer `+`, `-`, `*` and unary minus checked for
/// overflow (an error naming the values instead of a wrapped result).
/// Used where an expression is evaluated without a plan (row-local rules
/// in `eval.rs`); queries get the same through [`CheckedArithmeticRule`].
pub(crate) fn checked_arithmetic(expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
    Ok(expr
        .transform_up(|e| {
            let op = if let Some(b) = e.downcast_ref::<BinaryExpr>() {
                Arith::of(b.op())
            } else if e.downcast_ref::<NegativeExpr>().is_some() {
                Some(Arith::Negate)
            } else {
                None
            };
            Ok(match op {
                Some(op) => Transformed::yes(Arc::new(CheckedPhysical { op, original: e }) as _),
                None => Transformed::no(e),
            })
        })?
        .data)
}

/// `sum` as DataFusion's, except over integers and DECIMAL(38) values: the
/// total is computed exactly (128 bits) and a total outside the result type
/// (BIGINT, BIGINT UNSIGNED, or more digits than the DECIMAL's precision) is
/// an error naming it, where DataFusion wraps around.
/// Same name, signature, result type and state as DataFusion's `sum`, so it
/// replaces it in the session (plain, DISTINCT, GROUP BY, and as a window
/// `sum(...) OVER (...)`). Spark's ANSI mode fails the same way
/// (`ARITHMETIC_OVERFLOW`); PostgreSQL and DuckDB return a wider type
/// (NUMERIC, HUGEINT), which would change every integer sum's type here:
/// `sum(CAST(x AS DECIMAL(38, 0)))` gives that when a user needs it.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct ExactSum {
    inner: Sum,
}

/// The SQL name of the column `e` reads, if it is a column (or a cast of one).
fn column_name(e: &dyn PhysicalExpr) -> Option<String> {
    let e = match e.downcast_ref::<CastExpr>() {
        Some(cast) => cast.expr().as_ref(),
        None => e,
    };
    let name = e.downcast_ref::<Column>()?.name();
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    Some(if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    })
}

/// Is `dt` a `sum` result type this module sums exactly?
fn exact_sum_type(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int64 | DataType::UInt64 | DataType::Decimal128(_, _)
    )
}

impl ExactSum {
    fn exact(&self, args: &AccumulatorArgs) -> Option<Box<dyn Accumulator>> {
        exact_sum_type(args.return_type())
            .then(|| Box::new(ExactIntSum::new(args)) as Box<dyn Accumulator>)
    }
}

impl AggregateUDFImpl for ExactSum {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match self.exact(&args) {
            Some(acc) => Ok(acc),
            None => self.inner.accumulator(args),
        }
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        // Integer sums: every group at once (ExactGroupsSum); a DISTINCT one
        // per group (ExactIntSum through DataFusion's adapter).
        if exact_sum_type(args.return_type()) {
            return !args.is_distinct;
        }
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        if exact_sum_type(args.return_type()) && !args.is_distinct {
            return Ok(Box::new(ExactGroupsSum {
                proto: ExactIntSum::new(&args),
                sums: vec![],
                counts: vec![],
            }));
        }
        self.inner.create_groups_accumulator(args)
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match self.exact(&args) {
            Some(acc) => Ok(acc),
            None => self.inner.create_sliding_accumulator(args),
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        self.inner
            .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left)
    }
}

/// The unscaled `v` written with `scale` decimals, whatever its number of
/// digits (Arrow's formatter cuts digits beyond the precision).
fn decimal_text(v: i128, scale: i8) -> String {
    let digits = v.unsigned_abs().to_string();
    let sign = if v < 0 { "-" } else { "" };
    let Ok(scale) = usize::try_from(scale) else {
        return format!("{sign}{digits}e{}", -i32::from(scale));
    };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// An integer or DECIMAL `sum` (optionally DISTINCT, with retraction for
/// window frames) kept exactly in 128 bits (a decimal's unscaled value).
#[derive(Debug)]
struct ExactIntSum {
    /// BIGINT, BIGINT UNSIGNED or DECIMAL(p, s) (with the input's scale).
    return_type: DataType,
    /// The column summed, for the message (`x` for an expression).
    column: String,
    sum: i128,
    /// Non-NULL values (or partial sums) taken in and not retracted.
    count: u64,
    /// For DISTINCT: each distinct value with how many times it is in.
    distinct: Option<HashMap<i128, u64>>,
}

impl ExactIntSum {
    /// An empty sum of the aggregate `args` describes.
    fn new(args: &AccumulatorArgs) -> Self {
        ExactIntSum {
            return_type: args.return_type().clone(),
            column: args
                .exprs
                .first()
                .and_then(|e| column_name(e.as_ref()))
                .unwrap_or_else(|| "x".into()),
            sum: 0,
            count: 0,
            distinct: args.is_distinct.then(HashMap::new),
        }
    }

    fn add(&mut self, v: i128) -> Result<()> {
        self.sum = self.sum.checked_add(v).ok_or_else(|| self.too_large())?;
        Ok(())
    }

    fn sub(&mut self, v: i128) -> Result<()> {
        self.sum = self.sum.checked_sub(v).ok_or_else(|| self.too_large())?;
        Ok(())
    }

    fn too_large(&self) -> DataFusionError {
        if let DataType::Decimal128(p, s) = self.return_type {
            return DataFusionError::Execution(format!(
                "decimal overflow: sum({}) has more than {p} digits, the most DECIMAL({p}, {s}) holds",
                self.column
            ));
        }
        let (_, _, name) = int_range(&self.return_type).unwrap_or((0, 0, "BIGINT"));
        DataFusionError::Execution(format!(
            "integer overflow: sum is outside the {name} range; {}",
            self.decimal_hint()
        ))
    }

    /// `sum a DECIMAL instead: sum(CAST(n AS DECIMAL(38, 0)))`.
    fn decimal_hint(&self) -> String {
        format!(
            "sum a DECIMAL instead: sum(CAST({} AS DECIMAL(38, 0)))",
            self.column
        )
    }

    fn take(&mut self, v: i128) -> Result<()> {
        match &mut self.distinct {
            Some(seen) => {
                let n = seen.entry(v).or_insert(0);
                *n += 1;
                if *n == 1 {
                    self.add(v)?;
                }
            }
            None => {
                self.add(v)?;
                self.count += 1;
            }
        }
        Ok(())
    }

    fn give_back(&mut self, v: i128) -> Result<()> {
        match &mut self.distinct {
            Some(seen) => {
                let Some(n) = seen.get_mut(&v) else {
                    return Ok(());
                };
                *n -= 1;
                if *n == 0 {
                    seen.remove(&v);
                    self.sub(v)?;
                }
            }
            None => {
                self.sub(v)?;
                self.count = self.count.saturating_sub(1);
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        match &self.distinct {
            Some(seen) => seen.is_empty(),
            None => self.count == 0,
        }
    }

    /// `v` as a value of the result type, or the overflow error.
    fn scalar(&self, v: i128) -> Result<ScalarValue> {
        let out_of_range = || {
            let (lo, hi, name) = int_range(&self.return_type).unwrap_or((0, 0, "BIGINT"));
            DataFusionError::Execution(format!(
                "integer overflow: sum = {v} is outside the {name} range ({lo} to {hi}); {}",
                self.decimal_hint()
            ))
        };
        Ok(match self.return_type {
            DataType::Decimal128(p, s) => {
                // DataFusion would store any i128; a value wider than the
                // precision would be shown with digits lost.
                let digits = v.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1);
                if digits > u32::from(p) {
                    let text = decimal_text(v, s);
                    return Err(DataFusionError::Execution(format!(
                        "decimal overflow: sum({}) = {text} has {digits} digits, more than the {p} DECIMAL({p}, {s}) holds",
                        self.column
                    )));
                }
                ScalarValue::Decimal128(Some(v), p, s)
            }
            DataType::UInt64 => {
                ScalarValue::UInt64(Some(u64::try_from(v).map_err(|_| out_of_range())?))
            }
            _ => ScalarValue::Int64(Some(i64::try_from(v).map_err(|_| out_of_range())?)),
        })
    }

    fn null(&self) -> Result<ScalarValue> {
        ScalarValue::try_from(&self.return_type)
    }

    /// `f` for each non-NULL value of the first array of `values`.
    fn each_value(
        &mut self,
        values: &[ArrayRef],
        f: fn(&mut Self, i128) -> Result<()>,
    ) -> Result<()> {
        let Some(values) = values.first() else {
            return Ok(());
        };
        for v in exact_values(values)?.into_iter().flatten() {
            f(self, v)?;
        }
        Ok(())
    }
}

impl Accumulator for ExactIntSum {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.each_value(values, Self::take)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.each_value(values, Self::give_back)
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(states) = states.first() else {
            return Ok(());
        };
        if self.distinct.is_some() {
            // One list of distinct values per partial state.
            let Some(lists) = states.as_any().downcast_ref::<ListArray>() else {
                return Err(DataFusionError::Internal(format!(
                    "sum(DISTINCT) state is {}, not a list",
                    states.data_type()
                )));
            };
            for list in lists.iter().flatten() {
                for v in exact_values(&list)?.into_iter().flatten() {
                    if let Some(seen) = &mut self.distinct {
                        if seen.insert(v, 1).is_none() {
                            self.add(v)?;
                        }
                    }
                }
            }
            return Ok(());
        }
        for v in exact_values(states)?.into_iter().flatten() {
            self.add(v)?;
            self.count += 1;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        if let Some(seen) = &self.distinct {
            let mut keys: Vec<i128> = seen.keys().copied().collect();
            keys.sort_unstable();
            let values: Vec<ScalarValue> = keys
                .into_iter()
                .map(|k| self.scalar(k))
                .collect::<Result<_>>()?;
            return Ok(vec![ScalarValue::List(ScalarValue::new_list_nullable(
                &values,
                &self.return_type,
            ))]);
        }
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.is_empty() {
            self.null()
        } else {
            self.scalar(self.sum)
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .distinct
                .as_ref()
                .map_or(0, |s| s.capacity() * std::mem::size_of::<(i128, u64)>())
    }
}

/// [`ExactIntSum`] (not DISTINCT) for every group of a GROUP BY at once:
/// DataFusion hands it whole batches with each row's group, so a grouped
/// sum does not cut each batch into one slice per group. The same sums,
/// NULLs and overflow errors as [`ExactIntSum`]; a partial state is the
/// group's sum in the result type (NULL for none), as there.
#[derive(Debug)]
struct ExactGroupsSum {
    /// The result type and column, for the values and the messages (its
    /// own sum is unused).
    proto: ExactIntSum,
    /// Per group: the exact sum, and how many non-NULL values it took.
    sums: Vec<i128>,
    counts: Vec<u64>,
}

impl ExactGroupsSum {
    /// Adds each non-NULL value of `values` (rows `filter` keeps) to its
    /// row's group in `groups`.
    fn add(
        &mut self,
        values: &[ArrayRef],
        groups: &[usize],
        filter: Option<&BooleanArray>,
        total_groups: usize,
    ) -> Result<()> {
        self.sums.resize(total_groups, 0);
        self.counts.resize(total_groups, 0);
        let Some(values) = values.first() else {
            return Ok(());
        };
        let kept = |row: usize| filter.is_none_or(|f| f.is_valid(row) && f.value(row));
        for (row, (v, &g)) in exact_values(values)?.into_iter().zip(groups).enumerate() {
            let Some(v) = v.filter(|_| kept(row)) else {
                continue;
            };
            self.sums[g] = self.sums[g]
                .checked_add(v)
                .ok_or_else(|| self.proto.too_large())?;
            self.counts[g] += 1;
        }
        Ok(())
    }
}

impl GroupsAccumulator for ExactGroupsSum {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.add(values, group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.add(values, group_indices, None, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let sums = emit_to.take_needed(&mut self.sums);
        let counts = emit_to.take_needed(&mut self.counts);
        let values = sums
            .into_iter()
            .zip(counts)
            .map(|(sum, n)| match n {
                0 => self.proto.null(),
                _ => self.proto.scalar(sum),
            })
            .collect::<Result<Vec<_>>>()?;
        if values.is_empty() {
            return Ok(datafusion::arrow::array::new_empty_array(&self.proto.return_type));
        }
        ScalarValue::iter_to_array(values)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate(emit_to)?])
    }

    /// Not offered (`supports_convert_to_state` is false): DataFusion
    /// does not call it.
    fn convert_to_state(
        &self,
        _values: &[ArrayRef],
        _opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        Err(DataFusionError::NotImplemented(
            "the exact sum keeps no per-row state".into(),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.sums.capacity() * std::mem::size_of::<i128>()
            + self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

/// Installs the checked arithmetic and the exact `sum` in `ctx` (every
/// session of the playground: `playground::new_session`).
pub(crate) fn install(ctx: &SessionContext) {
    ctx.add_analyzer_rule(Arc::new(CheckedArithmeticRule));
    ctx.add_optimizer_rule(Arc::new(CheckedArithmeticRule));
    ctx.register_udaf(AggregateUDF::new_from_impl(ExactSum::default()));
}

// Native only: the multi-partition queries need a tokio runtime.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, Int64Array, StringArray};
    use datafusion::arrow::util::display::array_value_to_string;
    use datafusion::prelude::SessionConfig;

    fn session(partitions: usize) -> SessionContext {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new().with_target_partitions(partitions),
        );
        install(&ctx);
        ctx
    }

    fn table(ctx: &SessionContext) {
        let batch = RecordBatch::try_from_iter(vec![
            (
                "k",
                Arc::new(StringArray::from(vec!["a", "a", "b", "b"])) as ArrayRef,
            ),
            (
                "i",
                Arc::new(Int32Array::from(vec![
                    Some(100_000),
                    Some(3),
                    None,
                    Some(-7),
                ])) as ArrayRef,
            ),
            (
                "n",
                Arc::new(Int64Array::from(vec![i64::MAX, 1, -5, -5])) as ArrayRef,
            ),
        ])
        .unwrap();
        ctx.register_batch("t", batch).unwrap();
    }

    /// The query's result as lines of `|`-joined cells, and its column names.
    async fn query(ctx: &SessionContext, sql: &str) -> Result<(Vec<String>, Vec<String>)> {
        let df = ctx.sql(sql).await?;
        let batches = df.collect().await?;
        let mut lines = Vec::new();
        let mut names = Vec::new();
        for b in &batches {
            names = b
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            for r in 0..b.num_rows() {
                let cells: Vec<String> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            array_value_to_string(c, r).unwrap()
                        }
                    })
                    .collect();
                lines.push(cells.join("|"));
            }
        }
        Ok((lines, names))
    }

    async fn error(ctx: &SessionContext, sql: &str) -> String {
        match query(ctx, sql).await {
            Ok(rows) => panic!("{sql} gave {rows:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_kernel_names_the_first_overflowing_row_and_the_exact_value() {
        let l = ColumnarValue::Array(Arc::new(Int32Array::from(vec![
            Some(2),
            None,
            Some(100_000),
        ])));
        let r = ColumnarValue::Scalar(ScalarValue::Int32(Some(30_000)));
        let e = checked_op(Arith::Multiply, &[l.clone(), r.clone()], 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Execution error: integer overflow: 100000 * 30000 = 3000000000 is outside the INT range (-2147483648 to 2147483647); CAST an operand to BIGINT (or DECIMAL(38, 0)) to compute it"
        );
        let ok = checked_op(Arith::Add, &[l, r], 3)
            .unwrap()
            .to_array(3)
            .unwrap();
        assert_eq!(
            ok.as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                .iter()
                .collect::<Vec<_>>(),
            vec![Some(30_002), None, Some(130_000)]
        );
        // Two scalars give a scalar; unsigned subtraction below zero fails.
        let s = |v: u64| ColumnarValue::Scalar(ScalarValue::UInt64(Some(v)));
        assert!(matches!(
            checked_op(Arith::Subtract, &[s(5), s(3)], 1).unwrap(),
            ColumnarValue::Scalar(ScalarValue::UInt64(Some(2)))
        ));
        let e = checked_op(Arith::Subtract, &[s(3), s(5)], 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("3 - 5 = -2 is outside the BIGINT UNSIGNED range (0 to 18446744073709551615); CAST an operand to DECIMAL(38, 0)"),
            "{e}"
        );
        // Beyond even 128 bits: the operation without its value.
        let e = checked_op(Arith::Multiply, &[s(u64::MAX), s(u64::MAX)], 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("18446744073709551615 * 18446744073709551615 is outside"),
            "{e}"
        );
        let e = checked_op(
            Arith::Negate,
            &[ColumnarValue::Scalar(ScalarValue::Int8(Some(i8::MIN)))],
            1,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("-(-128) = 128 is outside the TINYINT range (-128 to 127); CAST the value to BIGINT (or DECIMAL(38, 0)) first"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn queries_keep_their_column_names_and_non_integer_arithmetic() {
        let ctx = session(1);
        table(&ctx);
        let (rows, names) = query(
            &ctx,
            "SELECT i * 2, -n, n - 1 FROM t WHERE i + 1 > 0 ORDER BY n - i DESC",
        )
        .await
        .unwrap();
        assert_eq!(names, ["t.i * Int64(2)", "(- t.n)", "t.n - Int64(1)"]);
        assert_eq!(
            rows,
            ["200000|-9223372036854775807|9223372036854775806", "6|-1|0"]
        );
        // GROUP BY an expression and select it again.
        let (rows, _) = query(
            &ctx,
            "SELECT i + i AS twice, count(*) AS c FROM t GROUP BY i + i ORDER BY twice",
        )
        .await
        .unwrap();
        assert_eq!(rows, ["-14|1", "6|1", "200000|1", "NULL|1"]);
        // Floats, decimals and dates are computed as before.
        let (rows, _) = query(
            &ctx,
            "SELECT 1e308 * 10, CAST(1.5 AS DECIMAL(10, 2)) * 2, DATE '2024-01-31' + INTERVAL '1 day'",
        )
        .await
        .unwrap();
        assert_eq!(rows, ["inf|3.00|2024-02-01"]);
        // INT × INT overflows as an INT; the error names the values.
        let e = error(&ctx, "SELECT i * i FROM t").await;
        assert!(
            e.contains("integer overflow: 100000 * 100000 = 10000000000 is outside the INT range"),
            "{e}"
        );
        // In a join key and in a filter.
        let e = error(&ctx, "SELECT a.k FROM t a JOIN t b ON a.n + 1 = b.n").await;
        assert!(
            e.contains("9223372036854775807 + 1 = 9223372036854775808"),
            "{e}"
        );
        let e = error(&ctx, "SELECT k FROM t WHERE n * 2 > 0").await;
        assert!(e.contains("9223372036854775807 * 2"), "{e}");
        // A constant is not folded to a wrapped value.
        let e = error(&ctx, "SELECT CAST(2147483647 AS INT) + CAST(1 AS INT)").await;
        assert!(
            e.contains("2147483647 + 1 = 2147483648 is outside the INT range"),
            "{e}"
        );
        // In a subquery.
        let e = error(&ctx, "SELECT k FROM t WHERE n IN (SELECT n + 1 FROM t)").await;
        assert!(e.contains("9223372036854775807 + 1"), "{e}");
    }

    #[test]
    fn a_constant_is_not_folded_to_a_wrapped_value_before_a_row_local_evaluation() {
        use datafusion::logical_expr::simplify::SimplifyContext;
        use datafusion::optimizer::simplify_expressions::ExprSimplifier;
        let ctx = session(1);
        let batch = RecordBatch::try_from_iter(vec![(
            "n",
            Arc::new(Int64Array::from(vec![3])) as ArrayRef,
        )])
        .unwrap();
        let schema = DFSchema::try_from(batch.schema().as_ref().clone()).unwrap();
        // As eval.rs evaluates a row-local rule: coerce, simplify, plan.
        let run = |sql: &str, checked_first: bool| {
            let expr = ctx.parse_sql_expr(sql, &schema).unwrap();
            let simplifier = ExprSimplifier::new(
                SimplifyContext::builder()
                    .with_schema(Arc::new(schema.clone()))
                    .build(),
            );
            let mut expr = simplifier.coerce(expr, &schema).unwrap();
            if checked_first {
                expr = checked_logical(expr, &schema).unwrap();
            }
            let expr = simplifier.simplify(expr).unwrap();
            let physical =
                checked_arithmetic(ctx.create_physical_expr(expr, &schema).unwrap()).unwrap();
            physical
                .evaluate(&batch)
                .and_then(|v| v.to_array(1))
                .map(|a| array_value_to_string(&a, 0).unwrap())
                .map_err(|e| e.to_string())
        };
        let sql = "n + (9223372036854775807 + 1)";
        // Folded by DataFusion's simplifier alone: wrapped.
        assert_eq!(run(sql, false), Ok("-9223372036854775805".to_string()));
        let e = run(sql, true).unwrap_err();
        assert!(
            e.contains("9223372036854775807 + 1 = 9223372036854775808"),
            "{e}"
        );
        // Constants that fit are still folded and computed.
        assert_eq!(
            run("n - (9223372036854775806 + 1) + 9223372036854775807", true),
            Ok("3".to_string())
        );
    }

    #[tokio::test]
    async fn sums_are_exact_or_fail_in_every_form() {
        // Several partitions: partial sums are merged (state / merge_batch).
        for partitions in [1, 3] {
            let ctx = session(partitions);
            table(&ctx);
            let (rows, _) = query(
                &ctx,
                "SELECT sum(n), sum(DISTINCT n), sum(i), sum(CAST(NULL AS BIGINT)) FROM t",
            )
            .await
            .unwrap();
            assert_eq!(
                rows,
                ["9223372036854775798|9223372036854775803|99996|NULL"],
                "{partitions} partitions"
            );
            let e = error(&ctx, "SELECT k, sum(n) FROM t GROUP BY k").await;
            assert!(
                e.contains(
                    "integer overflow: sum = 9223372036854775808 is outside the BIGINT range"
                ),
                "{e}"
            );
            let (rows, _) = query(
                &ctx,
                "SELECT k, sum(n) FROM t WHERE n < 100 GROUP BY k ORDER BY k",
            )
            .await
            .unwrap();
            assert_eq!(rows, ["a|1", "b|-10"], "{partitions} partitions");
            // Grouped (every group at once): a group of NULLs sums to NULL,
            // FILTER keeps its rows, DISTINCT counts a value once per group,
            // INT widens exactly and a DECIMAL keeps its scale.
            let (rows, _) = query(
                &ctx,
                "SELECT k, sum(CASE WHEN n < 0 THEN n END), sum(n) FILTER (WHERE n < 100), sum(DISTINCT n) FILTER (WHERE n < 100), sum(i) FROM t GROUP BY k ORDER BY k",
            )
            .await
            .unwrap();
            assert_eq!(
                rows,
                ["a|NULL|1|1|100003", "b|-10|-10|-5|-7"],
                "{partitions} partitions"
            );
            let (rows, _) = query(
                &ctx,
                "SELECT k, sum(CAST(i AS DECIMAL(10, 2))) FROM t GROUP BY k ORDER BY k",
            )
            .await
            .unwrap();
            assert_eq!(rows, ["a|100003.00", "b|-7.00"], "{partitions} partitions");
        }
        let ctx = session(1);
        table(&ctx);
        // Window frames add and retract exactly: -5, -5, 1, 2^63 - 1.
        let (rows, _) = query(
            &ctx,
            "SELECT sum(n) OVER (ORDER BY n ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), sum(n) OVER (ORDER BY n) FROM t ORDER BY n",
        )
        .await
        .unwrap();
        assert_eq!(
            rows,
            [
                "-5|-10",
                "-10|-10",
                "-9|-9",
                "9223372036854775803|9223372036854775798"
            ]
        );
        let e = error(&ctx, "SELECT sum(n) OVER (ORDER BY n DESC) FROM t").await;
        assert!(e.contains("sum = 9223372036854775808"), "{e}");
        // Unsigned sums reach 2^64 - 1.
        let (rows, _) = query(
            &ctx,
            "SELECT sum(CAST(n AS BIGINT UNSIGNED)) FROM t WHERE n > 0",
        )
        .await
        .unwrap();
        assert_eq!(rows, ["9223372036854775808"]);
        // Floats and decimals as DataFusion sums them.
        let (rows, _) = query(&ctx, "SELECT sum(CAST(n AS DOUBLE)) FROM t")
            .await
            .unwrap();
        assert_eq!(rows, ["9.223372036854776e18"]);
        let (rows, _) = query(&ctx, "SELECT sum(CAST(n AS DECIMAL(38, 0))) FROM t")
            .await
            .unwrap();
        assert_eq!(rows, ["9223372036854775798"]);
    }
}
