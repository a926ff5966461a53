//! Finding a phase in `.planning/` (planning-layout.md): the phase argument, directory tokens,
//! the phase directory (current or archived), its input files and the ROADMAP.md section.
//!
//! Pure except for directory listings and file reads; every error is a message for
//! `error: ` (exit status 1, planning-layout.md §7).

use std::fmt;
use std::path::{Path, PathBuf};

use super::notice::{Level, Notice};

/// Why a phase cannot be located (planning-layout.md §7, P1-P7); its text is the message for
/// `error: `.
#[derive(Debug)]
pub enum PhaseError {
    /// P1: the argument is not a phase id.
    InvalidArg {
        /// The argument as given.
        arg: String,
    },
    /// P2: `GSD_PROJECT` or `GSD_WORKSTREAM` would leave `.planning/`.
    UnsafeVariable {
        /// The variable's name.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// P3: the roadmap lists the phase, but it has no directory.
    NotPlanned {
        /// The argument as given.
        arg: String,
        /// The phase name the roadmap gives.
        name: String,
        /// The planning directory, as shown.
        planning: String,
        /// An archived copy ignored because the roadmap lists the phase, as shown.
        archived: Option<String>,
    },
    /// P4: no directory and no roadmap section.
    NotFound {
        /// The argument as given.
        arg: String,
        /// The planning directory, as shown.
        planning: String,
    },
    /// P5: more than one directory matches.
    Ambiguous {
        /// The argument as given.
        arg: String,
        /// The directory holding them, as shown.
        base: String,
        /// The matching directory names.
        names: Vec<String>,
    },
    /// P6: the phase directory holds no plan.
    NoPlans {
        /// The argument as given.
        arg: String,
        /// The phase directory, as shown.
        dir: String,
    },
    /// P7: a directory or file that exists cannot be read.
    Unreadable {
        /// The path, as shown.
        path: String,
        /// What reading it said.
        source: std::io::Error,
    },
}

impl fmt::Display for PhaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhaseError::InvalidArg { arg } => write!(
                f,
                "invalid phase '{arg}': expected a phase id such as 3, 03, 2.1, 12A, 1-02 or CK-3"
            ),
            PhaseError::UnsafeVariable { var, value } => {
                write!(f, "{var} must not contain '/', '\\' or '..': {value}")
            }
            PhaseError::NotPlanned {
                arg,
                name,
                planning,
                archived,
            } => {
                write!(
                    f,
                    "phase {arg} ({name}) has no directory under {planning}/phases/; plan it first"
                )?;
                match archived {
                    Some(dir) => write!(
                        f,
                        " (archived copy {dir} ignored: ROADMAP.md lists the phase)"
                    ),
                    None => Ok(()),
                }
            }
            PhaseError::NotFound { arg, planning } => write!(
                f,
                "phase {arg} not found in {planning}/phases/, {planning}/milestones/v*-phases/ or ROADMAP.md"
            ),
            PhaseError::Ambiguous { arg, base, names } => write!(
                f,
                "phase {arg} is ambiguous: {} directories match in {base}/: {}; give each project a distinct project_code",
                names.len(),
                names.join(", ")
            ),
            PhaseError::NoPlans { arg, dir } => {
                write!(f, "phase {arg}: no *-PLAN.md files in {dir}")
            }
            PhaseError::Unreadable { path, source } => write!(f, "cannot read {path}: {source}"),
        }
    }
}

impl std::error::Error for PhaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PhaseError::Unreadable { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// [`PhaseError::Unreadable`] for `path`, shown relative to `cwd`.
fn unreadable(path: &Path, cwd: &Path, source: std::io::Error) -> PhaseError {
    PhaseError::Unreadable {
        path: rel(path, cwd),
        source,
    }
}

/// What the lookup needs besides the phase argument.
#[derive(Debug, Clone, Default)]
pub struct PhaseEnv {
    /// The directory holding `.planning/`.
    pub root: PathBuf,
    /// The working directory (messages show paths relative to it).
    pub cwd: PathBuf,
    /// `GSD_PROJECT` when set and non-empty.
    pub gsd_project: Option<String>,
    /// `GSD_WORKSTREAM` when set and non-empty.
    pub workstream: Option<String>,
    /// Config `project_code` (raw string, if a string).
    pub project_code: Option<String>,
}

/// A located phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// The argument exactly as given (A).
    pub arg: String,
    /// The planning directory P.
    pub planning: PathBuf,
    /// Absolute phase directory.
    pub dir: PathBuf,
    /// Padded phase (`03`, `02.1`, `12a`).
    pub padded: String,
    /// Phase name for the prompt heading.
    pub name: String,
    /// The ROADMAP.md section, if any.
    pub roadmap: Option<String>,
    /// `*-PLAN.md` files, byte order.
    pub plans: Vec<PathBuf>,
    /// `*-CONTEXT.md` files, byte order.
    pub context: Vec<PathBuf>,
    /// `*-RESEARCH.md` files, byte order.
    pub research: Vec<PathBuf>,
    /// `<dir>/<padded>-REVIEWS.md`.
    pub output: PathBuf,
    /// What the lookup says about the phase (an archived milestone, a missing ROADMAP.md
    /// section, another REVIEWS.md beside the output).
    pub notices: Vec<Notice>,
}

