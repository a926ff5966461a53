//! The library's public surface: what the `gsd-lane` binary, the integration tests, the benches
//! and the fuzz targets name, and nothing else (see the crate documentation, "Visibility").
//!
//! Each module mirrors the internal module of the same path, so `api::plan::resolve` is
//! `crate::plan::resolve`. Every re-export names the code outside the crate that needs it.

/// The command line, the top layer.
pub mod cli {
    /// The binary: the lane flags `review` accepts (computed before parsing), parsing the
    /// arguments, the exit status of a usage error, and the dispatch of the parsed command.
    pub use crate::cli::{lane_flags_for, run, usage_status, Cli};
}

/// Project configuration and host normalization.
pub mod config {
    /// The soak test (`tests/integration/soak.rs`), `tests/integration/trust.rs`, the stages
    /// bench and the `plan_resolution` fuzz target build a configuration to plan against.
    pub use crate::config::ProjectConfig;
    /// The `host_normalization` fuzz target.
    pub use crate::config::{normalize_host, trim_ecma_whitespace};
}

/// Source positions of manifest fields.
pub mod jsonpos {
    /// The `manifest_validator` fuzz target places every diagnostic in the source text.
    pub use crate::jsonpos::locate;
}

/// The capability manifest.
pub mod manifest {
    /// The `plan_resolution` fuzz target types the bodies it plans.
    pub use crate::manifest::LaneSpec;
    /// `tests/integration/robustness.rs`, `tests/add_handler` and the `manifest_validator`
    /// fuzz target.
    pub use crate::manifest::{validate_value, Diagnostic};

    /// The typed model behind the JSON Schema.
    pub mod model {
        /// `tests/add_handler` reads the schema's handler list.
        pub use crate::manifest::model::schema_json;
    }

    /// Cross-capability rules.
    pub mod cross {
        /// The `manifest_validator` fuzz target.
        pub use crate::manifest::cross::check;
    }

    /// The facts cross-capability rules compare.
    pub mod facts {
        /// The `manifest_validator` fuzz target.
        pub use crate::manifest::facts::CapabilityFacts;
    }

    /// The manifest vocabulary.
    pub mod vocab {
        /// `tests/integration/handlers.rs` and `tests/add_handler` (the handler names) and
        /// `tests/integration/trust.rs` (the flag grammar).
        pub use crate::manifest::vocab::{handler_names, is_flag};
    }
}

/// How much may run at once.
pub mod limits {
    /// The binary raises the open-file limit at start.
    pub use crate::limits::raise_open_file_limit;
}

/// Phase timing (`GSD_LANE_TRACE_TIMING`).
pub mod timing {
    /// The binary starts the clock and marks its phases.
    pub use crate::timing::{mark, start};
}

/// Printing.
pub mod output {
    /// The binary prints its one error line with it.
    pub use crate::output::eprint_line;
}

/// Planning one lane run.
pub mod plan {
    /// `tests/integration/trust.rs`, the soak test, the stages bench and the `plan_resolution`
    /// fuzz target plan lanes directly and read the refusal reasons.
    pub use crate::plan::{prompt_budget, resolve, resolve_lane, PlanInputs, Reason, Refusal};
}

/// The host environment.
pub mod project {
    /// The binary (the process environment) and the stages bench.
    pub use crate::project::HostEnv;
}

/// The lane registry.
pub mod registry {
    /// The soak test and the registry and stages benches load the registry.
    pub use crate::registry::{ConsentGate, LoadOptions, Registry};

    /// The handler set every handler name is read from.
    pub mod handlers {
        /// `tests/add_handler` installs a set with one more handler before first use, then
        /// looks it up.
        pub use crate::registry::handlers::{install, lookup};
    }

    /// Reading manifest files.
    pub mod read {
        /// `tests/integration/robustness.rs` and the `manifest_validator` fuzz target.
        pub use crate::registry::read::parse_json;
    }
}

/// Running lanes.
pub mod run {
    /// Bounded HTTP requests.
    pub mod http {
        /// The `http_memory` bench measures one request under the default limits.
        pub use crate::run::http::{
            send_trusting, HttpLimits, Origin, TlsRoots, DEFAULT_MAX_BODY_BYTES,
        };
    }

    /// One lane run.
    pub mod lane {
        /// The soak test runs lanes in-process.
        pub use crate::run::lane::{run_lane, Completion, EgressCheck, Outcome, RunSetup};
    }
}

/// Confinement of spawned lanes.
pub mod sandbox {
    /// The soak test sets the sandbox mode of its runs, and how their view is proven.
    pub use crate::sandbox::confine::ViewProof;
    /// The soak test sets the sandbox mode of its runs.
    pub use crate::sandbox::SandboxMode;

    /// The lane watchdog.
    pub mod watchdog {
        /// The binary: gsd-lane re-executed as the lane watchdog, enabling the watchdog, and starting it early.
        pub use crate::sandbox::watchdog::{enable, run_if_watchdog, start_early};
    }
}

/// The trust layer.
pub mod trust {
    /// The stages bench measures the per-run egress check.
    pub use crate::trust::egress_check;

    /// The consent store.
    pub mod consent {
        /// The `consent_store` fuzz target parses stores.
        pub use crate::trust::consent::Records;

        /// The bundle content hash.
        pub mod hash {
            /// `tests/integration/trust.rs` compares it with `disclose`'s output.
            pub use crate::trust::consent::hash::content_hash;
        }
    }

    /// The disclosure signature.
    pub mod signature {
        /// The stages bench measures it.
        pub use crate::trust::signature::signature_for_manifest;
    }

    /// The Windows batch-shim rules.
    pub mod winshim {
        /// `tests/integration/trust.rs` checks them on every platform.
        pub use crate::trust::winshim::{
            batch_arg_refusal, candidates, is_batch_script, pathext_list,
        };
    }
}

/// The panel verdict of a REVIEWS.md.
pub mod verdict {
    /// The verdict bench computes verdicts; `has_source_citation` is the citation stamp's
    /// test (upstream #3436), the same finder the verdict counts citations with.
    pub use crate::lane_result::citations::{find, has_source_citation, Citation};
    /// The verdict bench.
    pub use crate::verdict::{compute, model::Verdict, repo::Repo};
}
