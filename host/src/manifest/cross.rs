//! Cross-capability rules over a merged set (manifest.md §4, §5.5).

use std::collections::{BTreeMap, HashMap};

use super::central;
use super::diagnostic::{Code, Diagnostic};
use super::facts::CapabilityFacts;
use super::path::FieldPath;

/// A cross-capability error, attached to the member (index into the checked slice) that
/// carries it: for a collision, the last claimant in merge order (the newcomer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossFinding {
    /// Index of the member the error belongs to.
    pub member: usize,
    /// The error.
    pub diagnostic: Diagnostic,
}

/// Checks every cross-capability rule over `members`, in merge order.
pub fn check(members: &[CapabilityFacts]) -> Vec<CrossFinding> {
    let mut findings = Vec::new();
    check_ids(members, &mut findings);
    check_lane_keys(members, &mut findings);
    check_config_keys(members, &mut findings);
    check_requires(members, &mut findings);
    for finding in &mut findings {
        if let Some(member) = members.get(finding.member) {
            finding.diagnostic.capability.clone_from(&member.id);
        }
    }
    findings
}

fn finding(member: usize, code: Code, field: FieldPath, message: String) -> CrossFinding {
    CrossFinding {
        member,
        diagnostic: Diagnostic::error(code, field, message),
    }
}

fn check_ids(members: &[CapabilityFacts], findings: &mut Vec<CrossFinding>) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (index, member) in members.iter().enumerate() {
        if first.insert(member.id.as_str(), index).is_some() {
            findings.push(finding(
                index,
                Code::XIdDup,
                FieldPath::root().key("id"),
                format!(
                    "id \"{}\" is already registered by another capability",
                    member.id
                ),
            ));
        }
    }
}

/// The three lane namespaces: (code, label, field, keys of a member).
type KeysOf = fn(&CapabilityFacts) -> Vec<String>;

const LANE_NAMESPACES: [(Code, &str, &str, KeysOf); 3] = [
    (Code::XSlugDup, "slug", "slug", |m| {
        m.lane.iter().filter_map(|l| l.slug.clone()).collect()
    }),
    (Code::XFlagDup, "flag", "flags", |m| {
        let mut flags: Vec<String> = m.lane.iter().flat_map(|l| l.flags.clone()).collect();
        flags.dedup();
        flags
    }),
    (Code::XSectionDup, "reviewsSection", "reviewsSection", |m| {
        m.lane.iter().filter_map(|l| l.section.clone()).collect()
    }),
];

fn check_lane_keys(members: &[CapabilityFacts], findings: &mut Vec<CrossFinding>) {
    for (code, label, field, keys_of) in LANE_NAMESPACES {
        let mut claimants: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (index, member) in members.iter().enumerate() {
            for key in keys_of(member) {
                let entry = claimants.entry(key).or_default();
                if !entry.contains(&index) {
                    entry.push(index);
                }
            }
        }
        for (key, owners) in claimants {
            let mut ids: Vec<&str> = owners
                .iter()
                .filter_map(|i| members.get(*i))
                .map(|m| m.id.as_str())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            // Members sharing one id are reported once, by X-ID-DUP.
            let (Some(last), true) = (owners.last(), ids.len() > 1) else {
                continue;
            };
            let names: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
            findings.push(finding(
                *last,
                code,
                FieldPath::root().key("reviewer").key(field),
                format!(
                    "reviewer {label} \"{key}\" is claimed by more than one capability: {}",
                    names.join(", ")
                ),
            ));
        }
    }
}

