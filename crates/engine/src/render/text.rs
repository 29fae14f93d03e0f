//! Narration (placeholder).