/// Validates A against planning-layout.md §2.1.
pub fn is_valid_arg(arg: &str) -> bool {
    let rest = match split_code(arg) {
        Some((_, rest)) => rest,
        None if arg.starts_with(|c: char| c.is_ascii_uppercase()) => return false,
        None => arg,
    };
    let b = rest.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    while b.get(i) == Some(&b'-') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if b.get(i).is_some_and(u8::is_ascii_alphabetic) {
        i += 1;
    }
    while b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Splits a leading upper-case code `[A-Z][A-Z0-9_]*-` followed by a digit: `(code, rest)`.
fn split_code(s: &str) -> Option<(&str, &str)> {
    let first = s.chars().next()?;
    if !first.is_ascii_uppercase() {
        return None;
    }
    let dash = s.find('-')?;
    let code = s.get(..dash)?;
    let rest = s.get(dash + 1..)?;
    let code_ok = code
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (code_ok && rest.starts_with(|c: char| c.is_ascii_digit())).then_some((code, rest))
}

fn pad2(num: &str) -> String {
    if num.len() < 2 {
        format!("{num:0>2}")
    } else {
        num.to_owned()
    }
}

/// Length of the leading ASCII digit run of `s`.
fn digit_run(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Length of `[letter](.NUM)*` at the start of `s`.
fn letter_decimals(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = usize::from(b.first().is_some_and(u8::is_ascii_alphabetic));
    while b.get(i) == Some(&b'.') {
        let n = digit_run(s.get(i + 1..).unwrap_or(""));
        if n == 0 {
            break;
        }
        i += 1 + n;
    }
    i
}

/// The padding rule `norm(s)` (§2.2).
pub fn norm(s: &str) -> String {
    let rest = split_code(s).map_or(s, |(_, rest)| rest);
    // Step 2: NUM(-NUM)+[letter](.NUM)* as the whole rest.
    let mut nums = Vec::new();
    let mut i = 0;
    loop {
        let n = digit_run(rest.get(i..).unwrap_or(""));
        if n == 0 {
            break;
        }
        nums.push(rest.get(i..i + n).unwrap_or(""));
        i += n;
        if rest.get(i..i + 1) == Some("-")
            && digit_run(rest.get(i + 1..).unwrap_or("")) > 0
            && nums.len() < usize::MAX
        {
            i += 1;
        } else {
            break;
        }
    }
    if nums.len() >= 2 {
        let tail = rest.get(i..).unwrap_or("");
        if letter_decimals(tail) == tail.len() {
            let padded: Vec<String> = nums.iter().map(|n| pad2(n)).collect();
            return format!("{}{tail}", padded.join("-"));
        }
    }
    // Step 3: NUM[letter](.NUM)* at the start; the rest is discarded.
    let n = digit_run(rest);
    if n > 0 {
        let after = rest.get(n..).unwrap_or("");
        let keep = letter_decimals(after);
        return format!(
            "{}{}",
            pad2(rest.get(..n).unwrap_or("")),
            after.get(..keep).unwrap_or("")
        );
    }
    s.to_owned()
}

/// The phase token of a directory name and its name part (§3).
pub fn tok(name: &str) -> (String, String) {
    let (prefix, rest) = match name.split_once('-') {
        Some((c, r))
            if c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && r.starts_with(|ch: char| ch.is_ascii_digit()) =>
        {
            (format!("{c}-"), r)
        }
        _ => (String::new(), name),
    };
    let segments: Vec<&str> = rest.split('-').collect();
    let first = segments.first().copied().unwrap_or("");
    let letters = first.bytes().take_while(u8::is_ascii_alphabetic).count();
    let digit_led = first.starts_with(|c: char| c.is_ascii_digit());
    let letter_led = (1..=3).contains(&letters)
        && first
            .as_bytes()
            .get(letters)
            .is_some_and(u8::is_ascii_digit);
    if !digit_led && !letter_led {
        return (name.to_owned(), String::new());
    }
    let mut taken = vec![first];
    for segment in segments.iter().skip(1) {
        let ok = if letter_led {
            segment.starts_with(|c: char| c.is_ascii_digit())
        } else {
            digit_run(segment) == 2
        };
        if !ok {
            break;
        }
        taken.push(segment);
    }
    let token = format!("{prefix}{}", taken.join("-"));
    let part = name
        .get(token.len()..)
        .unwrap_or("")
        .strip_prefix('-')
        .unwrap_or_else(|| name.get(token.len()..).unwrap_or(""))
        .to_owned();
    (token, part)
}

/// Whether directory `name` matches the normalized argument `x` (§3, last paragraph).
fn dir_matches(name: &str, x: &str) -> bool {
    let upper_x = x.to_ascii_uppercase();
    if tok(name).0.to_ascii_uppercase() == upper_x {
        return true;
    }
    match name.split_once('-') {
        Some((c, rest))
            if c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && rest.starts_with(|ch: char| ch.is_ascii_digit()) =>
        {
            tok(rest).0.to_ascii_uppercase() == upper_x
        }
        _ => false,
    }
}

/// Shows `path` relative to `cwd` when it lies below it.
fn rel(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// Directory entries that are real directories (symlinks never match); `None` when absent.
fn list_dirs(dir: &Path, cwd: &Path) -> Result<Option<Vec<String>>, PhaseError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(dir, cwd, err)),
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if let (true, Ok(name)) = (is_dir, entry.file_name().into_string()) {
            names.push(name);
        }
    }
    names.sort();
    Ok(Some(names))
}

