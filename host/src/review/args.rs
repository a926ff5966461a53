//! The review command line (review-workflow.md §2): the command's own options plus every lane
//! flag of the loaded registry, parsed by hand because lane flags are data.

use crate::registry::Registry;

/// The command's own options; a lane declaring one of these keeps loading, but the flag is
/// ignored for selection.
pub const OWN_OPTIONS: [&str; 9] = [
    "--phase",
    "--prompt-file",
    "--out",
    "--all",
    "--self",
    "--jobs",
    "--sandbox",
    "--json",
    "--help",
];

/// Usage text.
pub const USAGE: &str = "usage: gsd-lane review --phase <N> [<lane flag>...] [--all] [--self <slug>] [--jobs <n>] [--sandbox <mode>] [--json]
       gsd-lane review --prompt-file <F> --out <REVIEWS.md> [<lane flag>...] [--self <slug>] [--jobs <n>] [--sandbox <mode>] [--json]";

/// The parsed request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// `--phase`.
    pub phase: Option<String>,
    /// `--prompt-file`.
    pub prompt_file: Option<String>,
    /// `--out`.
    pub out: Option<String>,
    /// `--all`.
    pub all: bool,
    /// `--self`.
    pub self_slug: Option<String>,
    /// `--jobs` (≥ 1).
    pub jobs: Option<usize>,
    /// `--sandbox <enforce|detect|off>`.
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// `--json`.
    pub json: bool,
    /// `--help`.
    pub help: bool,
    /// Lanes named by flags, each once, in the order first named.
    pub lanes: Vec<String>,
    /// Warnings about lane flags that collide with the command's options.
    pub warnings: Vec<String>,
}

/// Levenshtein distance (small inputs only).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest known flag, if close enough.
pub fn suggest<'a>(unknown: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (distance(unknown, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) || k.starts_with(unknown))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Parses `args` against the registry's lane flags.
///
/// # Errors
///
/// A usage message.
pub fn parse(args: &[String], registry: &Registry) -> Result<Request, String> {
    let mut request = Request::default();
    for lane in &registry.lanes {
        for flag in &lane.flags {
            if OWN_OPTIONS.contains(&flag.as_str()) {
                request.warnings.push(format!(
                    "lane {} declares {flag}, an option of review; it is ignored for selection",
                    lane.slug
                ));
            }
        }
    }
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if arg.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |option: &str| -> Result<String, String> {
            match inline.clone().or_else(|| iter.next().cloned()) {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(format!("{option} needs a value")),
            }
        };
        match name {
            "--phase" => request.phase = Some(value("--phase")?),
            "--prompt-file" => request.prompt_file = Some(value("--prompt-file")?),
            "--out" => request.out = Some(value("--out")?),
            "--self" => request.self_slug = Some(value("--self")?),
            "--jobs" => {
                let text = value("--jobs")?;
                match text.parse::<usize>() {
                    Ok(n) if n >= 1 => request.jobs = Some(n),
                    _ => return Err(format!("--jobs takes a positive integer, got '{text}'")),
                }
            }
            "--sandbox" => {
                let text = value("--sandbox")?;
                request.sandbox = Some(
                    crate::sandbox::SandboxMode::parse_flag(&text)
                        .map_err(|why| format!("--sandbox: {why}, got '{text}'"))?,
                );
            }
            "--all" | "--json" | "--help" | "-h" if inline.is_some() => {
                return Err(format!("{name} takes no value"))
            }
            "--all" => request.all = true,
            "--json" => request.json = true,
            "--help" | "-h" => request.help = true,
            flag if flag.starts_with("--") => {
                let lane = (inline.is_none())
                    .then(|| registry.lane_by_flag(flag))
                    .flatten();
                match lane {
                    Some(lane) => {
                        if !request.lanes.contains(&lane.slug) {
                            request.lanes.push(lane.slug.clone());
                        }
                    }
                    None => {
                        let known = OWN_OPTIONS.iter().copied().chain(
                            registry
                                .lanes
                                .iter()
                                .flat_map(|l| l.flags.iter().map(String::as_str)),
                        );
                        return Err(match suggest(flag, known) {
                            Some(hint) => {
                                format!("unknown option '{arg}' (did you mean '{hint}'?)")
                            }
                            None => format!("unknown option '{arg}'; lane flags: `gsd-lane flags`"),
                        });
                    }
                }
            }
            other => return Err(format!("unexpected argument '{other}'")),
        }
    }
    if request.help {
        return Ok(request);
    }
    match (&request.phase, &request.prompt_file, &request.out) {
        (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(request),
        (Some(_), Some(_), _) => Err("--phase and --prompt-file cannot be combined".to_owned()),
        (Some(_), None, Some(_)) => Err("--out is only used with --prompt-file".to_owned()),
        (None, Some(_), None) => Err("--prompt-file needs --out <REVIEWS.md>".to_owned()),
        (None, None, _) => {
            Err("--phase <N> (or --prompt-file <F> --out <REVIEWS.md>) is required".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Request, String> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        parse(&args, &Registry::first_party())
    }

    #[test]
    fn lane_flags_and_options() {
        let r = parse_args(&[
            "--phase",
            "3",
            "--agy",
            "--gemini",
            "--antigravity",
            "--jobs=2",
        ])
        .expect("parses");
        assert_eq!(r.phase.as_deref(), Some("3"));
        assert_eq!(r.lanes, vec!["antigravity", "gemini"]);
        assert_eq!(r.jobs, Some(2));
        assert_eq!(r.sandbox, None);
    }

    #[test]
    fn sandbox_option_takes_a_mode() {
        let r = parse_args(&["--phase", "3", "--sandbox", "detect"]).expect("parses");
        assert_eq!(r.sandbox, Some(crate::sandbox::SandboxMode::Detect));
        let r = parse_args(&["--phase", "3", "--sandbox=off"]).expect("parses");
        assert_eq!(r.sandbox, Some(crate::sandbox::SandboxMode::Off));
        let err = parse_args(&["--phase", "3", "--sandbox", "none"]).expect_err("bad mode");
        assert!(err.contains("enforce, detect, off"), "{err}");
    }

    #[test]
    fn unknown_flag_suggests() {
        let err = parse_args(&["--phase", "3", "--gemni"]).expect_err("unknown");
        assert_eq!(err, "unknown option '--gemni' (did you mean '--gemini'?)");
        assert!(parse_args(&["--phase", "3", "--jobs", "0"]).is_err());
        assert!(parse_args(&["--all"]).is_err());
        assert!(parse_args(&["--prompt-file", "x"]).is_err());
    }
}
