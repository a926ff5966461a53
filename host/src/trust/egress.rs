//! Invocation-time egress re-verification (trust.md §6).
//!
//! Runs for every `openai-http` lane after its plan is made and before any probe, DNS lookup,
//! connection or request. The consented host is looked up under the **capability id** that
//! declared the lane (never rebuilt from the slug) and the canonical project root; lanes without
//! a consented host are held to their first-use pin. A mismatch blocks the lane with
//! `egress_host_changed`: nothing is sent to either host. A store that exists but cannot be
//! read or decided blocks the lane too (`consent_store_unreadable`, `egress_store_unreadable`):
//! a damaged store is never taken for "no record" or "first use".
//!
//! The origin the HTTP effects may contact is derived from the very host checked here, and
//! `run/http.rs` refuses every request (probe, discovery, chat) whose scheme, host and port
//! differ from it, so the barrier does not rest on call order alone.

use std::collections::HashSet;
use std::sync::Mutex;

use gsd_lane_sdk::LanePlan;
use serde_json::Value;

use super::consent::{iso_now, ConsentStore, Damage, StoreError};
use super::locality::is_local_destination;
use super::pins::{Pin, PinSource, PinStore};
use super::render::escape_text;
use crate::config::normalize_host;
use crate::output;
use crate::refusal::{Reason, Refusal};
use crate::run::lane::EgressCheck;

/// The outcome of comparing a consented host with the current one (trust.md §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EgressDecision {
    /// Send.
    Allow,
    /// Block with `egress_host_changed`.
    Block,
}

/// Compares a consented value with the current host.
///
/// Absence, an empty string or a non-string value allows (never coerced); otherwise both sides
/// are normalized and compared exactly.
pub fn check_egress_host(consented: Option<&Value>, current: &str) -> EgressDecision {
    match consented.and_then(Value::as_str) {
        None | Some("") => EgressDecision::Allow,
        Some(consented) if normalize_host(consented) == normalize_host(current) => {
            EgressDecision::Allow
        }
        Some(_) => EgressDecision::Block,
    }
}

/// `local` or `remote`, for messages.
pub fn class_of(host: &str) -> &'static str {
    if is_local_destination(host) {
        "local"
    } else {
        "remote"
    }
}

/// Which binding a destination was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The `reviewerHost` of a consent record.
    Consent,
    /// A first-use or approved pin.
    Pin,
}

/// The stderr message of a block (trust.md §6.6): slug, both hosts with their classes, the key,
/// that nothing was sent, and how to re-approve. Control characters are escaped.
pub fn block_message(
    slug: &str,
    capability_id: &str,
    binding: Binding,
    consented: &str,
    key: &str,
    current: &str,
) -> String {
    let covered = match binding {
        Binding::Consent => "consent covers",
        Binding::Pin => "the destination pinned on first use is",
    };
    format!(
        "lane {} blocked: {covered} {} ({}) but {} now resolves to {} ({}); nothing was sent; the lane stays off until you re-consent to the new destination (gsd-lane trust rebind-host {}) or restore the config value",
        escape_text(slug),
        escape_text(consented),
        class_of(consented),
        escape_text(key),
        escape_text(current),
        class_of(current),
        escape_text(capability_id),
    )
}

/// Which store a damaged-store block is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// `consent.json`.
    Consent,
    /// `egress-pins.json`.
    Pins,
}

impl Store {
    /// The reason a lane blocked by this store's damage reports.
    pub fn reason(self) -> Reason {
        match self {
            Store::Consent => Reason::ConsentStoreUnreadable,
            Store::Pins => Reason::EgressStoreUnreadable,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Store::Consent => "the consent store",
            Store::Pins => "the destination pin store",
        }
    }
}

/// The stderr message of a damaged-store block: the lane, the file and what is wrong with it,
/// that nothing was sent, and the fix. Control characters are escaped.
pub fn damaged_message(slug: &str, store: Store, damage: &Damage) -> String {
    format!(
        "lane {} blocked: {} {damage}, so the lane's destination cannot be verified; nothing was sent; fix: {}",
        escape_text(slug),
        store.label(),
        damage.fix()
    )
}

/// The egress check backed by the user's consent store and pin file.
#[derive(Debug)]
pub struct StoreEgressCheck {
    consent: Option<ConsentStore>,
    pins: Option<PinStore>,
    project_root: String,
    warned: Mutex<HashSet<String>>,
    gsd_home: Option<std::path::PathBuf>,
    /// A read-only command's check (`doctor`): compares with what is recorded and never
    /// records a first-use pin.
    read_only: bool,
}

