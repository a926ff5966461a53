//! The consent steps `install`, `trust approve` and `trust rebind-host` share: assess a
//! bundle (disclose, gate, hash, fingerprint), show it, ask, and report a refusal.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::super::Context;
use super::prompt::{ask, Answer};
use super::ConsentArgs;
use crate::manifest::DeclaredLane;
use crate::output;
use crate::trust::consent::hash;
use crate::trust::disclosure::{disclose, Disclosure};
use crate::trust::render::{escape_text, summary_lines};
use crate::trust::signature::signature_for_manifest;
use crate::trust::{fingerprint, host_resolver, LaneReading};

/// What a capability bundle discloses and binds, and every reason consent may not be given.
pub(super) struct Assessment {
    /// The disclosure of the bundle.
    pub(super) disclosure: Disclosure,
    /// Its summary, as shown before asking.
    pub(super) lines: Vec<String>,
    /// Every reason the bundle may not be installed or approved.
    pub(super) problems: Vec<String>,
    /// `(host config key, resolved host)` of an openai-http lane.
    pub(super) host: Option<(String, String)>,
    /// The bundle's content hash (empty when it could not be hashed: then a problem says so).
    pub(super) content_hash: String,
    /// The disclosure signature of the manifest.
    pub(super) signature: String,
    /// The consent fingerprint of signature, host and content.
    pub(super) fingerprint: String,
}

impl Assessment {
    /// The resolved host, empty for a lane without one.
    pub(super) fn host_text(&self) -> String {
        self.host
            .as_ref()
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
    }
}

/// Discloses and fingerprints the bundle in `bundle_dir` with manifest `value`; `gate` lists
/// the command's own problems with it, before those of its destination and its hash.
pub(super) fn assess(
    context: &Context,
    value: &Value,
    bundle_dir: &Path,
    gate: impl FnOnce(&Disclosure) -> Vec<String>,
) -> Assessment {
    let config = context.config();
    let declared = DeclaredLane::of_manifest(value);
    let resolver = host_resolver(declared.as_ref(), &config);
    let disclosure = disclose(value, Some(&resolver), Some(bundle_dir));
    let lines = summary_lines(&disclosure);
    let mut problems = gate(&disclosure);
    let host = LaneReading::Declared(declared.map(Box::new)).host(&config);
    if let Some((key, resolved)) = &host {
        if resolved.is_empty() {
            problems.push(format!(
                "the destination of this openai-http lane cannot be resolved ({key} is unset and there is no defaultHost); consent would bind no host"
            ));
        }
    }
    let content_hash = hash::content_hash(bundle_dir)
        .map_err(|err| problems.push(format!("the bundle cannot be hashed: {err}")))
        .unwrap_or_default();
    let signature = signature_for_manifest(value);
    let host_text = host.as_ref().map(|(_, h)| h.clone()).unwrap_or_default();
    let fingerprint = fingerprint(&signature, &host_text, &content_hash);
    Assessment {
        disclosure,
        lines,
        problems,
        host,
        content_hash,
        signature,
        fingerprint,
    }
}

/// A consent command's `--json` result: what it is about (`base`, its fields first), then how it
/// ended (`status` and that status's own fields).
#[derive(Debug, Serialize)]
pub(super) struct Envelope<'a, B: Serialize> {
    /// The command's subject.
    #[serde(flatten)]
    pub(super) base: &'a B,
    /// How it ended.
    #[serde(flatten)]
    pub(super) outcome: Outcome<'a>,
}

/// How a consent command ended (`status`).
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub(super) enum Outcome<'a> {
    /// A gate refused it.
    Refused {
        /// Every reason.
        problems: &'a [String],
    },
    /// Consent was not given.
    Aborted {
        /// `declined`, `no-terminal` or `fingerprint-mismatch`.
        reason: &'static str,
    },
    /// `trust approve`: the same consent is already recorded.
    AlreadyApproved,
    /// `trust approve`: consent recorded.
    Approved,
    /// `trust rebind-host`: the destination is the approved one already.
    Unchanged,
    /// `trust rebind-host`: the new destination is approved.
    Rebound,
    /// `install`: the bundle is in place.
    Installed {
        /// Where.
        path: String,
        /// What did not work out on the way.
        warnings: &'a [String],
    },
}

