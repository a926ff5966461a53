//! Deep merge of the workstream overlay over the root config (invocation.md §3.1).

use serde_json::{Map, Value};

/// Keys skipped at every level of an overlay, as in the reference's prototype-pollution guard.
const IGNORED_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// Merges `overlay` into `base`: objects merge key by key, arrays and scalars replace.
///
/// Keys named `__proto__`, `constructor` or `prototype` in the overlay are ignored at every depth.
pub(super) fn deep_merge(base: &mut Map<String, Value>, overlay: Map<String, Value>) {
    for (key, value) in overlay {
        if !IGNORED_KEYS.contains(&key.as_str()) {
            merge_member(base, key, value);
        }
    }
}

/// Merges one overlay member into `base`.
fn merge_member(base: &mut Map<String, Value>, key: String, value: Value) {
    match value {
        Value::Object(inner) => merge_object_member(base, key, inner),
        other => {
            base.insert(key, other);
        }
    }
}

/// Merges an overlay object into the member `key`, replacing any non-object already there.
fn merge_object_member(base: &mut Map<String, Value>, key: String, inner: Map<String, Value>) {
    let slot = base.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(target) = slot {
        deep_merge(target, inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(base: Value, overlay: Value) -> Value {
        let mut b = base.as_object().cloned().unwrap_or_default();
        let o = overlay.as_object().cloned().unwrap_or_default();
        deep_merge(&mut b, o);
        Value::Object(b)
    }

    #[test]
    fn objects_merge_recursively() {
        let out = merged(
            json!({"review": {"models": {"gemini": "g", "claude": "c"}}, "x": 1}),
            json!({"review": {"models": {"claude": "C2"}}}),
        );
        assert_eq!(
            out,
            json!({"review": {"models": {"gemini": "g", "claude": "C2"}}, "x": 1})
        );
    }

    #[test]
    fn arrays_replace() {
        let out = merged(json!({"a": [1, 2, 3]}), json!({"a": [9]}));
        assert_eq!(out, json!({"a": [9]}));
    }

    #[test]
    fn scalars_replace_objects_and_objects_replace_scalars() {
        let out = merged(
            json!({"a": {"b": 1}, "c": 5}),
            json!({"a": "s", "c": {"d": 2}}),
        );
        assert_eq!(out, json!({"a": "s", "c": {"d": 2}}));
    }

    #[test]
    fn null_replaces() {
        let out = merged(json!({"a": {"b": 1}}), json!({"a": null}));
        assert_eq!(out, json!({"a": null}));
    }

    #[test]
    fn prototype_keys_are_ignored_at_every_depth() {
        let out = merged(
            json!({"a": {"b": 1}}),
            json!({"__proto__": {"x": 1}, "constructor": 2, "prototype": 3,
                   "a": {"__proto__": {"y": 1}, "c": 2}, "n": {"constructor": 1, "k": 0}}),
        );
        assert_eq!(out, json!({"a": {"b": 1, "c": 2}, "n": {"k": 0}}));
    }

    #[test]
    fn existing_key_order_is_kept() {
        let out = merged(
            json!({"first": 1, "second": 2}),
            json!({"first": 3, "third": 4}),
        );
        let keys: Vec<&String> = out
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["first", "second", "third"]);
    }
}