/// What the directory search found.
enum Found {
    None,
    One(PathBuf, String),
    Many(PathBuf, Vec<String>),
}

fn search_base(base: &Path, x: &str, cwd: &Path) -> Result<Found, PhaseError> {
    let Some(names) = list_dirs(base, cwd)? else {
        return Ok(Found::None);
    };
    let hits: Vec<String> = names.into_iter().filter(|n| dir_matches(n, x)).collect();
    Ok(match hits.len() {
        0 => Found::None,
        1 => Found::One(
            base.to_path_buf(),
            hits.into_iter().next().unwrap_or_default(),
        ),
        _ => Found::Many(base.to_path_buf(), hits),
    })
}

fn is_archive_name(name: &str) -> bool {
    name.strip_prefix('v')
        .and_then(|r| r.strip_suffix("-phases"))
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Computes P (§1).
///
/// # Errors
///
/// P2 when a variable holds `/`, `\` or `..`.
pub fn planning_dir(env: &PhaseEnv) -> Result<PathBuf, PhaseError> {
    let mut p = env.root.join(".planning");
    for (var, value) in [
        ("GSD_PROJECT", &env.gsd_project),
        ("GSD_WORKSTREAM", &env.workstream),
    ] {
        if let Some(value) = value {
            if value.contains('/') || value.contains('\\') || value.contains("..") {
                return Err(PhaseError::UnsafeVariable {
                    var,
                    value: value.clone(),
                });
            }
        }
    }
    if let Some(project) = &env.gsd_project {
        p.push(project);
    }
    if let Some(ws) = &env.workstream {
        p.push("workstreams");
        p.push(ws);
    }
    Ok(p)
}

/// Locates phase `arg`.
///
/// # Errors
///
/// P1–P7 messages (planning-layout.md §7), without the `error: ` prefix.
pub fn locate(arg: &str, env: &PhaseEnv) -> Result<Phase, PhaseError> {
    if !is_valid_arg(arg) {
        return Err(PhaseError::InvalidArg {
            arg: arg.to_owned(),
        });
    }
    let p = planning_dir(env)?;
    let cwd = &env.cwd;
    let foreign = is_foreign(arg, env);
    let (mut found, archived) = search(&p, &norm(arg), cwd)?;
    if foreign {
        let upper_a = arg.to_ascii_uppercase();
        found = match found {
            Found::One(base, name) if tok(&name).0.to_ascii_uppercase() == upper_a => {
                Found::One(base, name)
            }
            _ => Found::None,
        };
    }
    let roadmap = read_optional(&p.join("ROADMAP.md"), cwd)?
        .and_then(|text| roadmap_section(&text, arg, foreign));
    let mut archive_note = None;
    if archived.is_some() && roadmap.is_some() {
        if let Found::One(base, name) = &found {
            archive_note = Some(rel(&base.join(name), cwd));
        }
        found = Found::None;
    }
    let (base, name) = match found {
        Found::One(base, name) => (base, name),
        Found::Many(base, names) => {
            return Err(PhaseError::Ambiguous {
                arg: arg.to_owned(),
                base: rel(&base, cwd),
                names,
            })
        }
        Found::None => return Err(not_found(arg, roadmap.as_ref(), archive_note, &p, cwd)),
    };
    read_phase(arg, p, (&base, &name), roadmap, archived.as_deref(), cwd)
}

/// Whether `arg` carries a project code other than this project's (or this project has none).
fn is_foreign(arg: &str, env: &PhaseEnv) -> bool {
    split_code(arg).is_some_and(|(code, _)| {
        env.project_code
            .as_deref()
            .map(str::trim)
            .is_none_or(|pc| pc.is_empty() || !pc.eq_ignore_ascii_case(code))
    })
}

/// The phase directories matching `x`: under `phases/`, else in the newest archive holding
/// one (with the archive's milestone version).
fn search(p: &Path, x: &str, cwd: &Path) -> Result<(Found, Option<String>), PhaseError> {
    let found = search_base(&p.join("phases"), x, cwd)?;
    if !matches!(found, Found::None) {
        return Ok((found, None));
    }
    let Some(names) = list_dirs(&p.join("milestones"), cwd)? else {
        return Ok((found, None));
    };
    let mut archives: Vec<String> = names.into_iter().filter(|n| is_archive_name(n)).collect();
    archives.sort_by(|a, b| b.cmp(a));
    for archive in archives {
        let hit = search_base(&p.join("milestones").join(&archive), x, cwd)?;
        if !matches!(hit, Found::None) {
            return Ok((hit, archive.strip_suffix("-phases").map(str::to_owned)));
        }
    }
    Ok((found, None))
}

/// The message of a phase without a directory (P3, P4).
fn not_found(
    arg: &str,
    roadmap: Option<&Section>,
    archive_note: Option<String>,
    p: &Path,
    cwd: &Path,
) -> PhaseError {
    match roadmap {
        Some(section) => PhaseError::NotPlanned {
            arg: arg.to_owned(),
            name: section.name.clone(),
            planning: rel(p, cwd),
            archived: archive_note,
        },
        None => PhaseError::NotFound {
            arg: arg.to_owned(),
            planning: rel(p, cwd),
        },
    }
}

/// Reads the phase directory `base/name`: its plans, context and research files, the
/// REVIEWS.md it gets and the notices about it.
fn read_phase(
    arg: &str,
    p: PathBuf,
    (base, name): (&Path, &str),
    roadmap: Option<Section>,
    archived: Option<&str>,
    cwd: &Path,
) -> Result<Phase, PhaseError> {
    let dir = base.join(name);
    let (token, part) = tok(name);
    let padded = norm(&token);
    let phase_name = match &roadmap {
        Some(section) => section.name.clone(),
        None if !part.is_empty() => part,
        None => name.to_owned(),
    };
    let files = list_files(&dir, cwd)?;
    let pick = |suffix: &str| -> Vec<PathBuf> {
        files
            .iter()
            .filter(|f| f.ends_with(suffix) && f.len() > suffix.len())
            .map(|f| dir.join(f))
            .collect()
    };
    let plans = pick("-PLAN.md");
    if plans.is_empty() {
        return Err(PhaseError::NoPlans {
            arg: arg.to_owned(),
            dir: rel(&dir, cwd),
        });
    }
    let output_name = format!("{padded}-REVIEWS.md");
    let output = dir.join(&output_name);
    let mut notices = Vec::new();
    if let Some(version) = archived {
        notices.push(Notice::new(
            Level::Info,
            format!(
                "phase {arg} resolved to archived milestone {version}: {}",
                rel(&dir, cwd)
            ),
        ));
    }
    if roadmap.is_none() {
        notices.push(Notice::new(
            Level::Warning,
            format!("no ROADMAP.md section for phase {arg}"),
        ));
    }
    for other in files
        .iter()
        .filter(|f| (*f == "REVIEWS.md" || f.ends_with("-REVIEWS.md")) && **f != output_name)
    {
        notices.push(Notice::new(
            Level::Warning,
            format!(
                "{} also contains {other}; GSD may read it instead of {output_name}",
                rel(&dir, cwd)
            ),
        ));
    }
    Ok(Phase {
        arg: arg.to_owned(),
        planning: p,
        padded,
        name: phase_name,
        roadmap: roadmap.map(|s| s.text),
        context: pick("-CONTEXT.md"),
        research: pick("-RESEARCH.md"),
        plans,
        output,
        dir,
        notices,
    })
}

/// Regular files (symlinks followed) of `dir`, no dot-files, byte order.
fn list_files(dir: &Path, cwd: &Path) -> Result<Vec<String>, PhaseError> {
    let entries = std::fs::read_dir(dir).map_err(|err| unreadable(dir, cwd, err))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// Reads a file that may be absent.
///
/// # Errors
///
/// P7 when it exists but cannot be read.
pub fn read_optional(path: &Path, cwd: &Path) -> Result<Option<String>, PhaseError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(unreadable(path, cwd, err)),
    }
}