fn check_config_keys(members: &[CapabilityFacts], findings: &mut Vec<CrossFinding>) {
    let mut owner: HashMap<&str, &str> = HashMap::new();
    for (index, member) in members.iter().enumerate() {
        for key in &member.config_keys {
            let field = FieldPath::root().key("config").key(key);
            if central::is_exact(key) {
                findings.push(finding(
                    index,
                    Code::XConfigCentral,
                    field,
                    format!("config key \"{key}\" is reserved by the central configuration schema"),
                ));
            } else if central::matches_pattern(key) {
                findings.push(finding(
                    index,
                    Code::XConfigPattern,
                    field,
                    format!(
                        "config key \"{key}\" falls under a central schema pattern (such a slice would never take effect)"
                    ),
                ));
            } else if let Some(previous) = owner.get(key.as_str()).filter(|id| **id != member.id) {
                findings.push(finding(
                    index,
                    Code::XConfigOwned,
                    field,
                    format!("config key \"{key}\" already belongs to \"{previous}\""),
                ));
            } else {
                owner.entry(key.as_str()).or_insert(member.id.as_str());
            }
        }
    }
}

fn check_requires(members: &[CapabilityFacts], findings: &mut Vec<CrossFinding>) {
    let by_id: HashMap<&str, usize> = members
        .iter()
        .enumerate()
        .rev()
        .map(|(index, member)| (member.id.as_str(), index))
        .collect();
    for (index, member) in members.iter().enumerate() {
        for (position, required) in member.requires.iter().enumerate() {
            let field = FieldPath::root().key("requires").index(position);
            match by_id.get(required.as_str()).and_then(|i| members.get(*i)) {
                None => findings.push(finding(
                    index,
                    Code::XRequiresMissing,
                    field,
                    format!("requires: depends on unknown capability \"{required}\""),
                )),
                Some(target) => {
                    if let (Some(own), Some(theirs)) = (member.tier, target.tier) {
                        if own < theirs {
                            findings.push(finding(
                                index,
                                Code::XTier,
                                field,
                                format!(
                                    "tier order violation: \"{}\" may not require \"{}\", which is in a higher tier",
                                    member.id, target.id
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
    for cycle in find_cycles(members, &by_id) {
        let Some(last) = cycle.iter().max().copied() else {
            continue;
        };
        let mut names: Vec<&str> = cycle
            .iter()
            .filter_map(|i| members.get(*i))
            .map(|m| m.id.as_str())
            .collect();
        if let Some(first) = names.first().copied() {
            names.push(first);
        }
        findings.push(finding(
            last,
            Code::XRequiresCycle,
            FieldPath::root().key("requires"),
            format!("requires cycle: {}", names.join(" → ")),
        ));
    }
}

/// Finds each dependency cycle once (iterative depth-first search, no recursion).
fn find_cycles(members: &[CapabilityFacts], by_id: &HashMap<&str, usize>) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let edges: Vec<Vec<usize>> = members
        .iter()
        .map(|member| {
            member
                .requires
                .iter()
                .filter_map(|r| by_id.get(r.as_str()).copied())
                .collect()
        })
        .collect();
    let mut marks = vec![Mark::New; members.len()];
    let mut cycles = Vec::new();
    for start in 0..members.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // Stack of (node, next edge to follow); `path` mirrors the active nodes.
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::Active;
        while let Some((node, edge)) = stack.last().copied() {
            match edges[node].get(edge).copied() {
                Some(next) => {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match marks[next] {
                        Mark::New => {
                            marks[next] = Mark::Active;
                            stack.push((next, 0));
                        }
                        Mark::Active => {
                            let from = stack.iter().position(|(n, _)| *n == next).unwrap_or(0);
                            cycles.push(stack[from..].iter().map(|(n, _)| *n).collect());
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    marks[node] = Mark::Done;
                    stack.pop();
                }
            }
        }
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(value: serde_json::Value) -> CapabilityFacts {
        CapabilityFacts::of(&value)
    }

    #[test]
    fn collisions_name_every_claimant_sorted_on_the_newcomer() {
        let members = vec![
            facts(
                json!({"id": "cap-b", "reviewer": {"slug": "x", "flags": ["--shared"], "reviewsSection": "S1"}}),
            ),
            facts(
                json!({"id": "cap-a", "reviewer": {"slug": "y", "flags": ["--shared"], "reviewsSection": "S2"}}),
            ),
        ];
        let found = check(&members);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].member, 1);
        assert_eq!(found[0].diagnostic.code, Code::XFlagDup);
        assert!(found[0].diagnostic.message.contains("\"cap-a\", \"cap-b\""));
    }

    #[test]
    fn cycles_and_tiers() {
        let members = vec![
            facts(json!({"id": "a", "tier": "full", "requires": ["b"]})),
            facts(json!({"id": "b", "tier": "full", "requires": ["a"]})),
            facts(json!({"id": "c", "tier": "core", "requires": ["a", "nope"]})),
        ];
        let codes: Vec<Code> = check(&members).iter().map(|f| f.diagnostic.code).collect();
        assert!(codes.contains(&Code::XRequiresCycle));
        assert!(codes.contains(&Code::XTier));
        assert!(codes.contains(&Code::XRequiresMissing));
        assert_eq!(
            codes.iter().filter(|c| **c == Code::XRequiresCycle).count(),
            1
        );
    }

    #[test]
    fn config_keys() {
        let members = vec![
            facts(json!({"id": "a", "config": {"review.models.a": {}}})),
            facts(
                json!({"id": "b", "config": {"review.models.a": {}, "review.default_reviewers": {}, "review.reviewer_instances.x.cli": {}}}),
            ),
        ];
        let codes: Vec<Code> = check(&members).iter().map(|f| f.diagnostic.code).collect();
        assert_eq!(
            codes,
            vec![
                Code::XConfigOwned,
                Code::XConfigCentral,
                Code::XConfigPattern
            ]
        );
    }
}

/// The merged set so far, indexed so that one candidate is checked in time proportional to
/// its own keys, not to the size of the set.
#[derive(Debug, Clone, Default)]
pub struct MergedIndex {
    members: Vec<CapabilityFacts>,
    by_key: HashMap<String, Vec<usize>>,
}

impl MergedIndex {
    /// Index keys of a member: its id, lane keys and config keys, namespaced.
    fn keys(facts: &CapabilityFacts) -> Vec<String> {
        let mut keys = vec![format!("id:{}", facts.id)];
        if let Some(lane) = &facts.lane {
            keys.extend(lane.slug.iter().map(|s| format!("slug:{s}")));
            keys.extend(lane.flags.iter().map(|f| format!("flag:{f}")));
            keys.extend(lane.section.iter().map(|s| format!("section:{s}")));
        }
        keys.extend(facts.config_keys.iter().map(|k| format!("config:{k}")));
        keys
    }

    /// Adds an accepted member.
    pub fn add(&mut self, facts: CapabilityFacts) {
        let index = self.members.len();
        for key in MergedIndex::keys(&facts) {
            let slot = self.by_key.entry(key).or_default();
            if slot.last() != Some(&index) {
                slot.push(index);
            }
        }
        self.members.push(facts);
    }

    /// Cross-capability errors the candidate would cause if added (the same rules as
    /// [`check`], run over the candidate and the members it shares a key with).
    pub fn check_candidate(&self, candidate: &CapabilityFacts) -> Vec<Diagnostic> {
        let mut related: Vec<usize> = MergedIndex::keys(candidate)
            .into_iter()
            .chain(candidate.requires.iter().map(|r| format!("id:{r}")))
            .filter_map(|key| self.by_key.get(&key))
            .flatten()
            .copied()
            .collect();
        related.sort_unstable();
        related.dedup();
        let mut subset: Vec<CapabilityFacts> = related
            .iter()
            .filter_map(|i| self.members.get(*i).cloned())
            .collect();
        subset.push(candidate.clone());
        let last = subset.len() - 1;
        check(&subset)
            .into_iter()
            .filter(|finding| finding.member == last)
            .map(|finding| finding.diagnostic)
            .collect()
    }
}
