//! The scenario crate's tests against files on disk, as one test binary (one link): the
//! fixture trees of valid and invalid scenarios, agent definition files, and damaged inputs.

mod definitions;
mod invalid;
mod robustness;
mod valid;
