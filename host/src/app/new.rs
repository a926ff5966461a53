//! `gsd-lane new <slug> [--http] [--dir D]`: a lane author's starting point.
//!
//! Writes a capability folder that validates as written: `capability.json` (minimal: JSON has no
//! comments), a `README.md` beside it explaining every field and what to change, and for a spawn
//! lane a starter program `bin/<slug>` (prompt on stdin, review on stdout) that the manifest names
//! as `./bin/<slug>` (a program the capability ships, manifest.md §2.3). Then prints the commands
//! to run next. The folder is written under a temporary name and renamed into place, so an
//! interrupted `new` leaves no half-written folder, and an existing path is never touched.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::Context;
use crate::error::Failure;
use crate::output;

/// The longest slug `new` accepts (it becomes a folder name, a flag and config keys).
const MAX_SLUG: usize = 64;

/// Arguments of `new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The lane's slug, also its capability id, folder name and flag (`--<slug>`):
    /// lower-case letters, digits and `-`, starting with a letter.
    pub slug: String,
    /// An OpenAI-compatible HTTP lane (a server such as ollama or llama.cpp) instead of a
    /// program that reads the prompt on stdin and prints the review.
    #[arg(long)]
    pub http: bool,
    /// Where to create the folder `<slug>/` (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Why `slug` cannot name a new lane, if it cannot.
fn slug_problem(slug: &str) -> Option<String> {
    let shown = output::neutralize(slug);
    if !crate::trust::consent::valid_id(slug) || slug.len() > MAX_SLUG {
        return Some(format!(
            "{shown:?} is not a valid slug: use lower-case letters, digits and '-', starting with a letter, at most {MAX_SLUG} characters (e.g. my-reviewer)"
        ));
    }
    if let Some(prefix) = ["gsd-", "gsd-core-", "anthropic-"]
        .iter()
        .find(|p| slug.starts_with(**p))
    {
        return Some(format!(
            "{shown:?}: ids starting with {prefix} are reserved for first-party capabilities; choose another slug"
        ));
    }
    crate::registry::Registry::is_first_party(slug).then(|| {
        format!("{shown:?} is a first-party lane shipped with gsd-lane; choose another slug")
    })
}

/// `my-reviewer` → `My Reviewer` (the lane's title and REVIEWS.md section).
fn title(slug: &str) -> String {
    slug.split('-')
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The config-key form of a slug (`my-reviewer` → `my_reviewer`), as the first-party HTTP
/// lanes spell theirs (`review.lm_studio_host`).
fn key(slug: &str) -> String {
    slug.replace('-', "_")
}

/// The `capability.json` `new` writes, field for field in the order written.
#[derive(Debug, Serialize)]
struct Manifest {
    id: String,
    role: &'static str,
    version: &'static str,
    title: String,
    description: &'static str,
    tier: &'static str,
    requires: [&'static str; 0],
    engines: Engines,
    reviewer: Reviewer,
    /// The HTTP lane's config keys (a spawn lane has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<ConfigKeys>,
}

/// `engines`: the GSD versions the lane runs under.
#[derive(Debug, Serialize)]
struct Engines {
    gsd: &'static str,
}

/// The `reviewer` body of either template (written as the template's own object).
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Reviewer {
    /// A program the capability ships.
    Spawn(SpawnReviewer),
    /// An OpenAI-compatible server.
    Http(HttpReviewer),
}

/// The `reviewer` body of a spawn lane.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SpawnReviewer {
    slug: String,
    flags: [String; 1],
    transport: &'static str,
    probe: CommandProbe,
    invoke: SpawnInvoke,
    timeout_floor_ms: u64,
    empty_output: &'static str,
    reviews_section: String,
    evidence_class: &'static str,
    requires_binaries: [&'static str; 0],
    prompt_budget_key: Option<String>,
    model_config_key: Option<String>,
    handler: Option<&'static str>,
}

/// A `command-exists` probe.
#[derive(Debug, Serialize)]
struct CommandProbe {
    kind: &'static str,
    binary: String,
}

/// How a spawn lane is invoked.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SpawnInvoke {
    binary: String,
    args: [&'static str; 0],
    prompt_channel: &'static str,
    output_channel: &'static str,
    model_arg: Option<String>,
    effort_channel: &'static str,
}

/// The `reviewer` body of an HTTP lane.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HttpReviewer {
    slug: String,
    flags: [String; 1],
    transport: &'static str,
    probe: HttpProbe,
    invoke: HttpInvoke,
    timeout_floor_ms: u64,
    empty_output: &'static str,
    reviews_section: String,
    evidence_class: &'static str,
    requires_binaries: [&'static str; 0],
    prompt_budget_key: String,
    model_config_key: String,
    handler: &'static str,
}

/// An `http-reachable` probe.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HttpProbe {
    kind: &'static str,
    host_config_key: String,
    path: &'static str,
    timeout_ms: u64,
}

/// How an HTTP lane is invoked.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HttpInvoke {
    host_config_key: String,
    default_host: &'static str,
    path: &'static str,
    model_discovery: &'static str,
    effort_channel: &'static str,
}