/// Prints a refusal (consent declined, policy gate) and returns status 1.
pub(super) fn report_refusal(
    json_output: bool,
    envelope: &impl Serialize,
    lines: &[String],
    problems: &[String],
    hint: &str,
) -> u8 {
    if json_output {
        output::print_serialized(envelope);
    } else {
        print_lines(lines);
    }
    for line in lines {
        if json_output {
            output::eprint_line(line);
        }
    }
    for problem in problems {
        output::eprint_line(&format!("refused: {}", escape_text(problem)));
    }
    if !hint.is_empty() {
        output::eprint_line(hint);
    }
    1
}

/// Asks for consent after the disclosure was printed; `Err` carries the reason code.
fn obtain_consent(args: &ConsentArgs, computed: &str, question: &str) -> Result<(), &'static str> {
    if let Some(expected) = &args.fingerprint {
        if !expected.eq_ignore_ascii_case(computed) {
            return Err("fingerprint-mismatch");
        }
    }
    match ask(question, args.yes) {
        Answer::Yes => Ok(()),
        Answer::No => Err("declined"),
        Answer::NoTerminal => Err("no-terminal"),
    }
}

/// The hint printed when consent was not given.
fn consent_hint(reason: &str, fingerprint: &str) -> String {
    match reason {
        "fingerprint-mismatch" => format!(
            "the capability or its destination changed since you were shown fingerprint {fingerprint}: read the disclosure again"
        ),
        "no-terminal" => format!(
            "consent is needed and there is no terminal to ask: re-run with --yes --fingerprint {fingerprint} once you have read the disclosure"
        ),
        _ => "nothing was written".to_owned(),
    }
}

/// Prints `lines`, one per line.
pub(super) fn print_lines(lines: &[String]) {
    output::print(&lines.iter().map(|l| format!("{l}\n")).collect::<String>());
}

/// Prints `envelope` as JSON, or `text` for a person.
pub(super) fn print_result(json_output: bool, envelope: &impl Serialize, text: &str) {
    if json_output {
        output::print_serialized(envelope);
    } else {
        output::print(text);
    }
}

/// Shows a person the disclosure, its fingerprint and the sandbox posture before asking.
pub(super) fn show_disclosure(json_output: bool, assessment: &Assessment) {
    if !json_output {
        print_lines(&assessment.lines);
        output::print(&format!("fingerprint {}\n", assessment.fingerprint));
        output::print(&format!("sandbox: {}\n", super::view::SANDBOX_POSTURE));
    }
}

/// Asks `question` about what `lines` showed (fingerprint `fp`); when consent is not given,
/// reports the refusal of `base` (status `aborted`) and returns its status.
pub(super) fn ask_consent(
    args: &ConsentArgs,
    question: &str,
    lines: &[String],
    fp: &str,
    base: &impl Serialize,
) -> Option<u8> {
    let reason = obtain_consent(args, fp, question).err()?;
    let envelope = Envelope {
        base,
        outcome: Outcome::Aborted { reason },
    };
    let shown: &[String] = if args.json { lines } else { &[] };
    Some(report_refusal(
        args.json,
        &envelope,
        shown,
        &[],
        &consent_hint(reason, fp),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Subject {
        id: &'static str,
        project_root: &'static str,
    }

    /// The subject's fields come first, then `status`, then that status's own fields: the key
    /// order the envelopes had when they were JSON values filled in key by key.
    #[test]
    fn an_envelope_is_its_subject_then_its_status() {
        let base = Subject {
            id: "acme",
            project_root: "/p",
        };
        let problems = vec!["bad".to_owned()];
        let cases = [
            (
                Outcome::Refused {
                    problems: &problems,
                },
                r#"{"id":"acme","projectRoot":"/p","status":"refused","problems":["bad"]}"#,
            ),
            (
                Outcome::Aborted { reason: "declined" },
                r#"{"id":"acme","projectRoot":"/p","status":"aborted","reason":"declined"}"#,
            ),
            (
                Outcome::AlreadyApproved,
                r#"{"id":"acme","projectRoot":"/p","status":"already-approved"}"#,
            ),
            (
                Outcome::Installed {
                    path: "/x".to_owned(),
                    warnings: &[],
                },
                r#"{"id":"acme","projectRoot":"/p","status":"installed","path":"/x","warnings":[]}"#,
            ),
        ];
        for (outcome, expected) in cases {
            let envelope = Envelope {
                base: &base,
                outcome,
            };
            assert_eq!(
                serde_json::to_string(&envelope).unwrap_or_default(),
                expected
            );
        }
    }
}