/// A ROADMAP.md section and the phase name it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section text, trimmed.
    pub text: String,
    /// The phase name.
    pub name: String,
}

/// The number part of A without a code: digit groups without leading zeros, and the literal
/// letter-and-decimals suffix.
struct NumPattern {
    groups: Vec<String>,
    suffix: String,
}

impl NumPattern {
    fn of(b: &str) -> NumPattern {
        let mut groups = Vec::new();
        let mut i = 0;
        loop {
            let n = digit_run(b.get(i..).unwrap_or(""));
            let digits = b.get(i..i + n).unwrap_or("");
            let stripped = digits.trim_start_matches('0');
            groups.push(if stripped.is_empty() {
                "0".to_owned()
            } else {
                stripped.to_owned()
            });
            i += n;
            if b.get(i..i + 1) == Some("-") && digit_run(b.get(i + 1..).unwrap_or("")) > 0 {
                i += 1;
            } else {
                break;
            }
        }
        NumPattern {
            groups,
            suffix: b.get(i..).unwrap_or("").to_owned(),
        }
    }

    /// Matches at the start of `s`; returns the matched length.
    fn match_at(&self, s: &str) -> Option<usize> {
        let mut i = 0;
        for (k, group) in self.groups.iter().enumerate() {
            if k > 0 {
                if s.get(i..i + 1) != Some("-") {
                    return None;
                }
                i += 1;
            }
            let n = digit_run(s.get(i..)?);
            let digits = s.get(i..i + n)?;
            let stripped = digits.trim_start_matches('0');
            let value = if stripped.is_empty() && n > 0 {
                "0"
            } else {
                stripped
            };
            if n == 0 || value != group {
                return None;
            }
            i += n;
        }
        let rest = s.get(i..)?;
        let suffix_len = self.suffix.len();
        if rest.get(..suffix_len)?.eq_ignore_ascii_case(&self.suffix) {
            Some(i + suffix_len)
        } else {
            None
        }
    }
}

