//! JSON Lines writer (placeholder).
