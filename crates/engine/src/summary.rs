//! Summary statistics (placeholder).
