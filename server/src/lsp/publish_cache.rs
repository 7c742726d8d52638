//! The JSON of each published diagnostic, kept from one publish of a
//! document to the next and reused for the diagnostics that did not change.
//!
//! Why: a 5,000-line file with many mistakes publishes over a thousand
//! diagnostics (hundreds of KB of JSON) on every keystroke, and a
//! one-character edit changes the text or the position of only a few of
//! them. Converting every diagnostic to its LSP form and serializing it
//! again (UTF-16 ranges, messages copied and escaped, links copied) was the
//! part of a keystroke that grew with the number of diagnostics.
//!
//! How: each diagnostic is looked up by what its JSON is made of: its code,
//! severity, message, label, notes and related messages, and the LSP ranges
//! of its span and related spans (a diagnostic that moved is serialized
//! again, since its range is in its JSON). The JSON is kept without `data`,
//! whose version changes with every edit: the version is written after the
//! kept bytes on each publish, so a published diagnostic is byte for byte
//! what serializing it whole gives (`encoded_items_equal_serde` below).
//! Only one document's JSON is kept, the one published last (the one being
//! typed into), so the memory is bounded by one publish.

use std::io::Write;

use mapwright_grammar::diagnostic::{Severity, Text};
use mapwright_grammar::fast_hash::{map_with_capacity, FastMap};
use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::{Diagnostic, LineIndex};
use tower_lsp::lsp_types::{Range, Url};

use super::convert::{self, DiagnosticFields};

/// The kept JSON of the document published last (see the module doc).
#[derive(Default)]
pub struct PublishCache {
    doc: Option<DocJson>,
    last_len: usize,
}

/// One document's diagnostics as JSON, and what that JSON depends on
/// besides each diagnostic.
struct DocJson {
    uri: Url,
    enc: Encoding,
    fields: DiagnosticFields,
    /// Each entry (`None` once taken over by the next publish) and the
    /// one added before it with the same hash.
    entries: Vec<(Option<Entry>, Option<usize>)>,
    /// The entry with each [`Key::hash_of`] added last; the others with
    /// that hash are chained from it (no allocation per entry).
    /// (Keyed by a hash already: the unkeyed hasher, not SipHash, which
    /// was a measurable part of a publish of 1,500 diagnostics.)
    by_hash: FastMap<u64, usize>,
}

/// One diagnostic's JSON and what it was made from.
struct Entry {
    key: Key,
    /// The diagnostic's JSON object without `data` and without its
    /// closing brace.
    open: Box<[u8]>,
}

/// What a diagnostic's JSON (less `data`) depends on, for a given document,
/// encoding and set of fields.
#[derive(Debug, PartialEq)]
struct Key {
    code: &'static str,
    severity: Severity,
    range: Range,
    message: String,
    // (Borrowed where the diagnostic's are: most are fixed texts.)
    label: Option<Text>,
    notes: Vec<Text>,
    related: Vec<(Range, Text)>,
}

impl Key {
    fn of(d: &Diagnostic, range: Range, related: &[Range]) -> Key {
        Key {
            code: d.code,
            severity: d.severity,
            range,
            message: d.message.clone(),
            label: d.label.clone(),
            notes: d.notes.clone(),
            related: related
                .iter()
                .zip(&d.related)
                .map(|(r, rel)| (*r, rel.message.clone()))
                .collect(),
        }
    }

    /// True if `d` at `range` (related spans at `related`) has this key.
    fn matches(&self, d: &Diagnostic, range: Range, related: &[Range]) -> bool {
        self.code == d.code
            && self.severity == d.severity
            && self.range == range
            && self.message == d.message
            && self.label == d.label
            && self.notes == d.notes
            && self.related.len() == d.related.len()
            && self
                .related
                .iter()
                .zip(related.iter().zip(&d.related))
                .all(|((kr, km), (r, rel))| kr == r && *km == rel.message)
    }

    /// A hash of the code and the ranges only: cheap to compute, and
    /// diagnostics with the same code at the same place are rare, so the
    /// messages are compared only for the few that share it.
    fn hash_of(code: &str, range: Range, related: &[Range]) -> u64 {
        // FNV-1a over the code's bytes, then a multiply-rotate step per
        // number (no need for a keyed hash: the input is the server's own).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in code.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        let mut mix = |v: u32| {
            h = (h.rotate_left(5) ^ u64::from(v)).wrapping_mul(0x517c_c1b7_2722_0a95);
        };
        for r in std::iter::once(&range).chain(related) {
            mix(r.start.line);
            mix(r.start.character);
            mix(r.end.line);
            mix(r.end.character);
        }
        h
    }
}

