//! The diagnostic catalogue: every code gsd-lane emits, its spelling and its meaning.
//!
//! manifest.md §8 is the catalogue of record; a few codes are gsd-lane's own (the trust
//! policy's `TR-*`, the load-time `LD-SYMLINK`, the optional body fields `rateLimit` and
//! `posture`) and are marked [`Origin::Host`]. Codes are compared as enum members, never as
//! text; the text is only for output, where it is byte-for-byte the catalogue spelling.

use std::fmt;

use serde::{Serialize, Serializer};

/// Where a code is catalogued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// manifest.md §8.
    Spec,
    /// gsd-lane's own code, not in the specification's catalogue.
    Host,
}

/// Declares [`Code`] from rows `Variant = "CODE", Origin, "meaning";`.
macro_rules! catalogue {
    ($($variant:ident = $code:literal, $origin:ident, $meaning:literal;)*) => {
        /// A diagnostic code of the catalogue; each member's doc is its meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(#[doc = $meaning] $variant,)*
        }

        impl Code {
            /// Every code, in catalogue order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code as written in every output (`RB-SLUG`, `LD-UNCONSENTED`, …).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// What the code means, in one sentence.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$variant => $meaning,)*
                }
            }

            /// Whether the specification catalogues the code or gsd-lane adds it.
            pub fn origin(self) -> Origin {
                match self {
                    $(Code::$variant => Origin::$origin,)*
                }
            }
        }
    };
}