impl StoreEgressCheck {
    /// A check for `project_root` (canonical) with the stores of `gsd_home`; without a GSD home
    /// nothing is recorded, so nothing can be compared or pinned.
    ///
    /// Lanes whose capability is not first-party are also held to the third-party process rules
    /// ([`super::policy::check_plan`]) with their global and project install folders.
    pub fn new(gsd_home: Option<&std::path::Path>, project_root: String) -> StoreEgressCheck {
        StoreEgressCheck {
            consent: gsd_home.map(ConsentStore::new),
            pins: gsd_home.map(PinStore::new),
            project_root,
            warned: Mutex::new(HashSet::new()),
            gsd_home: gsd_home.map(std::path::Path::to_path_buf),
            read_only: false,
        }
    }

    /// The same check for a read-only command: a lane without a pin is compared with nothing
    /// and left unpinned (the first review run pins it), so `doctor` writes no trust state.
    pub fn read_only(gsd_home: Option<&std::path::Path>, project_root: String) -> StoreEgressCheck {
        StoreEgressCheck {
            read_only: true,
            ..StoreEgressCheck::new(gsd_home, project_root)
        }
    }

    /// The folders a third-party capability `id` may run a program from: its global install
    /// folder only. A project folder lies in the repository under review, from which nothing
    /// is ever run (trust.md §7.5).
    fn install_roots(&self, id: &str) -> Vec<std::path::PathBuf> {
        self.gsd_home
            .iter()
            .map(|home| home.join(".gsd").join("capabilities").join(id))
            .collect()
    }

    fn warn_once(&self, key: &str, message: &str) {
        let first = self
            .warned
            .lock()
            .map(|mut seen| seen.insert(key.to_owned()))
            .unwrap_or(true);
        if first {
            output::eprint_line(&format!("warning: {message}"));
        }
    }

    fn block(
        &self,
        plan: &LanePlan,
        binding: Binding,
        consented: &str,
        key: &str,
        current: &str,
    ) -> Refusal {
        let message = block_message(
            &plan.slug,
            &plan.capability_id,
            binding,
            consented,
            key,
            current,
        );
        // Not printed here: the refusal carries the message, and whoever reports the lane
        // (run, doctor, the review's selection) says it once.
        Refusal::new(Reason::EgressHostChanged, message)
    }

    fn damaged(&self, plan: &LanePlan, store: Store, damage: &Damage) -> Refusal {
        let message = damaged_message(&plan.slug, store, damage);
        Refusal::new(store.reason(), message)
    }

    /// Compares against the pin, or records the first-use pin.
    fn check_pin(&self, plan: &LanePlan, key: &str, current: &str) -> Result<(), Refusal> {
        let Some(pins) = &self.pins else {
            self.warn_once(
                &format!("no-home:{}", plan.capability_id),
                &format!(
                    "lane {}: no GSD home (GSD_HOME or HOME), so its destination {} cannot be pinned",
                    escape_text(&plan.slug),
                    escape_text(current)
                ),
            );
            return Ok(());
        };
        let pinned = match pins.get(&self.project_root, &plan.capability_id) {
            Err(damage) => return Err(self.damaged(plan, Store::Pins, &damage)),
            Ok(Some(pin)) => pin,
            Ok(None) if self.read_only => return Ok(()),
            Ok(None) => {
                let lock = self
                    .consent
                    .as_ref()
                    .map(ConsentStore::lock_path)
                    .unwrap_or_default();
                let pin = Pin {
                    project_root: self.project_root.clone(),
                    id: plan.capability_id.clone(),
                    host: normalize_host(current),
                    pinned_at: iso_now(),
                    source: PinSource::FirstUse.as_str().to_owned(),
                };
                match pins.set(&lock, pin, true) {
                    Ok(pin) => pin,
                    Err(StoreError::Unreadable { path, why }) => {
                        return Err(self.damaged(plan, Store::Pins, &Damage { path, why }));
                    }
                    Err(err) => {
                        self.warn_once(
                            &format!("pin-failed:{}", plan.capability_id),
                            &format!(
                                "lane {}: could not pin its destination {} ({err})",
                                escape_text(&plan.slug),
                                escape_text(current)
                            ),
                        );
                        return Ok(());
                    }
                }
            }
        };
        // A pin binds the origin (scheme, host, port): a corrected path on the same server
        // (`…:11434/v1` → `…:11434`) is not an egress change.
        if crate::config::origin_of(&pinned.host) == crate::config::origin_of(current) {
            Ok(())
        } else {
            Err(self.block(plan, Binding::Pin, &pinned.host, key, current))
        }
    }
}