impl DocJson {
    fn new(uri: &Url, enc: Encoding, fields: DiagnosticFields, capacity: usize) -> DocJson {
        DocJson {
            uri: uri.clone(),
            enc,
            fields,
            entries: Vec::with_capacity(capacity),
            by_hash: map_with_capacity(capacity),
        }
    }

    fn find(&self, hash: u64, d: &Diagnostic, range: Range, related: &[Range]) -> Option<usize> {
        // Taken entries stay in their chain (as `None`), so it is walked
        // through `next` kept beside them.
        let mut at = self.by_hash.get(&hash).copied();
        while let Some(i) = at {
            let (entry, next) = &self.entries[i];
            if entry
                .as_ref()
                .is_some_and(|e| e.key.matches(d, range, related))
            {
                return Some(i);
            }
            at = *next;
        }
        None
    }

    fn push(&mut self, hash: u64, entry: Entry) -> usize {
        let i = self.entries.len();
        let next = self.by_hash.insert(hash, i);
        self.entries.push((Some(entry), next));
        i
    }
}

/// How many diagnostics of a publish reused their JSON, and how many were
/// serialized again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reuse {
    pub reused: usize,
    pub serialized: usize,
}

impl PublishCache {
    /// Writes `diags` of document `uri` at `version` to `out` as the items
    /// of a JSON array (comma-separated, no brackets), exactly as
    /// [`convert::diagnostics`] followed by serializing each would, reusing
    /// the JSON of the previous publish of `uri` where a diagnostic did not
    /// change.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        uri: &Url,
        version: i32,
        index: &LineIndex,
        diags: &[&Diagnostic],
        enc: Encoding,
        fields: DiagnosticFields,
        out: &mut Vec<u8>,
    ) -> Reuse {
        let mut old = self
            .doc
            .take()
            .filter(|d| d.uri == *uri && d.enc == enc && d.fields == fields);
        let mut new = DocJson::new(uri, enc, fields, diags.len());
        let mut reuse = Reuse::default();
        let mut related = Vec::new();
        let out_start = out.len();
        for (n, d) in diags.iter().enumerate() {
            let range = convert::range(index, d.span, enc);
            related.clear();
            related.extend(d.related.iter().map(|r| convert::range(index, r.span, enc)));
            let hash = Key::hash_of(d.code, range, &related);
            let at = match new.find(hash, d, range, &related) {
                Some(i) => {
                    reuse.reused += 1;
                    i
                }
                None => {
                    let taken = old.as_mut().and_then(|o| {
                        let i = o.find(hash, d, range, &related)?;
                        o.entries[i].0.take()
                    });
                    let entry = match taken {
                        Some(e) => {
                            reuse.reused += 1;
                            e
                        }
                        None => {
                            reuse.serialized += 1;
                            Entry {
                                key: Key::of(d, range, &related),
                                open: serialize_open(uri, index, d, enc, fields),
                            }
                        }
                    };
                    new.push(hash, entry)
                }
            };
            if n > 0 {
                out.push(b',');
            }
            if let Some(e) = &new.entries[at].0 {
                out.extend_from_slice(&e.open);
            }
            if fields.data {
                // The `data` of `convert::DiagnosticData::to_json` without
                // fixes, as serde_json writes it.
                let _ = write!(out, ",\"data\":{{\"version\":{version}}}}}");
            } else {
                out.push(b'}');
            }
        }
        self.doc = Some(new);
        self.last_len = out.len() - out_start;
        reuse
    }

    /// The bytes the last publish wrote (a size hint for the next one).
    pub fn last_len(&self) -> usize {
        self.last_len
    }

    /// Forgets `uri`'s JSON (the document was closed).
    pub fn forget(&mut self, uri: &Url) {
        if self.doc.as_ref().is_some_and(|d| d.uri == *uri) {
            self.doc = None;
        }
    }
}

