//! Work in progress (spawn).
