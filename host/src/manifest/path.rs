//! Field paths inside a manifest: `reviewer.invoke.args[1]`, `config["review.models.x"].type`.

use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// A path from the manifest root to a field.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The root of the manifest (renders as an empty string).
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// Returns this path extended by an object member.
    pub fn key(&self, key: &str) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        FieldPath(segments)
    }

    /// Returns this path extended by an array element.
    pub fn index(&self, index: usize) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        FieldPath(segments)
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// Parses the rendered form back (`a.b[2]`, `config["x.y"].type`); `None` if malformed.
    pub fn parse(text: &str) -> Option<FieldPath> {
        let mut segments = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("[\"") {
                let end = after.find("\"]")?;
                segments.push(Segment::Key(after[..end].to_owned()));
                rest = &after[end + 2..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']')?;
                segments.push(Segment::Index(after[..end].parse().ok()?));
                rest = &after[end + 1..];
            } else {
                let body = rest.strip_prefix('.').unwrap_or(rest);
                let end = body.find(['.', '[']).unwrap_or(body.len());
                if end == 0 {
                    return None;
                }
                segments.push(Segment::Key(body[..end].to_owned()));
                rest = &body[end..];
            }
        }
        Some(FieldPath(segments))
    }
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if is_plain_key(key) => {
                    if position > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => write!(f, "[{}]", serde_json::Value::from(key.as_str()))?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_dotted_indexed_and_quoted_keys() {
        let path = FieldPath::root()
            .key("reviewer")
            .key("invoke")
            .key("args")
            .index(1);
        assert_eq!(path.to_string(), "reviewer.invoke.args[1]");
        let config = FieldPath::root()
            .key("config")
            .key("review.models.x")
            .key("type");
        assert_eq!(config.to_string(), "config[\"review.models.x\"].type");
    }

    #[test]
    fn parse_round_trips() {
        for text in [
            "reviewer.invoke.args[1]",
            "config[\"review.models.x\"].type",
            "id",
        ] {
            let parsed = FieldPath::parse(text).expect("parses");
            assert_eq!(parsed.to_string(), text);
        }
    }
}
