//! Detection and pre-flight (review-workflow.md §4, §9): the same plan resolution, egress check
//! and probe the run pipeline uses (`run::lane`), without invoking anything.

use std::ffi::OsString;
use std::path::PathBuf;

use gsd_lane_sdk::LanePlan;

use crate::config::ProjectConfig;
use crate::plan::{Instance, PlanInputs, Refusal};
use crate::registry::Lane;
use crate::run::lane::{self, EgressCheck, RunSetup};

/// What a probe needs.
pub struct Probing<'a> {
    /// Project configuration.
    pub config: &'a ProjectConfig,
    /// Run directory the plans point into.
    pub run_dir: String,
    /// Repository root.
    pub repo_root: String,
    /// `PATH`.
    pub path_var: Option<OsString>,
    /// Home directory.
    pub home: Option<PathBuf>,
    /// Lock directory.
    pub lock_dir: PathBuf,
    /// Egress gate.
    pub egress: &'a dyn EgressCheck,
    /// The run's sandbox mode (probes that start a process run under it).
    pub sandbox: crate::sandbox::SandboxMode,
}

impl<'a> Probing<'a> {
    /// The run setup the pipeline takes, for one identity.
    fn setup(&self, instance: &Instance) -> RunSetup<'a> {
        RunSetup {
            config: self.config,
            inputs: PlanInputs {
                run_dir: self.run_dir.clone(),
                repo_root: self.repo_root.clone(),
                prompt_file: None,
                instance: instance.clone(),
                effort: None,
            },
            path_var: self.path_var.clone(),
            home: self.home.clone(),
            lock_dir: self.lock_dir.clone(),
            egress: self.egress,
            handler_override: None,
            sandbox: self.sandbox,
        }
    }
}

/// Resolves the plan of `lane` (with instance overrides) through the run pipeline's own
/// admission (trust policy, plan, handler, egress); nothing runs.
///
/// # Errors
///
/// The first refusal, in pipeline order.
pub fn resolve(lane: &Lane, p: &Probing<'_>, instance: &Instance) -> Result<LanePlan, Refusal> {
    lane::admit(lane, &p.setup(instance)).map(|admitted| admitted.plan)
}

/// Detects `lane` (§4): admitted by the pipeline and its probe reports it available.
///
/// # Errors
///
/// The first refusal.
pub fn detect(lane: &Lane, p: &Probing<'_>) -> Result<String, Refusal> {
    let setup = p.setup(&Instance::default());
    let admitted = lane::admit(lane, &setup)?;
    lane::probe_lane(lane, &admitted, &setup)
}