catalogue! {
    // manifest.md §8.1 Envelope and role.
    EnvObject = "ENV-OBJECT", Spec, "The manifest root is not a JSON object.";
    EnvId = "ENV-ID", Spec, "`id` is not lower-case kebab text.";
    EnvIdFolder = "ENV-ID-FOLDER", Spec, "`id` does not match the name of its folder.";
    EnvRole = "ENV-ROLE", Spec, "`role` is not one of feature, runtime, reviewer.";
    EnvTitle = "ENV-TITLE", Spec, "`title` is not a non-empty string.";
    EnvDescription = "ENV-DESCRIPTION", Spec, "`description` is not a non-empty string.";
    EnvTier = "ENV-TIER", Spec, "`tier` is not one of core, standard, full.";
    EnvRequires = "ENV-REQUIRES", Spec, "`requires` is not a list of capability ids.";
    EnvRequiresEntry = "ENV-REQUIRES-ENTRY", Spec, "An entry of `requires` is not a string.";
    EnvVersion = "ENV-VERSION", Spec, "`version` is not a strict semver string.";
    EnvEngines = "ENV-ENGINES", Spec, "`engines` is not a JSON object.";
    EnvEnginesGsd = "ENV-ENGINES-GSD", Spec, "`engines.gsd` is not a semver range string.";
    EnvCompat = "ENV-COMPAT", Spec, "A `compatVersions` key is not semver or its value is not a range.";
    EnvIntegrity = "ENV-INTEGRITY", Spec, "`integrity` is not a sha512 SRI string.";
    EnvProvenance = "ENV-PROVENANCE", Spec, "`provenance.sourceRepo` or `provenance.commit` is not a non-empty string.";
    RoleFeatureReviewer = "ROLE-FEATURE-REVIEWER", Spec, "A feature capability carries a reviewer body.";
    RoleReviewerNobody = "ROLE-REVIEWER-NOBODY", Spec, "A reviewer capability has no reviewer body.";
    RoleReviewerRuntime = "ROLE-REVIEWER-RUNTIME", Spec, "A reviewer capability carries a runtime body.";
    RoleReviewerFeaturefield = "ROLE-REVIEWER-FEATUREFIELD", Spec, "A reviewer capability carries a feature-only field.";
    // manifest.md §8.2 Reviewer body.
    RbType = "RB-TYPE", Spec, "`reviewer` is not a JSON object.";
    RbSlug = "RB-SLUG", Spec, "`reviewer.slug` is not a non-empty string.";
    RbSlugReserved = "RB-SLUG-RESERVED", Spec, "`reviewer.slug` is a reserved word.";
    RbSlugGrammar = "RB-SLUG-GRAMMAR", Spec, "`reviewer.slug` does not match the slug grammar.";
    RbFlags = "RB-FLAGS", Spec, "`reviewer.flags` is not an array of flags.";
    RbFlagsEmpty = "RB-FLAGS-EMPTY", Spec, "`reviewer.flags` is empty, so the lane cannot be requested.";
    RbFlagGrammar = "RB-FLAG-GRAMMAR", Spec, "A reviewer flag does not match the flag grammar.";
    RbFlagDup = "RB-FLAG-DUP", Spec, "`reviewer.flags` names a flag twice.";
    RbTransport = "RB-TRANSPORT", Spec, "`reviewer.transport` is not one of spawn, openai-http.";
    RbTimeout = "RB-TIMEOUT", Spec, "`reviewer.timeoutFloorMs` is not an integer number of milliseconds of at least 1.";
    RbEmptyoutput = "RB-EMPTYOUTPUT", Spec, "`reviewer.emptyOutput` is not one of stub-with-stderr, handler-owned.";
    RbSection = "RB-SECTION", Spec, "`reviewer.reviewsSection` is not a non-empty string.";
    RbEvidence = "RB-EVIDENCE", Spec, "`reviewer.evidenceClass` is not one of source-grounded, diff-only.";
    RbReqbin = "RB-REQBIN", Spec, "`reviewer.requiresBinaries` is not a list of executable names.";
    RbReqbinEntry = "RB-REQBIN-ENTRY", Spec, "An entry of `reviewer.requiresBinaries` is not a non-empty string.";
    RbModelkey = "RB-MODELKEY", Spec, "`reviewer.modelConfigKey` is neither null nor a dotted configuration key.";
    RbBudgetkey = "RB-BUDGETKEY", Spec, "`reviewer.promptBudgetKey` is absent or neither null nor a dotted configuration key.";
    RbHandler = "RB-HANDLER", Spec, "`reviewer.handler` is neither null nor a built-in handler name.";
    RbInternal = "RB-INTERNAL", Spec, "Validation of the reviewer body failed internally.";
    RbRatelimit = "RB-RATELIMIT", Host, "`reviewer.rateLimit` is not a valid rate limit.";
    RbPosture = "RB-POSTURE", Host, "`reviewer.posture` is not a known posture.";
    SpEnv = "SP-ENV", Host, "`reviewer.invoke.env` is not an object of string values under acceptable variable names.";
    RbTimeoutkey = "RB-TIMEOUTKEY", Host, "`reviewer.timeoutConfigKey` is neither null nor a dotted configuration key.";
    RbEffortkey = "RB-EFFORTKEY", Host, "`reviewer.effortConfigKey` is neither null nor a dotted configuration key.";
    RbDefaulteffort = "RB-DEFAULTEFFORT", Host, "`reviewer.defaultEffort` is not a declarable effort level, or is declared without `reviewer.effortConfigKey`.";
    // manifest.md §8.3 Probe.
    PrType = "PR-TYPE", Spec, "`reviewer.probe` is not an object with a known kind.";
    PrKind = "PR-KIND", Spec, "`reviewer.probe.kind` is not a known probe kind.";
    PrUnknown = "PR-UNKNOWN", Spec, "`reviewer.probe` has an unrecognised field.";
    PrBinary = "PR-BINARY", Spec, "`reviewer.probe.binary` is missing for a command probe.";
    PrBinaryForbidden = "PR-BINARY-FORBIDDEN", Spec, "`reviewer.probe.binary` is given for a probe kind that takes none.";
    PrNeedle = "PR-NEEDLE", Spec, "`reviewer.probe.needle` is missing for a command-capability probe.";
    PrNeedleForbidden = "PR-NEEDLE-FORBIDDEN", Spec, "`reviewer.probe.needle` is given for a probe kind that takes none.";
    PrHostkey = "PR-HOSTKEY", Spec, "`reviewer.probe.hostConfigKey` is missing for an http-reachable probe.";
    PrPath = "PR-PATH", Spec, "`reviewer.probe.path` is missing for an http-reachable probe.";
    PrHostkeyForbidden = "PR-HOSTKEY-FORBIDDEN", Spec, "`reviewer.probe.hostConfigKey` is given for a probe kind that takes none.";
    PrPathForbidden = "PR-PATH-FORBIDDEN", Spec, "`reviewer.probe.path` is given for a probe kind that takes none.";
    PrTimeout = "PR-TIMEOUT", Spec, "`reviewer.probe.timeoutMs` is missing or not an integer of at least 1 for a time-limited probe.";
    PrTimeoutForbidden = "PR-TIMEOUT-FORBIDDEN", Spec, "`reviewer.probe.timeoutMs` is given for a probe kind that starts no process.";
    // manifest.md §8.4 Invoke.
    InvType = "INV-TYPE", Spec, "`reviewer.invoke` is not an object.";
    InvMixed = "INV-MIXED", Spec, "`reviewer.invoke` combines fields of both transports.";
    InvForbidden = "INV-FORBIDDEN", Spec, "`reviewer.invoke` has a field of the other transport.";
    SpBinary = "SP-BINARY", Spec, "`reviewer.invoke.binary` is missing on a spawn lane.";
    SpArgs = "SP-ARGS", Spec, "`reviewer.invoke.args` is not a list of strings.";
    SpArgsEntry = "SP-ARGS-ENTRY", Spec, "An entry of `reviewer.invoke.args` is not a string.";
    SpPromptchannel = "SP-PROMPTCHANNEL", Spec, "`reviewer.invoke.promptChannel` is not a known prompt channel.";
    SpOutputchannel = "SP-OUTPUTCHANNEL", Spec, "`reviewer.invoke.outputChannel` is not a known output channel.";
    SpOutputargRequired = "SP-OUTPUTARG-REQUIRED", Spec, "`reviewer.invoke.outputArg` is missing although outputChannel is file-arg.";
    SpOutputargForbidden = "SP-OUTPUTARG-FORBIDDEN", Spec, "`reviewer.invoke.outputArg` is given although outputChannel is not file-arg.";
    SpModelarg = "SP-MODELARG", Spec, "`reviewer.invoke.modelArg` is neither a non-empty string nor null.";
    SpEffort = "SP-EFFORT", Spec, "`reviewer.invoke.effortChannel` is not a known effort channel.";
    HtHostkey = "HT-HOSTKEY", Spec, "`reviewer.invoke.hostConfigKey` is missing on an openai-http lane.";
    HtPath = "HT-PATH", Spec, "`reviewer.invoke.path` is missing on an openai-http lane.";
    HtDiscovery = "HT-DISCOVERY", Spec, "`reviewer.invoke.modelDiscovery` is not a known discovery mode.";
    HtEffort = "HT-EFFORT", Spec, "`reviewer.invoke.effortChannel` is not none on an openai-http lane.";
    HtDefaulthost = "HT-DEFAULTHOST", Spec, "`reviewer.invoke.defaultHost` is not a non-empty string.";
    HtFallbackmodel = "HT-FALLBACKMODEL", Spec, "`reviewer.invoke.fallbackModel` is not a non-empty string.";
    // manifest.md §8.5 Config slices.
    CfgType = "CFG-TYPE", Spec, "`config` is not an object.";
    CfgKey = "CFG-KEY", Spec, "A `config` key is empty or reserved.";
    CfgSlice = "CFG-SLICE", Spec, "A config slice is not an object.";
    CfgSliceType = "CFG-SLICE-TYPE", Spec, "A config slice's `type` is not one of boolean, string, number, enum.";
    CfgSliceDefault = "CFG-SLICE-DEFAULT", Spec, "A config slice has no `default`.";
    CfgSliceDefaultType = "CFG-SLICE-DEFAULT-TYPE", Spec, "A config slice's `default` does not fit its type.";
    CfgSliceEnumValues = "CFG-SLICE-ENUM-VALUES", Spec, "An enum config slice's `values` is not a non-empty array of strings.";
    CfgSliceEnumDefault = "CFG-SLICE-ENUM-DEFAULT", Spec, "An enum config slice's `default` is not among its values.";
    CfgSliceDescription = "CFG-SLICE-DESCRIPTION", Spec, "A config slice's `description` is not a non-empty string.";
    // manifest.md §8.6 Cross-capability.
    XSlugDup = "X-SLUG-DUP", Spec, "Two capabilities claim the same reviewer slug.";
    XFlagDup = "X-FLAG-DUP", Spec, "Two capabilities claim the same reviewer flag.";
    XSectionDup = "X-SECTION-DUP", Spec, "Two capabilities claim the same reviewsSection.";
    XIdDup = "X-ID-DUP", Spec, "The id is already registered by another capability.";
    XConfigOwned = "X-CONFIG-OWNED", Spec, "A config key already belongs to another capability.";
    XConfigCentral = "X-CONFIG-CENTRAL", Spec, "A config key is reserved by the central configuration schema.";
    XConfigPattern = "X-CONFIG-PATTERN", Spec, "A config key falls under a central schema pattern.";
    XRequiresMissing = "X-REQUIRES-MISSING", Spec, "`requires` names an unknown capability.";
    XRequiresCycle = "X-REQUIRES-CYCLE", Spec, "`requires` forms a cycle.";
    XTier = "X-TIER", Spec, "A capability requires one of a higher tier.";
    // manifest.md §8.7 Load time.
    LdPending = "LD-PENDING", Spec, "An install or upgrade of this id is still pending; not loaded.";
    LdMissing = "LD-MISSING", Spec, "No readable capability.json.";
    LdParse = "LD-PARSE", Spec, "capability.json could not be parsed.";
    LdReserved = "LD-RESERVED", Spec, "The id carries a prefix reserved for first-party capabilities.";
    LdInvalid = "LD-INVALID", Spec, "Rejected by validation.";
    LdEngines = "LD-ENGINES", Spec, "`engines.gsd` is not satisfied by the host version.";
    LdUnconsented = "LD-UNCONSENTED", Spec, "Found but not activated: no consent recorded for this project.";
    LdCross = "LD-CROSS", Spec, "Rejected by cross-capability checks.";
    LdFallback = "LD-FALLBACK", Spec, "Overlay loading failed as a whole; first-party lanes only.";
    LdSymlink = "LD-SYMLINK", Host, "The project capability folder is a symbolic link: refused.";
    LdProgramInRepository = "LD-PROGRAM-IN-REPOSITORY", Host, "A project-scope lane runs a program shipped in its folder, inside the repository: refused.";
    // manifest.md §8.8 Warnings.
    WBodyUnknown = "W-BODY-UNKNOWN", Spec, "Unrecognised reviewer field, ignored.";
    WInvokeUnknown = "W-INVOKE-UNKNOWN", Spec, "Unrecognised invoke field, ignored.";
    WPlaceholderMissing = "W-PLACEHOLDER-MISSING", Spec, "The argv template lacks a placeholder its channels need.";
    WPlaceholderEmbedded = "W-PLACEHOLDER-EMBEDDED", Spec, "An argument contains `{{` but is not exactly a placeholder; it is passed literally.";
    WHandlerOwnedNoHandler = "W-HANDLER-OWNED-NO-HANDLER", Spec, "emptyOutput is handler-owned but there is no handler.";
    WKeyUndeclared = "W-KEY-UNDECLARED", Spec, "A configuration key the lane reads is not declared in its config slice.";
    WModelkeyNoModelarg = "W-MODELKEY-NO-MODELARG", Spec, "A model key is set but modelArg is null, so a model can never be passed.";
    WPathSlash = "W-PATH-SLASH", Spec, "A request path does not start with `/`.";
    WSectionChars = "W-SECTION-CHARS", Spec, "reviewsSection has surrounding whitespace or control characters.";
    // gsd-lane's trust policy for third-party lanes (trust/policy.rs).
    TrBinaryPath = "TR-BINARY-PATH", Host, "A binary names a path outside the capability's install folder.";
    TrSpawnHttpProbe = "TR-SPAWN-HTTP-PROBE", Host, "A spawn lane carries an http-reachable probe.";
    TrHandlerTransport = "TR-HANDLER-TRANSPORT", Host, "The handler does not drive the lane's transport.";
    TrPathAuthority = "TR-PATH-AUTHORITY", Host, "A request path does not start with `/` and could move the request to another host.";
    // gsd-lane's text rules (manifest.md §8.10).
    TxtUnsafe = "TXT-UNSAFE", Host, "`title` or `reviewer.reviewsSection` holds a control, bidi or invisible character that could steer or hide what a terminal shows.";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The code grammar (every code of manifest.md §8 has it): upper-case words joined by
    /// `-`, the first (the family) of letters only.
    fn is_code_grammar(text: &str) -> bool {
        let mut words = text.split('-');
        let family_ok = words
            .next()
            .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_uppercase()));
        let mut rest = words.peekable();
        family_ok
            && rest.peek().is_some()
            && rest.all(|w| {
                !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            })
    }

    /// Rows of manifest.md §8 that name a scenario (a case the catalogue pins), not a code
    /// any diagnostic carries.
    const SCENARIOS: &[&str] = &["RB-EMPTY", "INV-NEITHER", "ROLE-UNKNOWN-WITH-BODY"];

    /// The first cell of every row of manifest.md §8's tables (the repository's own copy of the
    /// specification, `spec/manifest.md`), split at ` / ` and without
    /// `[gsd-lane]` marks; `OK-*` (silently fine) and `RUN-*` (run-time outcomes) are cases,
    /// not codes, and left out.
    fn spec_codes() -> BTreeSet<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/manifest.md");
        let text = std::fs::read_to_string(path).expect("the specification is readable");
        let start = text
            .find("## 8. Error and warning catalogue")
            .expect("§8 exists");
        let section = &text[start..];
        let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
        // §8.10 lists gsd-lane's own codes (Origin::Host): not the specification's catalogue.
        let end = section[..end].find(HOST_SECTION).unwrap_or(end);
        table_codes(&section[..end])
    }

    /// The heading of manifest.md's §8.10, gsd-lane's own codes.
    const HOST_SECTION: &str = "\n### 8.10 ";

    /// The code in the first cell of every table row of `text`, split at ` / ` and without
    /// `[gsd-lane]` marks; `OK-*` and `RUN-*` cases left out.
    fn table_codes(text: &str) -> BTreeSet<String> {
        text.lines()
            .filter_map(|line| line.strip_prefix("| "))
            .filter_map(|line| line.split(" |").next())
            .flat_map(|cell| cell.split(" / "))
            .map(|cell| cell.replace("[gsd-lane]", "").trim().to_owned())
            .filter(|cell| is_code_grammar(cell))
            .filter(|cell| !cell.starts_with("OK-") && !cell.starts_with("RUN-"))
            .collect()
    }

    #[test]
    fn every_code_is_unique_and_grammatical() {
        let mut seen = BTreeSet::new();
        for code in Code::ALL {
            assert!(is_code_grammar(code.as_str()), "{code}");
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert!(!code.meaning().is_empty(), "{code} has no meaning");
        }
    }

    #[test]
    fn the_grammar_refuses_what_is_not_a_code() {
        for bad in [
            "", "RB", "rb-slug", "RB-", "RB--SLUG", "R1-SLUG", "RB-slug", "RB SLUG",
        ] {
            assert!(!is_code_grammar(bad), "{bad}");
        }
        assert!(is_code_grammar("X-TIER"));
        assert!(is_code_grammar("W-HANDLER-OWNED-NO-HANDLER"));
    }

    #[test]
    fn the_enum_and_the_specification_catalogue_agree() {
        let spec = spec_codes();
        for scenario in SCENARIOS {
            assert!(spec.contains(*scenario), "{scenario} is no longer in §8");
        }
        let ours: BTreeSet<String> = Code::ALL
            .iter()
            .filter(|code| code.origin() == Origin::Spec)
            .map(|code| code.as_str().to_owned())
            .collect();
        let catalogued: BTreeSet<String> = spec
            .into_iter()
            .filter(|code| !SCENARIOS.contains(&code.as_str()))
            .collect();
        assert_eq!(ours, catalogued);
        for code in Code::ALL.iter().filter(|c| c.origin() == Origin::Host) {
            assert!(
                !catalogued.contains(code.as_str()),
                "{code} is in the specification now: mark it Spec"
            );
        }
    }

    /// Every code §8.10 documents is one of gsd-lane's own, and TXT-UNSAFE is documented there.
    #[test]
    fn host_codes_documented_in_section_8_10_are_host_codes() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/manifest.md");
        let text = std::fs::read_to_string(path).expect("the specification is readable");
        let start = text.find(HOST_SECTION).expect("§8.10 exists");
        let section = &text[start..];
        let end = section[1..].find("\n## ").map_or(section.len(), |i| i + 1);
        let documented = table_codes(&section[..end]);
        assert!(documented.contains("TXT-UNSAFE"), "{documented:?}");
        for code in &documented {
            let known = Code::ALL
                .iter()
                .find(|c| c.as_str() == code)
                .unwrap_or_else(|| panic!("§8.10 documents {code}, which no diagnostic carries"));
            assert_eq!(known.origin(), Origin::Host, "{code}");
        }
    }

    #[test]
    fn output_spelling_is_the_catalogue_code() {
        assert_eq!(Code::LdUnconsented.to_string(), "LD-UNCONSENTED");
        assert_eq!(
            serde_json::to_string(&Code::WHandlerOwnedNoHandler).expect("serializes"),
            "\"W-HANDLER-OWNED-NO-HANDLER\""
        );
    }
}