/// One of the three number patterns of §6.1.
enum Pattern<'a> {
    Literal(&'a str),
    Num(&'a NumPattern),
    CodeNum(&'a NumPattern),
}

impl Pattern<'_> {
    fn match_at(&self, s: &str) -> Option<usize> {
        match self {
            Pattern::Literal(a) => s
                .get(..a.len())
                .filter(|head| head.eq_ignore_ascii_case(a))
                .map(|_| a.len()),
            Pattern::Num(num) => num.match_at(s),
            Pattern::CodeNum(num) => num.match_at(s).or_else(|| {
                let first = s.chars().next()?;
                if !first.is_ascii_alphabetic() {
                    return None;
                }
                let code_len = s
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                if s.get(code_len..code_len + 1) != Some("-") {
                    return None;
                }
                num.match_at(s.get(code_len + 1..)?)
                    .map(|n| code_len + 1 + n)
            }),
        }
    }
}

fn skip_ws(s: &str) -> &str {
    s.trim_start_matches([' ', '\t'])
}

/// After the number: optional whitespace and `(…)` tag (≤200 chars, one line).
fn skip_tag(s: &str) -> &str {
    let t = skip_ws(s);
    if let Some(inner) = t.strip_prefix('(') {
        if let Some(close) = inner.find(')') {
            let tag = inner.get(..close).unwrap_or("");
            if tag.chars().count() <= 200 && !tag.contains('\n') {
                return inner.get(close + 1..).unwrap_or("");
            }
        }
    }
    s
}

/// `Phase<ws><number>` at the start of `s` (case-insensitive); returns what follows.
fn phase_number<'s>(s: &'s str, pattern: &Pattern<'_>) -> Option<&'s str> {
    let head = s.get(..5)?;
    if !head.eq_ignore_ascii_case("phase") {
        return None;
    }
    let after = s.get(5..)?;
    let rest = skip_ws(after);
    if rest.len() == after.len() {
        return None;
    }
    let n = pattern.match_at(rest)?;
    rest.get(n..)
}

/// Matches a heading text as a phase entry; returns the name.
fn heading_entry(text: &str, pattern: &Pattern<'_>) -> Option<String> {
    let mut t = text;
    if let Some(inner) = t.strip_prefix('[') {
        if let Some(close) = inner.find(']') {
            if (1..=200).contains(&inner.get(..close).unwrap_or("").chars().count()) {
                t = skip_ws(inner.get(close + 1..).unwrap_or(""));
            }
        }
    }
    let rest = phase_number(t, pattern)?;
    let rest = skip_tag(rest);
    let rest = skip_ws(rest).strip_prefix(':')?;
    let name = rest.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// Matches a bullet line; returns (section, name).
fn bullet_entry(line: &str, pattern: &Pattern<'_>) -> Option<(String, String)> {
    let t = skip_ws(line);
    let t = t.strip_prefix('-').or_else(|| t.strip_prefix('*'))?;
    let after = skip_ws(t);
    if after.len() == t.len() {
        return None;
    }
    let mut t = after;
    for box_ in ["[ ]", "[x]", "[X]"] {
        if let Some(rest) = t.strip_prefix(box_) {
            t = skip_ws(rest);
            break;
        }
    }
    let t = t.strip_prefix("**")?;
    let rest = phase_number(t, pattern)?;
    let rest = skip_ws(skip_tag(rest));
    let rest = ["—", "–", ":", "-"]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))?;
    let rest = skip_ws(rest);
    let close = rest.find("**")?;
    let name = rest.get(..close)?.trim();
    if name.is_empty() {
        return None;
    }
    let consumed = line.len() - rest.len() + close + 2;
    Some((line.get(..consumed)?.trim().to_owned(), name.to_owned()))
}

