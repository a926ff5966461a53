//! The review command line (review-workflow.md §2): the command's own options (`ReviewArgs`,
//! clap derive) plus one flag per loaded lane, added to the clap model at run time because lane
//! flags are data. Clap then does the parsing, the help, the errors and the suggestions.

use std::collections::BTreeSet;

use clap::{Arg, ArgAction, ArgMatches, Args, Command};

use crate::registry::Registry;

/// Arguments of `review` (its own options; lane flags are added by [`with_lane_flags`]).
#[derive(Debug, Clone, Default, Args)]
#[command(
    group(clap::ArgGroup::new("resuming").args(["resume", "retry"]).multiple(true)),
    after_help = "Lane flags name reviewers explicitly (`gsd-lane flags` lists them). Without one, \
`--all` runs every detected lane; otherwise `review.default_reviewers` decides, and without that \
setting every detected lane runs."
)]
pub struct ReviewArgs {
    /// Review the plans of this GSD phase (e.g. `3`, `03`, `2.1`).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::builder::NonEmptyStringValueParser::new(),
        required_unless_present_any = ["prompt_file", "resuming"],
        conflicts_with = "prompt_file"
    )]
    pub phase: Option<String>,
    /// Review any document instead of a phase (with `--out`).
    #[arg(
        long,
        value_name = "FILE",
        value_parser = clap::builder::NonEmptyStringValueParser::new()
    )]
    pub prompt_file: Option<String>,
    /// Where the REVIEWS.md of `--prompt-file` goes.
    #[arg(
        long,
        value_name = "REVIEWS.md",
        value_parser = clap::builder::NonEmptyStringValueParser::new(),
        requires = "prompt_file"
    )]
    pub out: Option<String>,
    /// Every detected lane, whatever `review.default_reviewers` says.
    #[arg(long, conflicts_with = "resuming")]
    pub all: bool,
    /// The lane driving this review, which is skipped (default: from the environment).
    #[arg(
        long = "self",
        value_name = "SLUG",
        conflicts_with = "resuming",
        value_parser = clap::builder::NonEmptyStringValueParser::new()
    )]
    pub self_slug: Option<String>,
    /// At most this many lanes at a time (default: from the cores and the open-file limit; 1 is
    /// sequential).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// How spawned lanes may touch the repository for this run: `enforce`, `detect` or `off`
    /// (default: `review.sandbox`, else enforce).
    #[arg(long, value_name = "MODE", value_parser = crate::sandbox::SandboxMode::parse_flag)]
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// Progress and the result as one JSON object per event.
    #[arg(long)]
    pub json: bool,
    /// Exit 2 when the panel verdict's quorum (`review.quorum`, default 2) is not met.
    #[arg(long)]
    pub require_quorum: bool,
    /// Continue a recorded run: re-run only the reviewers that did not finish with a real
    /// review (default: the latest run of the same phase or prompt file; `gsd-lane runs`).
    #[arg(long, value_name = "RUN_DIR", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Re-run this reviewer identity of the recorded run even if it succeeded (repeatable;
    /// implies `--resume`).
    #[arg(long, value_name = "ID", action = ArgAction::Append,
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub retry: Vec<String>,
    /// Resume even though the prompt, a lane's manifest or its configuration changed.
    #[arg(long, requires = "resuming")]
    pub force: bool,
    /// Active lanes named by a lane flag, by slug, each once, in descriptor order (the run
    /// order does not depend on the order flags were typed in).
    #[arg(skip)]
    pub lanes: Vec<String>,
    /// Lane flags given that name a lane which exists but is not active.
    #[arg(skip)]
    pub inactive_flags: Vec<String>,
    /// Set by another command running review's stages (`code-review`), which has options of
    /// its own and has already warned about lane flags that collide with them: the warnings
    /// about `review`'s options would be wrong there.
    #[arg(skip)]
    pub collisions_said: bool,
    /// Set by `code-review`: every named lane runs whatever another one did, each with its own
    /// reason (upstream #4323's per-lane reasons). `review` instead leaves the named lanes not
    /// yet started when one of them fails (§9: a named reviewer that cannot run stops the
    /// review).
    #[arg(skip)]
    pub keep_going: bool,
}

