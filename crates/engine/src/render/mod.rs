//! Trace renderers (placeholder; being written).
pub mod jsonl;
pub mod text;