/// Removes every `<details>…</details>` block (opening tag exactly `<details>`, any case).
fn strip_details(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut i = 0;
    while let Some(open) = lower.get(i..).and_then(|s| s.find("<details>")) {
        let start = i + open;
        out.push_str(text.get(i..start).unwrap_or(""));
        match lower.get(start..).and_then(|s| s.find("</details>")) {
            Some(close) => i = start + close + "</details>".len(),
            None => {
                i = text.len();
            }
        }
    }
    out.push_str(text.get(i..).unwrap_or(""));
    out
}

/// An ATX heading outside fenced code: byte offset of its line, level, text.
struct Heading {
    offset: usize,
    level: usize,
    text: String,
}

fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start_matches(' ');
        let fence_char = body.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| body.chars().take_while(|x| *x == c).count());
        if indent <= 3 && run >= 3 {
            match fence {
                None => fence = fence_char.map(|c| (c, run)),
                Some((c, n)) => {
                    if fence_char == Some(c)
                        && run >= n
                        && body.get(run..).unwrap_or("").trim().is_empty()
                    {
                        fence = None;
                    }
                }
            }
        } else if fence.is_none() && indent <= 3 {
            let level = body.chars().take_while(|c| *c == '#').count();
            let after = body.get(level..).unwrap_or("");
            if (1..=6).contains(&level) && (after.is_empty() || after.starts_with([' ', '\t'])) {
                let mut t = after.trim_end_matches([' ', '\t']);
                let closing = t.trim_end_matches('#');
                if closing.len() < t.len() && (closing.is_empty() || closing.ends_with([' ', '\t']))
                {
                    t = closing;
                }
                out.push(Heading {
                    offset,
                    level,
                    text: t.trim().to_owned(),
                });
            }
        }
        offset += raw.len();
    }
    out
}

/// The ROADMAP.md section of phase `a` (§6); `foreign` applies the §6.4 guard.
pub fn roadmap_section(file: &str, a: &str, foreign: bool) -> Option<Section> {
    let (code, b) = match split_code(a) {
        Some((_, rest)) => (true, rest),
        None => (false, a),
    };
    let leading = b.get(..digit_run(b)).unwrap_or("").trim_start_matches('0');
    if leading.is_empty() || leading == "999" {
        return None;
    }
    let f = strip_details(file);
    let num = NumPattern::of(b);
    let mut patterns = Vec::new();
    if code {
        patterns.push(Pattern::Literal(a));
    }
    patterns.push(Pattern::Num(&num));
    patterns.push(Pattern::CodeNum(&num));
    let heads = headings(&f);
    let found = patterns
        .iter()
        .find_map(|pattern| {
            heads.iter().enumerate().find_map(|(k, h)| {
                heading_entry(&h.text, pattern).map(|name| {
                    let end = heads
                        .iter()
                        .skip(k + 1)
                        .find(|next| next.level <= h.level)
                        .map_or(f.len(), |next| next.offset);
                    Section {
                        text: f.get(h.offset..end).unwrap_or("").trim().to_owned(),
                        name,
                    }
                })
            })
        })
        .or_else(|| {
            patterns.iter().find_map(|pattern| {
                f.lines().find_map(|line| {
                    bullet_entry(line, pattern).map(|(text, name)| Section { text, name })
                })
            })
        })?;
    if foreign && !guard_ok(&found.text, a) {
        return None;
    }
    Some(found)
}