impl ReviewArgs {
    /// True when this request continues a recorded run.
    pub fn resuming(&self) -> bool {
        self.resume.is_some() || !self.retry.is_empty()
    }

    /// What clap cannot say: `--prompt-file` needs `--out` (unless resuming, where the record
    /// has it), and a resumed run keeps the lanes it recorded.
    ///
    /// # Errors
    ///
    /// The usage error.
    pub fn check(&self) -> Result<(), ArgsError> {
        if self.resuming() {
            // Lane flags are compared with the recorded run's (`selection::same_lanes`).
            if !self.inactive_flags.is_empty() {
                return Err(ArgsError::ResumeWithInactiveFlags);
            }
        } else if self.prompt_file.is_some() && self.out.is_none() {
            return Err(ArgsError::PromptFileWithoutOut);
        }
        Ok(())
    }

    /// The run dir `--resume` named, if any (`--resume` alone resumes the latest match).
    pub fn resume_dir(&self) -> Option<&str> {
        self.resume.as_deref().filter(|dir| !dir.is_empty())
    }

    /// The selection part of the request as an argument list that [`parse`] reads back: what a
    /// run record keeps so `--resume` can rebuild the original request.
    pub fn selection_argv(&self, registry: &Registry) -> Vec<String> {
        let mut argv = Vec::new();
        let mut push = |name: &str, value: &Option<String>| {
            if let Some(value) = value {
                argv.extend([name.to_owned(), value.clone()]);
            }
        };
        push("--phase", &self.phase);
        push("--prompt-file", &self.prompt_file);
        push("--out", &self.out);
        push("--self", &self.self_slug);
        if self.all {
            argv.push("--all".to_owned());
        }
        for slug in &self.lanes {
            if let Some(flag) = registry.lane(slug).and_then(|lane| lane.flags.first()) {
                argv.push(flag.clone());
            }
        }
        argv
    }
}

/// A combination of `review` arguments clap cannot refuse ([`ReviewArgs::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsError {
    /// `--resume` with flags of an inactive lane.
    ResumeWithInactiveFlags,
    /// `--prompt-file` without `--out`.
    PromptFileWithoutOut,
}

impl std::fmt::Display for ArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ArgsError::ResumeWithInactiveFlags => {
                "--resume takes the lanes of the recorded run; drop the lane flags"
            }
            ArgsError::PromptFileWithoutOut => "--prompt-file needs --out <REVIEWS.md>",
        })
    }
}

impl std::error::Error for ArgsError {}

