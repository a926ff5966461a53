//! Detection and pre-flight (review-workflow.md §4, §9): the same plan resolution, egress check
//! and probe the run pipeline uses (`run::lane`), without invoking anything.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gsd_lane_sdk::LanePlan;

use crate::config::ProjectConfig;
use crate::plan::{self, Instance, PlanInputs, Refusal};
use crate::registry::{Lane, Scope};
use crate::run::effects::HostEffects;
use crate::run::http::{HttpLimits, Origin};
use crate::run::lane::EgressCheck;
use crate::run::probe;
use crate::run::spawn::{self, ChildEnv, SpawnLimits};

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
}

/// Resolves the plan of `lane` (with instance overrides) and checks its egress; nothing runs.
///
/// # Errors
///
/// The refusal of plan resolution or of the egress check.
pub fn resolve(lane: &Lane, p: &Probing<'_>, instance: &Instance) -> Result<LanePlan, Refusal> {
    let inputs = PlanInputs {
        run_dir: p.run_dir.clone(),
        repo_root: p.repo_root.clone(),
        prompt_file: None,
        instance: instance.clone(),
        effort: None,
    };
    let plan = plan::resolve(&lane.capability_id, lane.body(), p.config, &inputs)?;
    if let Some(name) = &plan.handler {
        gsd_lane_handlers::lookup(name)
            .map_err(|err| Refusal::new(crate::plan::Reason::UnknownHandler, err.to_string()))?;
    }
    p.egress.check(&plan)?;
    Ok(plan)
}

/// Detects `lane` (§4): plan resolves, egress allows it, probe reports it available.
///
/// # Errors
///
/// The first refusal.
pub fn detect(lane: &Lane, p: &Probing<'_>) -> Result<String, Refusal> {
    let plan = resolve(lane, p, &Instance::default())?;
    let effects = probe_effects(lane, &plan, p);
    probe::check(&plan, p.path_var.as_deref(), &effects)
}

/// Effects for a probe: the lane's own probe binary only, the lane's environment policy.
fn probe_effects(lane: &Lane, plan: &LanePlan, p: &Probing<'_>) -> HostEffects {
    let env = match lane.scope {
        Scope::FirstParty => ChildEnv::Inherit,
        Scope::Global | Scope::Project => spawn::minimal_env_from_current(),
    };
    let mut allowed = Vec::new();
    if let gsd_lane_sdk::Probe::CommandCapability { binary, .. } = &plan.probe {
        allowed.push(binary.clone());
    }
    HostEffects {
        allowed_programs: allowed,
        origin: plan.http().and_then(|http| Origin::of(&http.host).ok()),
        env,
        deadline: Instant::now() + Duration::from_millis(plan.timeout_ms),
        home: p.home.clone(),
        lock_dir: p.lock_dir.clone(),
        spawn_limits: SpawnLimits::default(),
        http_limits: HttpLimits::default(),
        warnings: RefCell::new(Vec::new()),
    }
}