impl EgressCheck for StoreEgressCheck {
    fn check(&self, plan: &LanePlan) -> Result<(), Refusal> {
        if !crate::registry::Registry::is_first_party(&plan.capability_id) {
            super::policy::check_plan(plan, &self.install_roots(&plan.capability_id))?;
        }
        let Some(http) = plan.http() else {
            // Spawn lanes have no destination concept (E10).
            return Ok(());
        };
        let current = http.host.as_str();
        let key = http.host_config_key.as_str();
        let record = match &self.consent {
            None => None,
            Some(store) => {
                let records = store
                    .load()
                    .map_err(|damage| self.damaged(plan, Store::Consent, &damage))?;
                if records.has_damaged_entry_for(&self.project_root, &plan.capability_id) {
                    let damage = Damage {
                        path: store.path(),
                        why: format!(
                            "the record of {} for this project is invalid",
                            escape_text(&plan.capability_id)
                        ),
                    };
                    return Err(self.damaged(plan, Store::Consent, &damage));
                }
                records
                    .get(&self.project_root, &plan.capability_id)
                    .cloned()
            }
        };
        let outcome = match record
            .as_ref()
            .and_then(|r| r.reviewer_host().map(str::to_owned))
        {
            Some(consented) => {
                match check_egress_host(Some(&Value::String(consented.clone())), current) {
                    EgressDecision::Allow => Ok(()),
                    EgressDecision::Block => {
                        Err(self.block(plan, Binding::Consent, &consented, key, current))
                    }
                }
            }
            None => {
                if record.is_some() {
                    self.warn_once(
                        &format!("legacy:{}", plan.capability_id),
                        &format!(
                            "lane {}: its consent record does not pin a destination; it is pinned to {} on first use",
                            escape_text(&plan.slug),
                            escape_text(current)
                        ),
                    );
                }
                self.check_pin(plan, key, current)
            }
        };
        if outcome.is_ok() && current.starts_with("http://") && !is_local_destination(current) {
            self.warn_once(
                &format!("plain-http:{}", plan.capability_id),
                &format!(
                    "lane {} sends your plans unencrypted over plain http to a remote host ({})",
                    escape_text(&plan.slug),
                    escape_text(current)
                ),
            );
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decide(consented: &str, current: &str) -> EgressDecision {
        check_egress_host(Some(&json!(consented)), current)
    }

    #[test]
    fn e03_allow_pairs_of_the_consequences_table() {
        for (consented, current) in [
            ("http://localhost:11434", "http://localhost:11434/"),
            ("http://localhost:11434", "HTTP://LocalHost:11434"),
            ("http://a.com:80", "http://a.com"),
            ("https://a.com", "https://a.com:443/"),
            ("http://localhost:11434", "http://u:p@localhost:11434?x=1#f"),
        ] {
            assert_eq!(
                decide(consented, current),
                EgressDecision::Allow,
                "{current}"
            );
        }
    }

    #[test]
    fn e05_e06_e07_block_pairs_of_the_consequences_table() {
        for (consented, current) in [
            ("http://localhost:11434", "https://evil.example"),
            (
                "http://localhost:11434",
                "http://localhost:11434@evil.example",
            ),
            ("http://localhost:11434", "http://127.0.0.1:11434"),
            ("http://localhost:11434", "https://localhost:11434"),
            ("http://localhost:11434", "http://localhost:11435"),
            ("http://a.com", "http://a.com/v1"),
            ("http://a.com", "http://a.com."),
            ("http://localhost:11434", "localhost:11434"),
        ] {
            assert_eq!(
                decide(consented, current),
                EgressDecision::Block,
                "{current}"
            );
        }
    }

    #[test]
    fn e09_absent_empty_or_mistyped_consent_allows() {
        assert_eq!(check_egress_host(None, "https://x"), EgressDecision::Allow);
        assert_eq!(
            check_egress_host(Some(&json!("")), "https://x"),
            EgressDecision::Allow
        );
        assert_eq!(
            check_egress_host(Some(&json!(42)), "https://x"),
            EgressDecision::Allow
        );
        assert_eq!(
            check_egress_host(Some(&json!({"h": 1})), "https://x"),
            EgressDecision::Allow
        );
    }

    #[test]
    fn block_message_names_everything_and_is_inert() {
        let message = block_message(
            "ollama",
            "ollama",
            Binding::Consent,
            "http://localhost:11434",
            "review.ollama_host",
            "https://evil.example\u{1b}[2K",
        );
        for part in [
            "ollama",
            "http://localhost:11434 (local)",
            "review.ollama_host",
            "https://evil.example\\u{1b}[2K (remote)",
            "nothing was sent",
            "re-consent",
            "stays off",
            "gsd-lane trust rebind-host ollama",
        ] {
            assert!(message.contains(part), "{part} missing from {message}");
        }
        assert!(!message.chars().any(char::is_control));
    }
}