/// Why a run record's arguments no longer parse ([`parse`]).
#[derive(Debug)]
pub enum RecordedArgsError {
    /// Clap refused them (the kind of error it names, e.g. an unknown argument).
    Refused(&'static str),
    /// They parsed, but not as a `review` command.
    NotReview,
    /// They parsed, but not into the review's arguments.
    Unreadable(clap::Error),
}

impl std::fmt::Display for RecordedArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordedArgsError::Refused(kind) => f.write_str(kind),
            RecordedArgsError::NotReview => f.write_str("no review arguments"),
            RecordedArgsError::Unreadable(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for RecordedArgsError {}

/// Parses `review` arguments (without the command name) against `root` (the command line's
/// clap model) with the lanes of `registry`, as the command line would: the run record's
/// arguments are read back this way.
///
/// # Errors
///
/// Clap's message when they do not parse (a lane flag that no longer exists, …).
pub fn parse(
    root: Command,
    argv: &[String],
    registry: &Registry,
) -> Result<ReviewArgs, RecordedArgsError> {
    use clap::FromArgMatches;
    let lanes = lane_flags(registry);
    let command = with_lane_flags(root, &lanes);
    let full = ["gsd-lane", "review"]
        .into_iter()
        .map(str::to_owned)
        .chain(argv.iter().cloned());
    let matches = command.try_get_matches_from(full).map_err(|err| {
        RecordedArgsError::Refused(err.kind().as_str().unwrap_or("invalid arguments"))
    })?;
    let sub = matches
        .subcommand_matches("review")
        .ok_or(RecordedArgsError::NotReview)?;
    let mut review = ReviewArgs::from_arg_matches(sub).map_err(RecordedArgsError::Unreadable)?;
    named_lanes(&mut review, sub, &lanes);
    Ok(review)
}

/// One lane's flags as the review command line knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneFlags {
    /// Lane slug.
    pub slug: String,
    /// REVIEWS.md section (for the help line).
    pub section: String,
    /// Flags, canonical first.
    pub flags: Vec<String>,
    /// False for a discovered lane that is not active: its flags are accepted (hidden), so
    /// the user hears why it cannot run instead of "unexpected argument".
    pub active: bool,
}

/// Every lane's flags from the registry: active lanes, then inactive ones, then the flags of
/// retired first-party lanes nothing declares now.
pub fn lane_flags(registry: &Registry) -> Vec<LaneFlags> {
    let active = registry.lanes.iter().map(|lane| LaneFlags {
        slug: lane.slug.clone(),
        section: lane.section.clone(),
        flags: lane.flags.clone(),
        active: true,
    });
    let inactive = registry
        .entries
        .iter()
        .filter(|entry| entry.skip.is_some())
        .map(|entry| LaneFlags {
            slug: entry.slug.clone().unwrap_or_else(|| entry.id.clone()),
            section: String::new(),
            flags: entry.flags.clone(),
            active: false,
        });
    // Retired first-party lanes (registry::retired): hidden flags, answered with the reason.
    let retired = crate::registry::retired::unclaimed(registry).map(|r| LaneFlags {
        slug: r.slug.to_owned(),
        section: String::new(),
        flags: r.flags.iter().map(|f| (*f).to_owned()).collect(),
        active: false,
    });
    active.chain(inactive).chain(retired).collect()
}

/// Whether `flag` can be a clap long option: `--` then a letter or digit, then letters,
/// digits, `-` or `_`, at most 64 characters (anything else is left out of the model).
fn usable(flag: &str) -> bool {
    let Some(name) = flag.strip_prefix("--") else {
        return false;
    };
    flag.len() <= 64
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Every long option (and alias) `command` and its globals already have.
fn taken_longs(root: &Command, review: &Command) -> BTreeSet<String> {
    let mut taken: BTreeSet<String> = ["help".to_owned(), "version".to_owned()].into();
    for arg in root.get_arguments().chain(review.get_arguments()) {
        taken.extend(arg.get_long().map(str::to_owned));
        taken.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(str::to_owned),
        );
    }
    taken
}

/// Every long option `command` (one of [`LANE_FLAG_COMMANDS`]) and the global options of
/// `root` already have (the names without `--`): a lane flag among them selects nothing there.
pub fn options_of(root: &Command, command: &str) -> BTreeSet<String> {
    root.find_subcommand(command)
        .map(|sub| taken_longs(root, sub))
        .unwrap_or_default()
}

/// The arg id of a lane's flags.
fn arg_id(index: usize) -> String {
    format!("lane-flag-{index}")
}

/// The subcommands that take lane flags: `review`, and `code-review`/`dispatch-step`
/// (`app::code_review`), which select lanes the same way.
pub const LANE_FLAG_COMMANDS: &[&str] = &["review", "code-review", "dispatch-step"];

/// Adds one flag per lane to each subcommand of [`LANE_FLAG_COMMANDS`] in `root`: the canonical
/// flag plus visible aliases for active lanes, hidden for inactive ones. A flag another option
/// (or an earlier lane) already has is left out; [`collisions`] reports the options case.
pub fn with_lane_flags(root: Command, lanes: &[LaneFlags]) -> Command {
    if lanes.is_empty() {
        // Lanes are read only when `review` (or help about it) is on the command line
        // (`cli::lane_flags_for`): nothing to add, and no copy of the whole tree to make.
        return root;
    }
    let root_for_names = root.clone();
    let mut root = root;
    for name in LANE_FLAG_COMMANDS {
        if root.find_subcommand(name).is_some() {
            root = root.mut_subcommand(name, |sub| add_lane_flags(&root_for_names, sub, lanes));
        }
    }
    root
}

/// Adds the lane flags of `lanes` to `review` (one subcommand of `root_for_names`).
fn add_lane_flags(root_for_names: &Command, review: Command, lanes: &[LaneFlags]) -> Command {
    let mut taken = taken_longs(root_for_names, &review);
    // A lane flag (or option) given twice counts once, as before clap.
    let mut review = review.args_override_self(true);
    for (index, lane) in lanes.iter().enumerate() {
        let mut ordered: Vec<String> = Vec::new();
        for flag in lane.flags.iter().filter(|flag| usable(flag)) {
            let name = &flag[2..];
            if !taken.contains(name) && !ordered.iter().any(|n| n == name) {
                ordered.push(name.to_owned());
            }
        }
        let Some((long, aliases)) = ordered.split_first() else {
            continue;
        };
        taken.extend(ordered.iter().cloned());
        let mut arg = Arg::new(arg_id(index))
            .long(long.clone())
            .action(ArgAction::SetTrue)
            .help_heading("Lane flags");
        if lane.active {
            arg = arg.visible_aliases(aliases.to_vec()).help(format!(
                "Review with {} (lane {})",
                crate::textsafe::for_terminal(&lane.section),
                crate::textsafe::for_terminal(&lane.slug)
            ));
        } else {
            arg = arg.aliases(aliases.to_vec()).hide(true);
        }
        review = review.arg(arg);
    }
    review
}

/// Fills `args.lanes` and `args.inactive_flags` from the matches of the `review` subcommand.
pub fn named_lanes(args: &mut ReviewArgs, matches: &ArgMatches, lanes: &[LaneFlags]) {
    let (slugs, inactive) = named(matches, lanes);
    args.lanes = slugs;
    args.inactive_flags = inactive;
}

/// The lane flags given in the matches of a subcommand of [`LANE_FLAG_COMMANDS`]: the active
/// lanes' slugs (each once, in descriptor order) and the canonical flags of inactive ones.
pub fn named(matches: &ArgMatches, lanes: &[LaneFlags]) -> (Vec<String>, Vec<String>) {
    let mut args = ReviewArgs::default();
    for (index, lane) in lanes.iter().enumerate() {
        let given = matches
            .try_get_one::<bool>(&arg_id(index))
            .ok()
            .flatten()
            .copied()
            .unwrap_or(false);
        if !given {
            continue;
        }
        if lane.active {
            if !args.lanes.contains(&lane.slug) {
                args.lanes.push(lane.slug.clone());
            }
        } else if let Some(flag) = lane.flags.first() {
            args.inactive_flags.push(flag.clone());
        }
    }
    (args.lanes, args.inactive_flags)
}

/// Warnings about lane flags that are already options of `review` (or global ones) in `root`
/// (the model without lane flags): such a lane keeps loading, but the flag does not select it.
pub fn collisions(root: &Command, registry: &Registry) -> Vec<String> {
    collisions_in(root, registry, "review")
}

/// [`collisions`] for `command`, one of [`LANE_FLAG_COMMANDS`]: each has options of its own
/// (`code-review --raw`), so a lane flag can select its lane in one and not in another.
pub fn collisions_in(root: &Command, registry: &Registry, command: &str) -> Vec<String> {
    let Some(review) = root.find_subcommand(command) else {
        return Vec::new();
    };
    let taken = taken_longs(root, review);
    let mut warnings = Vec::new();
    for lane in &registry.lanes {
        for flag in &lane.flags {
            if flag
                .strip_prefix("--")
                .is_some_and(|name| taken.contains(name))
            {
                warnings.push(format!(
                    "lane {} declares {flag}, an option of {command}; it is ignored for selection",
                    lane.slug
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    #[test]
    fn resume_options() {
        let r = parse(&["--resume"]).expect("bare resume");
        assert_eq!((r.resuming(), r.resume_dir()), (true, None));
        let r = parse(&["--resume", "/tmp/gsd-review-x", "--jobs", "1"]).expect("dir");
        assert_eq!(r.resume_dir(), Some("/tmp/gsd-review-x"));
        let r = parse(&["--phase", "3", "--resume", "--force"]).expect("phase");
        assert!(r.resuming() && r.force);
        let r = parse(&["--retry", "gemini", "--retry=claude"]).expect("retry");
        assert!(r.resuming());
        assert_eq!(r.retry, vec!["gemini", "claude"]);
        assert!(parse(&["--resume", "--all"]).is_err());
        // Lane flags are compared with the recorded run's later (selection::same_lanes).
        assert!(parse(&["--resume", "--qwen"])
            .expect("parses")
            .check()
            .is_ok());
        assert!(parse(&["--prompt-file", "x"])
            .expect("parses")
            .check()
            .is_err());
        assert!(parse(&["--phase", "3", "--force"]).is_err());
    }

    #[test]
    fn the_recorded_selection_parses_back_to_the_same_request() {
        let registry = Registry::first_party();
        let r = parse(&["--phase", "3", "--qwen", "--agy", "--self", "claude"]).expect("parses");
        let again = super::parse(
            crate::cli::Cli::command(),
            &r.selection_argv(&registry),
            &registry,
        )
        .expect("reparses");
        assert_eq!(
            (again.phase, again.lanes, again.self_slug),
            (r.phase, r.lanes, r.self_slug)
        );
    }

    fn parse(args: &[&str]) -> Result<ReviewArgs, clap::Error> {
        let registry = Registry::first_party();
        let lanes = lane_flags(&registry);
        let command = with_lane_flags(crate::cli::Cli::command(), &lanes);
        let mut argv = vec!["gsd-lane", "review"];
        argv.extend_from_slice(args);
        let matches = command.try_get_matches_from(argv)?;
        let sub = matches
            .subcommand_matches("review")
            .expect("review matches");
        let mut review = ReviewArgs::from_arg_matches(sub)?;
        named_lanes(&mut review, sub, &lanes);
        Ok(review)
    }

    #[test]
    fn lane_flags_and_options() {
        let r = parse(&[
            "--phase",
            "3",
            "--agy",
            "--claude",
            "--antigravity",
            "--jobs=2",
        ])
        .expect("parses");
        assert_eq!(r.phase.as_deref(), Some("3"));
        assert_eq!(r.lanes, vec!["claude", "antigravity"]);
        assert_eq!(r.jobs, Some(2));
        assert_eq!(r.sandbox, None);
    }

    #[test]
    fn a_retired_lane_flag_parses_as_an_inactive_flag_to_be_answered() {
        let r = parse(&["--phase", "3", "--gemini", "--claude"]).expect("parses");
        assert_eq!(r.lanes, vec!["claude"]);
        assert_eq!(r.inactive_flags, vec!["--gemini"]);
    }

    #[test]
    fn sandbox_option_takes_a_mode() {
        let r = parse(&["--phase", "3", "--sandbox", "detect"]).expect("parses");
        assert_eq!(r.sandbox, Some(crate::sandbox::SandboxMode::Detect));
        let r = parse(&["--phase", "3", "--sandbox=off"]).expect("parses");
        assert_eq!(r.sandbox, Some(crate::sandbox::SandboxMode::Off));
        let err = parse(&["--phase", "3", "--sandbox", "none"]).expect_err("bad mode");
        assert!(err.to_string().contains("enforce, detect, off"), "{err}");
    }

    #[test]
    fn clap_rejects_what_the_hand_parser_rejected() {
        let err = parse(&["--phase", "3", "--gemni"]).expect_err("unknown");
        assert!(err.to_string().contains("--gemini"), "{err}");
        assert!(parse(&["--phase", "3", "--jobs", "0"]).is_err());
        assert!(parse(&["--all"]).is_err());
        assert!(parse(&["--phase", ""]).is_err());
        assert!(parse(&["--phase", "3", "--prompt-file", "x", "--out", "y"]).is_err());
    }

    #[test]
    fn odd_flags_never_reach_clap() {
        for flag in ["--", "-x", "--a b", "--é", "---x", "--phase"] {
            let lanes = vec![LaneFlags {
                slug: "odd".into(),
                section: "Odd".into(),
                flags: vec![flag.into()],
                active: true,
            }];
            // Building the model (clap's debug asserts included) must not panic.
            let command = with_lane_flags(crate::cli::Cli::command(), &lanes);
            command.clone().debug_assert();
            let _ = command.try_get_matches_from(["gsd-lane", "review", "--phase", "3"]);
        }
    }
}
