//! gsd-lane: the plugin host for GSD's cross-AI reviewer lanes.
//!
//! The binary is a thin shell over this library so that tests can drive each stage.

pub mod app;
pub mod cli;
pub mod clock;
pub mod config;
#[cfg(feature = "dynamic-handlers")]
pub mod dynamic;
pub mod error;
pub mod fsutil;
pub mod jsonpos;
pub mod manifest;
pub mod output;
pub mod plan;
pub mod private_fs;
pub mod project;
pub mod registry;
pub mod review;
pub mod run;
pub mod sandbox;
pub mod suggest;
pub mod textsafe;
pub mod trust;