/// §6.4 guard: `##`–`####`, optional whitespace, `Phase`, whitespace, A, non-word or end.
fn guard_ok(section: &str, a: &str) -> bool {
    let level = section.chars().take_while(|c| *c == '#').count();
    if !(2..=4).contains(&level) {
        return false;
    }
    let t = skip_ws(section.get(level..).unwrap_or(""));
    let Some(rest) = phase_number(t, &Pattern::Literal(a)) else {
        return false;
    };
    !rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        for ok in ["3", "03", "2.1", "2.1.1", "12A", "1-02", "CK-3", "12a"] {
            assert!(is_valid_arg(ok), "{ok}");
        }
        for bad in ["", "Phase 3", "3 ", "v1", "ck-3", "[GSD.02] 05"] {
            assert!(!is_valid_arg(bad), "{bad}");
        }
    }

    #[test]
    fn padding() {
        for (a, x) in [
            ("3", "03"),
            ("03", "03"),
            ("007", "007"),
            ("100", "100"),
            ("2.1", "02.1"),
            ("2.01", "02.01"),
            ("12a", "12a"),
            ("3A.1", "03A.1"),
            ("1-2", "01-02"),
            ("CK-3", "03"),
            ("CK-1-2", "01-02"),
        ] {
            assert_eq!(norm(a), x, "{a}");
        }
    }

    #[test]
    fn tokens() {
        for (dir, t, part) in [
            ("03-billing", "03", "billing"),
            ("02.1-auth-hotfix", "02.1", "auth-hotfix"),
            ("12A-search", "12A", "search"),
            ("CK-03-billing", "CK-03", "billing"),
            ("01-02-login", "01-02", "login"),
            ("05-10x-speedup", "05-10x", "speedup"),
            ("05-2026-speedup", "05", "2026-speedup"),
            ("03", "03", ""),
        ] {
            assert_eq!(tok(dir), (t.to_owned(), part.to_owned()), "{dir}");
        }
    }

    const ROADMAP: &str = "# Roadmap\n\n## v1.0 Launch\n\n### Phase 1: Foundation\nx\n\n### Phase 2: Auth\n\n### Phase 2.1: Auth hotfix (INSERTED)\n\n### Phase 3: Billing\nbody\n#### Notes\nn\n```\n### Phase 9: fenced\n```\n### Phase 4: Reports\n\n- [ ] **Phase 36 — Authentication** (2 plans)\n<details>\n### Phase 7: Hidden\n</details>\n";

    #[test]
    fn sections() {
        let s = roadmap_section(ROADMAP, "3", false).expect("phase 3");
        assert_eq!(s.name, "Billing");
        assert!(s.text.starts_with("### Phase 3: Billing"));
        assert!(s.text.contains("#### Notes"));
        assert!(s.text.contains("### Phase 9: fenced"));
        assert!(!s.text.contains("Phase 4"));
        assert_eq!(
            roadmap_section(ROADMAP, "2.1", false).map(|s| s.name),
            Some("Auth hotfix (INSERTED)".to_owned())
        );
        assert_eq!(
            roadmap_section(ROADMAP, "03", false).map(|s| s.name),
            Some("Billing".to_owned())
        );
        let bullet = roadmap_section(ROADMAP, "36", false).expect("bullet");
        assert_eq!(bullet.text, "- [ ] **Phase 36 — Authentication**");
        assert_eq!(bullet.name, "Authentication");
        assert_eq!(roadmap_section(ROADMAP, "7", false), None);
        assert_eq!(roadmap_section(ROADMAP, "0", false), None);
        assert_eq!(roadmap_section(ROADMAP, "30", false), None);
        assert_eq!(roadmap_section(ROADMAP, "CK-01", true), None);
    }

    fn fixture(dirs: &[&str], files: &[&str], code: Option<&str>) -> (tempfile::TempDir, PhaseEnv) {
        let root = tempfile::tempdir().expect("tempdir");
        let p = root.path().join(".planning");
        for dir in dirs {
            std::fs::create_dir_all(p.join(dir)).expect("dir");
        }
        for file in files {
            std::fs::write(p.join(file), "x\n").expect("file");
        }
        let roadmap = "## v1.0 Launch\n\n### Phase 1: Foundation\n\n### Phase 3: Billing\n\n### Phase 4: Reports\n\n### Phase 5: Speed\n";
        std::fs::write(p.join("ROADMAP.md"), roadmap).expect("roadmap");
        let env = PhaseEnv {
            root: root.path().to_path_buf(),
            cwd: root.path().to_path_buf(),
            project_code: code.map(str::to_owned),
            ..PhaseEnv::default()
        };
        (root, env)
    }

    #[test]
    fn locate_examples() {
        let (_root, env) = fixture(
            &["phases/03-billing"],
            &[
                "phases/03-billing/03-10-PLAN.md",
                "phases/03-billing/03-01-PLAN.md",
                "phases/03-billing/03-01-SUMMARY.md",
                "phases/03-billing/03-CONTEXT.md",
                "phases/03-billing/REVIEWS.md",
            ],
            None,
        );
        let found = locate("3", &env).expect("phase 3");
        assert_eq!(found.padded, "03");
        assert_eq!(found.name, "Billing");
        let names: Vec<String> = found
            .plans
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["03-01-PLAN.md", "03-10-PLAN.md"]);
        assert_eq!(found.context.len(), 1);
        assert!(found
            .output
            .ends_with(".planning/phases/03-billing/03-REVIEWS.md"));
        assert_eq!(found.notices, [Notice::new(Level::Warning, ".planning/phases/03-billing also contains REVIEWS.md; GSD may read it instead of 03-REVIEWS.md")]);
        assert_eq!(
            locate("Phase 3", &env).expect_err("P1").to_string(),
            "invalid phase 'Phase 3': expected a phase id such as 3, 03, 2.1, 12A, 1-02 or CK-3"
        );
        assert_eq!(
            locate("4", &env).expect_err("P4").to_string(),
            "phase 4 (Reports) has no directory under .planning/phases/; plan it first"
        );
        assert_eq!(
            locate("9", &env).expect_err("P5").to_string(),
            "phase 9 not found in .planning/phases/, .planning/milestones/v*-phases/ or ROADMAP.md"
        );
    }

    #[test]
    fn locate_codes_archives_and_ambiguity() {
        let (_root, env) = fixture(
            &[
                "phases/CK-01-foundation",
                "phases/05-10x-speedup",
                "milestones/v0.9-phases/07-legacy-import",
                "phases/00-backlog",
            ],
            &[
                "phases/CK-01-foundation/CK-01-01-PLAN.md",
                "phases/05-10x-speedup/05-01-PLAN.md",
                "milestones/v0.9-phases/07-legacy-import/07-01-PLAN.md",
                "phases/00-backlog/00-01-PLAN.md",
            ],
            Some("CK"),
        );
        let one = locate("1", &env).expect("phase 1 via project code");
        assert_eq!(
            (one.padded.as_str(), one.name.as_str()),
            ("01", "Foundation")
        );
        let five = locate("5", &env).expect_err("token is 05-10x").to_string();
        assert!(
            five.starts_with("phase 5 (Speed) has no directory"),
            "{five}"
        );
        let seven = locate("7", &env).expect("archived");
        assert_eq!(seven.name, "legacy-import");
        assert!(seven.notices.iter().any(|n| n.level == Level::Info
            && n.text
                .starts_with("phase 7 resolved to archived milestone v0.9:")));
        let zero = locate("0", &env).expect("backlog");
        assert_eq!(zero.name, "backlog");
        assert!(zero.notices.contains(&Notice::new(
            Level::Warning,
            "no ROADMAP.md section for phase 0"
        )));
        let (_root2, mut env2) = fixture(
            &["phases/01-foundation", "phases/CK-01-foundation"],
            &["phases/01-foundation/01-01-PLAN.md"],
            None,
        );
        assert_eq!(locate("1", &env2).expect_err("P3").to_string(), "phase 1 is ambiguous: 2 directories match in .planning/phases/: 01-foundation, CK-01-foundation; give each project a distinct project_code");
        env2.workstream = Some("../x".into());
        assert_eq!(
            locate("1", &env2).expect_err("P2").to_string(),
            "GSD_WORKSTREAM must not contain '/', '\\' or '..': ../x"
        );
        let (_root3, env3) = fixture(
            &["phases/03-billing"],
            &["phases/03-billing/03-CONTEXT.md"],
            None,
        );
        assert_eq!(
            locate("3", &env3).expect_err("P6").to_string(),
            "phase 3: no *-PLAN.md files in .planning/phases/03-billing"
        );
        let (_root4, env4) = fixture(
            &["milestones/v1.0-phases/01-foundation"],
            &["milestones/v1.0-phases/01-foundation/01-01-PLAN.md"],
            None,
        );
        assert_eq!(locate("1", &env4).expect_err("P4 with note").to_string(), "phase 1 (Foundation) has no directory under .planning/phases/; plan it first (archived copy .planning/milestones/v1.0-phases/01-foundation ignored: ROADMAP.md lists the phase)");
    }
}
