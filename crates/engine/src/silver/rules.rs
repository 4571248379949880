//! The rule registry (seed `002_b94de4dc08a8f02d.txt` section 3): plain
//! serde data in [`medallion_protocol::rules`], where the kinds, the actions
//! and what "fails" means per kind are described; re-exported here.
//! [`crate::pipeline`] runs it.

pub use medallion_protocol::rules::{
    Action, Lookup, Rule, RuleKind, RuleParam, RuleRegistry, RuleStat,
};