/// `d`'s JSON without `data` and without the closing brace.
fn serialize_open(
    uri: &Url,
    index: &LineIndex,
    d: &Diagnostic,
    enc: Encoding,
    fields: DiagnosticFields,
) -> Box<[u8]> {
    let no_data = DiagnosticFields {
        data: false,
        ..fields
    };
    let lsp = convert::diagnostic(uri, 0, index, d, enc, no_data, false);
    // (Serializing an LSP diagnostic cannot fail: no map has non-string
    // keys.)
    let mut json = serde_json::to_vec(&lsp).unwrap_or_else(|_| b"{}".to_vec());
    // An object always ends with its closing brace.
    json.pop();
    json.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_grammar::diagnostic::Related;
    use mapwright_grammar::Span;

    /// The publish's items as serializing the converted diagnostics gives
    /// them.
    fn by_serde(
        uri: &Url,
        version: i32,
        index: &LineIndex,
        diags: &[&Diagnostic],
        fields: DiagnosticFields,
    ) -> Vec<u8> {
        let owned: Vec<Diagnostic> = diags.iter().map(|d| (*d).clone()).collect();
        let lsp = convert::diagnostics(uri, version, index, &owned, Encoding::Utf16, fields, false);
        let mut all = serde_json::to_vec(&lsp).unwrap();
        // Without the brackets.
        all.pop();
        all.remove(0);
        all
    }

    fn sample(text: &str) -> Vec<Diagnostic> {
        let at = |s: &str| {
            let i = text.find(s).unwrap();
            Span::new(i, i + s.len())
        };
        let mut a = Diagnostic::new("W0214", Severity::Warning, at("x"), "unused variable `x`");
        a.notes.push("help: remove it \"or\" use it".into());
        let mut b = Diagnostic::new("E0201", Severity::Error, at("é"), "undefined name `é`");
        b.label = Some("not defined".into());
        b.related.push(Related {
            span: at("x"),
            message: "a similar name is defined here".into(),
        });
        let c = b.clone();
        vec![a, b, c]
    }

    #[test]
    fn encoded_items_equal_serde_across_edits_fields_and_versions() {
        let uri = Url::parse("file:///t.mapper").unwrap();
        let mut cache = PublishCache::default();
        let fields_all = DiagnosticFields::ALL;
        let fields_none = DiagnosticFields::default();
        let texts = ["x = 1;\n😀é;\n", "x = 1;\n😀 é;\n", "\nx = 1;\n😀 é;\n"];
        for (v, text) in texts.iter().enumerate() {
            let index = LineIndex::new(text);
            let diags = sample(text);
            let refs: Vec<&Diagnostic> = diags.iter().collect();
            for fields in [fields_all, fields_none, fields_all] {
                let mut out = Vec::new();
                cache.encode(
                    &uri,
                    v as i32,
                    &index,
                    &refs,
                    Encoding::Utf16,
                    fields,
                    &mut out,
                );
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    String::from_utf8(by_serde(&uri, v as i32, &index, &refs, fields)).unwrap()
                );
            }
        }
    }

    #[test]
    fn unchanged_diagnostics_are_reused_and_moved_ones_serialized_again() {
        let uri = Url::parse("file:///t.mapper").unwrap();
        let mut cache = PublishCache::default();
        let mut publish = |text: &str, version: i32| {
            let index = LineIndex::new(text);
            let diags = sample(text);
            let refs: Vec<&Diagnostic> = diags.iter().collect();
            let mut out = Vec::new();
            cache.encode(
                &uri,
                version,
                &index,
                &refs,
                Encoding::Utf16,
                DiagnosticFields::ALL,
                &mut out,
            )
        };
        // The two identical diagnostics share one JSON.
        assert_eq!(
            publish("x = 1;\n😀é;\n", 1),
            Reuse {
                reused: 1,
                serialized: 2
            }
        );
        assert_eq!(
            publish("x = 1;\n😀é;\n", 2),
            Reuse {
                reused: 3,
                serialized: 0
            }
        );
        // `é` moved one column: the two E0201 again, and `x` is the same.
        assert_eq!(
            publish("x = 1;\n😀 é;\n", 3),
            Reuse {
                reused: 2,
                serialized: 1
            }
        );
        // Every range moved down a line.
        assert_eq!(
            publish("\nx = 1;\n😀 é;\n", 4),
            Reuse {
                reused: 1,
                serialized: 2
            }
        );
        // Another document starts afresh.
        cache.forget(&uri);
        assert!(cache.doc.is_none());
    }
}
