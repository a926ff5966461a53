//! Detection and pre-flight (review-workflow.md §4, §9): the same plan resolution, egress check
//! and probe the run pipeline uses (`run::lane`), without invoking anything.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use gsd_lane_sdk::LanePlan;

use crate::config::ProjectConfig;
use crate::plan::{Instance, PlanInputs};
use crate::refusal::Refusal;
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
    /// The probing of a review's lanes, with plans pointing into `run_dir`.
    pub fn for_review(
        context: &crate::context::Context,
        request: &'a super::request::Request,
        egress: &'a dyn EgressCheck,
        run_dir: String,
    ) -> Probing<'a> {
        Probing {
            config: &request.config,
            run_dir,
            repo_root: super::subject::repo_root(&context.env.cwd),
            path_var: context.env.path.clone(),
            home: context.env.home.clone(),
            lock_dir: context.lock_dir(),
            egress,
            sandbox: request.sandbox,
        }
    }

    /// The run setup the pipeline takes, for one identity.
    fn setup(&self, instance: &Instance) -> RunSetup<'a> {
        RunSetup {
            view_proof: crate::sandbox::confine::ViewProof::Probed,
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

/// An identity that passed pre-flight: its admitted plan and its lane's probe verdict, which
/// the runner runs without planning or probing again.
#[derive(Debug, Clone)]
pub struct Cleared {
    /// The plan, admitted with the identity's overrides and prompt file.
    pub plan: LanePlan,
    /// What the lane's probe found.
    pub probe: String,
}

/// Pre-flight of one identity (§9): its plan resolved and admitted once through the run
/// pipeline's own admission (trust policy, plan, handler, egress), then the verdict detection's
/// probe gave its lane; a lane detection did not reach is probed now, once (`verdicts` keeps
/// the verdict for the lane's other identities). Nothing is invoked.
///
/// # Errors
///
/// The first refusal, in pipeline order.
pub fn clear(
    lane: &Lane,
    p: &Probing<'_>,
    (instance, prompt_file): (&Instance, Option<String>),
    verdicts: &mut BTreeMap<String, Result<String, Refusal>>,
) -> Result<Cleared, Refusal> {
    let mut setup = p.setup(instance);
    setup.inputs.prompt_file = prompt_file;
    let admitted = lane::admit(lane, &setup)?;
    let verdict = verdicts
        .entry(lane.slug.clone())
        .or_insert_with(|| lane::probe_lane(lane, &admitted, &setup));
    let probe = verdict.clone()?;
    Ok(Cleared {
        plan: admitted.plan,
        probe,
    })
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
