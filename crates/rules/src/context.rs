//! Work in progress (context).