/// The `config` member of an HTTP lane: its model, host and prompt-budget keys, in that order.
#[derive(Debug)]
struct ConfigKeys {
    model: (String, ConfigKey),
    host: (String, ConfigKey),
    budget: (String, ConfigKey),
}

impl Serialize for ConfigKeys {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        for (key, value) in [&self.model, &self.host, &self.budget] {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// One declared config key: its type, default and meaning.
#[derive(Debug, Serialize)]
struct ConfigKey {
    #[serde(rename = "type")]
    kind: &'static str,
    default: ConfigDefault,
    description: &'static str,
}

/// A config key's default value.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ConfigDefault {
    /// A string.
    Text(&'static str),
    /// A number.
    Number(i64),
}

/// The manifest fields every lane shares, around `reviewer`.
fn envelope(slug: &str, description: &'static str, reviewer: Reviewer) -> Manifest {
    Manifest {
        id: slug.to_owned(),
        role: "reviewer",
        version: "0.1.0",
        title: title(slug),
        description,
        tier: "full",
        requires: [],
        engines: Engines { gsd: ">=1.9.0" },
        reviewer,
        config: None,
    }
}

/// A spawn lane running the program the capability ships, `./bin/<slug>`.
fn spawn_manifest(slug: &str) -> Manifest {
    let program = format!("./bin/{slug}");
    envelope(
        slug,
        "Reviewer lane that runs bin/ in its own folder: the review prompt on stdin, the review on stdout.",
        Reviewer::Spawn(SpawnReviewer {
            slug: slug.to_owned(),
            flags: [format!("--{slug}")],
            transport: "spawn",
            probe: CommandProbe {
                kind: "command-exists",
                binary: program.clone(),
            },
            invoke: SpawnInvoke {
                binary: program,
                args: [],
                prompt_channel: "stdin",
                output_channel: "stdout",
                model_arg: None,
                effort_channel: "none",
            },
            timeout_floor_ms: 600_000,
            empty_output: "stub-with-stderr",
            reviews_section: title(slug),
            evidence_class: "source-grounded",
            requires_binaries: [],
            prompt_budget_key: None,
            model_config_key: None,
            handler: None,
        }),
    )
}

/// An OpenAI-compatible HTTP lane, its host, model and prompt budget read from the config.
fn http_manifest(slug: &str) -> Manifest {
    let key = key(slug);
    let host_key = format!("review.{key}_host");
    let model_key = format!("review.models.{key}");
    let budget_key = format!("review.max_prompt_tokens_per_reviewer.{key}");
    let mut manifest = envelope(
        slug,
        "Reviewer lane that sends the review prompt to an OpenAI-compatible chat completions server.",
        Reviewer::Http(HttpReviewer {
            slug: slug.to_owned(),
            flags: [format!("--{slug}")],
            transport: "openai-http",
            probe: HttpProbe {
                kind: "http-reachable",
                host_config_key: host_key.clone(),
                path: "/v1/models",
                timeout_ms: 2000,
            },
            invoke: HttpInvoke {
                host_config_key: host_key.clone(),
                default_host: "http://127.0.0.1:8080",
                path: "/v1/chat/completions",
                model_discovery: "first-from-models-endpoint",
                effort_channel: "none",
            },
            timeout_floor_ms: 300_000,
            empty_output: "stub-with-stderr",
            reviews_section: title(slug),
            evidence_class: "source-grounded",
            requires_binaries: [],
            prompt_budget_key: budget_key.clone(),
            model_config_key: model_key.clone(),
            handler: "openai-compatible",
        }),
    );
    manifest.config = Some(ConfigKeys {
        model: (model_key, ConfigKey {
            kind: "string",
            default: ConfigDefault::Text(""),
            description: "The model to ask for; when empty the lane takes the first model the server lists.",
        }),
        host: (host_key, ConfigKey {
            kind: "string",
            default: ConfigDefault::Text(""),
            description: "The server's base URL (scheme, host and port); when empty the lane uses http://127.0.0.1:8080.",
        }),
        budget: (budget_key, ConfigKey {
            kind: "number",
            default: ConfigDefault::Number(-1),
            description: "Maximum prompt tokens for this lane; -1 means unset (review.max_prompt_tokens applies), 0 means never trimmed.",
        }),
    });
    manifest
}

/// The starter program of a spawn lane: runs as written, to be replaced by a call to the
/// author's reviewer.
fn starter_program(slug: &str) -> String {
    format!(
        r#"#!/bin/sh
# The program gsd-lane runs for the {slug} lane ("invoke.binary": "./bin/{slug}").
#
# gsd-lane writes the review prompt (the plans and the review request, Markdown) to stdin and
# takes what this program prints on stdout as the review (Markdown). stderr is kept beside the
# review (gsd-review-{slug}.err). Exit 0 when a review was printed. It runs with a minimal
# environment (PATH, HOME, locale, TMPDIR), never through a shell of gsd-lane's, and the
# repository under review is read-only for it.
#
# Replace the lines below with a call to your reviewer, for example:
#   exec my-ai-cli --print --output-format text -     # reads the prompt on stdin
set -eu
lines=$(wc -l | tr -d ' ')
printf '# {title} review\n\nThe starter program of the {slug} lane received a prompt of %s lines.\nReplace bin/{slug} with a call to your reviewer.\n' "$lines"
"#,
        title = title(slug),
    )
}

/// The README's part every lane shares: the next commands and the envelope and lane fields.
fn readme_common(slug: &str) -> String {
    format!(
        r#"# {title} (gsd-lane lane `{slug}`)

A reviewer lane for gsd-lane, written by `gsd-lane new`. `capability.json` is the whole
declaration (JSON has no comments, so they are here). It validates as written; change it, then
run `gsd-lane validate .` again.

## Next

```sh
gsd-lane validate .                   # every error with file, line, column and a fix
gsd-lane install . --global           # shows what the lane runs, asks, installs it
gsd-lane disclose {slug}              # what it runs or where it sends your plans
gsd-lane run {slug} --prompt-file PLAN.md   # one run, with the exact command line and result
gsd-lane review --phase 3 --{slug}    # a real review with it
```

Install it globally (`--global`): a project-scope copy (`.gsd/capabilities/` inside a repository)
needs `gsd-lane trust approve {slug}` on every machine, and never runs a program from its folder.

## The envelope

| Field | Meaning |
|---|---|
| `id` | the capability id: the folder name, lower-case letters, digits and `-` |
| `role` | `reviewer`: this capability declares one lane in `reviewer` |
| `version` | SemVer of your lane; bump it when you change it |
| `title`, `description` | what `gsd-lane list` and `disclose` show |
| `tier`, `requires` | `full` and `[]` for a lane |
| `engines.gsd` | the GSD versions this lane works with |

## The lane (`reviewer`)

| Field | Meaning |
|---|---|
| `slug` | the lane's name in commands (`gsd-lane run {slug}`) and in `review.default_reviewers` |
| `flags` | the flags that select it in `gsd-lane review` (`--{slug}`) |
| `reviewsSection` | its heading in REVIEWS.md (`## {title} Review`) |
| `timeoutFloorMs` | the hard bound of one run, in milliseconds; the process tree is killed after it |
| `emptyOutput` | `stub-with-stderr`: an empty review becomes a stub quoting stderr, never a clean review |
| `evidenceClass` | `source-grounded` (it may read the repository) or `plan-only` |
| `requiresBinaries` | other programs that must be on PATH for the lane to be offered |
| `handler` | a first-party handler for behaviour data cannot express, else `null` |
"#,
        title = title(slug),
    )
}

/// The README's part for an HTTP lane.
fn readme_http(slug: &str) -> String {
    let key = key(slug);
    format!(
        r#"
## HTTP (`transport: "openai-http"`)

The lane sends the prompt as one chat completion to an OpenAI-compatible server (ollama,
LM Studio, llama.cpp, vLLM, ...), through the first-party `openai-compatible` handler.

| Field | Meaning |
|---|---|
| `invoke.hostConfigKey` | the config key holding the server's base URL: `review.{key}_host` |
| `invoke.defaultHost` | the URL used while that key is unset: `http://127.0.0.1:8080` |
| `invoke.path` | the request path, `/v1/chat/completions` |
| `invoke.modelDiscovery` | `first-from-models-endpoint`: without a configured model, the first one `GET /v1/models` lists |
| `probe` | before a run: `GET <host>/v1/models` must answer 2xx within `timeoutMs` |
| `modelConfigKey` | `review.models.{key}`: the model to ask for |
| `promptBudgetKey` | `review.max_prompt_tokens_per_reviewer.{key}`: trims the prompt for a small context |
| `config` | declares those three keys, their types and defaults (a lane owns the keys it reads) |

Point it at your server in `.planning/config.json`:

```json
{{ "review": {{ "{key}_host": "http://127.0.0.1:11434", "models": {{ "{key}": "qwen3:8b" }} }} }}
```

Do this before `gsd-lane install`: the install pins the destination it resolves then (this
value, else `defaultHost`) in your GSD home, and a config edit that moves it later is blocked
(`egress_host_changed`) until `gsd-lane trust rebind-host {slug}`.
"#
    )
}

/// The README's part for a spawn lane.
fn readme_spawn(slug: &str) -> String {
    format!(
        r#"
## Spawn (`transport: "spawn"`)

The lane runs the program `bin/{slug}` shipped in this folder, with the prompt on stdin, and
takes its stdout as the review. `bin/{slug}` is a starter that prints a placeholder review:
replace its last lines with a call to your reviewer CLI.

| Field | Meaning |
|---|---|
| `invoke.binary` | `./bin/{slug}`: a program in this folder, run from the installed copy (`$GSD_HOME/.gsd/capabilities/{slug}/bin/{slug}`). Or a bare command name looked up on PATH, such as `my-ai-cli` |
| `invoke.args` | its arguments, one array element each (never a shell); `{{{{model}}}}`, `{{{{effort}}}}`, `{{{{output}}}}` and `{{{{prompt}}}}` are replaced when a whole element |
| `invoke.promptChannel` | `stdin` (the prompt on stdin); `argv` or `argv-file-ref` put it (or an instruction naming its file) in `{{{{prompt}}}}` |
| `invoke.outputChannel` | `stdout` (the review on stdout); `file-arg` for a CLI that writes a file named by `outputArg` |
| `invoke.modelArg` | the flag that passes a model (`--model`), or `null` |
| `invoke.effortChannel` | `none`, or `argv` for CLIs that take a reasoning-effort flag |
| `probe` | `command-exists`: the lane is offered when `binary` exists; `command-capability` also checks `--help` for a needle |
"#
    )
}

/// The README beside the manifest: what each field means and what to change.
fn readme(slug: &str, http: bool) -> String {
    let specific = if http {
        readme_http(slug)
    } else {
        readme_spawn(slug)
    };
    readme_common(slug) + &specific
}

/// The files of the new folder: `(relative path, contents, executable)`.
fn files(slug: &str, http: bool, manifest: &Manifest) -> Vec<(PathBuf, String, bool)> {
    let mut text = serde_json::to_string_pretty(manifest).unwrap_or_default();
    text.push('\n');
    let mut files = vec![
        (PathBuf::from("capability.json"), text, false),
        (PathBuf::from("README.md"), readme(slug, http), false),
    ];
    if !http {
        files.push((Path::new("bin").join(slug), starter_program(slug), true));
    }
    files
}

/// Writes `files` into a fresh temporary folder in `parent`, then renames it to `folder`.
fn write_folder(
    parent: &Path,
    folder: &Path,
    files: &[(PathBuf, String, bool)],
) -> Result<(), Failure> {
    let failed = |what: &str, err: std::io::Error| {
        Failure::new(format!("{}: {what}: {err}", parent.display()))
    };
    let staging = tempfile::Builder::new()
        .prefix(".gsd-lane-new-")
        .tempdir_in(parent)
        .map_err(|err| failed("cannot create a folder here", err))?;
    for (path, text, executable) in files {
        let target = staging.path().join(path);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|err| failed("writing the folder", err))?;
        }
        std::fs::write(&target, text).map_err(|err| failed("writing the folder", err))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if *executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))
                .map_err(|err| failed("writing the folder", err))?;
        }
    }
    // The temporary folder is 0700; the capability folder is an ordinary one.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(|err| failed("writing the folder", err))?;
    }
    if std::fs::symlink_metadata(folder).is_ok() {
        return Err(exists(folder));
    }
    std::fs::rename(staging.path(), folder)
        .map_err(|err| Failure::new(format!("{}: cannot create it: {err}", folder.display())))?;
    // Renamed away: nothing left for the guard to remove.
    let _ = staging.keep();
    Ok(())
}

fn exists(folder: &Path) -> Failure {
    Failure::new(format!(
        "{} already exists; nothing was written (choose another slug or --dir)",
        output::neutralize(&folder.display().to_string())
    ))
}

/// The commands to run next, with the folder as the user wrote it.
fn next_steps(slug: &str, shown: &str, http: bool) -> String {
    let quoted = shlex::try_quote(shown).map_or_else(|_| shown.to_owned(), |q| q.into_owned());
    let (files, before, after) = if http {
        (
            "capability.json, README.md".to_owned(),
            // The install pins the destination it resolves: configure the host first.
            format!(
                "  # first point it at your server (install pins that destination): in .planning/config.json
  #   {{\"review\": {{\"{}_host\": \"http://127.0.0.1:8080\"}}}}
",
                key(slug)
            ),
            format!("  gsd-lane doctor {slug}\n"),
        )
    } else {
        (
            format!("capability.json, README.md, bin/{slug}"),
            String::new(),
            format!("  # then make {shown}/bin/{slug} call your reviewer, and install again\n"),
        )
    };
    format!(
        "created {shown}/ ({files})\n\nnext:\n{before}  gsd-lane validate {quoted}\n  gsd-lane install {quoted} --global\n  gsd-lane disclose {slug}\n  gsd-lane run {slug} --prompt-file PLAN.md\n{after}\nREADME.md in the folder explains every field.\n"
    )
}

/// Runs `new`.
///
/// # Errors
///
/// An invalid or reserved slug (usage, exit 2); a `--dir` that is not a directory, an existing
/// folder, or a write that failed (exit 1).
pub fn run(context: &Context, args: &NewArgs) -> Result<u8, Failure> {
    if let Some(problem) = slug_problem(&args.slug) {
        return Err(Failure::usage(problem));
    }
    let parent = match &args.dir {
        Some(dir) => context.env.cwd.join(dir),
        None => context.env.cwd.clone(),
    };
    if !parent.is_dir() {
        return Err(Failure::new(format!(
            "--dir {}: not a directory",
            output::neutralize(&parent.display().to_string())
        )));
    }
    let folder = parent.join(&args.slug);
    if std::fs::symlink_metadata(&folder).is_ok() {
        return Err(exists(&folder));
    }
    let manifest = if args.http {
        http_manifest(&args.slug)
    } else {
        spawn_manifest(&args.slug)
    };
    write_folder(&parent, &folder, &files(&args.slug, args.http, &manifest))?;
    let shown = args.dir.as_ref().map_or_else(
        || args.slug.clone(),
        |dir| dir.join(&args.slug).display().to_string(),
    );
    output::print(&next_steps(
        &args.slug,
        &output::neutralize(&shown),
        args.http,
    ));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_templates_validate_without_a_diagnostic() {
        for slug in ["my-reviewer", "r", "a1-b2"] {
            for manifest in [spawn_manifest(slug), http_manifest(slug)] {
                let manifest = serde_json::to_value(&manifest).expect("a manifest serializes");
                let diagnostics = crate::manifest::validate_value(&manifest, Some(slug));
                assert!(diagnostics.is_empty(), "{slug}: {diagnostics:?}");
            }
        }
    }

    #[test]
    fn slugs_are_checked_before_anything_is_written() {
        for bad in [
            "",
            "My",
            "-x",
            "1x",
            "a_b",
            "a b",
            "a/b",
            "../x",
            "x\u{1b}",
            "gsd-x",
            "anthropic-y",
            "claude",
            "ollama",
        ] {
            assert!(slug_problem(bad).is_some(), "{bad:?}");
        }
        assert!(slug_problem(&"a".repeat(MAX_SLUG + 1)).is_some());
        for good in ["my-reviewer", "x", "llm-local2"] {
            assert_eq!(slug_problem(good), None, "{good}");
        }
    }

    #[test]
    fn titles_and_keys() {
        assert_eq!(title("my-local-llm"), "My Local Llm");
        assert_eq!(key("my-local-llm"), "my_local_llm");
    }
}
