//! Pinned statements in the optimizer (`# mapwright: keep`, see
//! [`mapwright_grammar::pin`]).
//!
//! A pinned statement stays in every candidate exactly as written, mark
//! included, and keeps deciding what it decides in the mapper as written:
//! - the search space leaves out the parameters it decides
//!   ([`Pins::restrict`]), so no sampled or searched spec overrides it;
//! - the in-place writer never edits or removes it (it checks
//!   [`mapwright_grammar::pin`] itself);
//! - every proposal, whatever proposer made it (an LLM, a repair), is held
//!   against [`Pins::violation`] before it runs, and one that changes a
//!   pinned statement is recorded as rejected, never applied.
//!
//! "What it decides" is read from the mapping resolution: the decisions of
//! the mapper as written whose rule is the pinned statement. A decision only
//! counts where its context is unchanged (a memory for a task still on the
//! same processor kind, a layout in the same memory), since moving a task
//! elsewhere is outside what the statement says.

use mapwright_grammar::parse;
use mapwright_grammar::pin::pinned_statements;
use mapwright_grammar::Span;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::{MemKind, ProcKind};

/// One decision a pinned statement makes in the mapper as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinnedKey {
    /// The processor kind of a task.
    Proc(String),
    /// The memory of a region argument of a task on a processor kind.
    Memory(String, String, ProcKind),
    /// The layout of a region argument of a task in a memory kind.
    Layout(String, String, MemKind),
    /// Where the points of a launch run.
    Map(String),
}

/// A statement pinned by `# mapwright: keep`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The statement as written (from its first token to its `;` or `}`).
    pub text: String,
    /// Its line in the mapper as written (1-based).
    pub line: usize,
    pub keys: Vec<PinnedKey>,
}

/// The pinned statements of the mapper as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    pub pins: Vec<Pin>,
}

/// The pinned statements of `text` as (span, statement text).
fn pinned_in(text: &str) -> Vec<(Span, String)> {
    let parsed = parse(text);
    pinned_statements(&parsed.program, &parsed.comments, text)
        .into_iter()
        .map(|s| (s, s.text(text).to_string()))
        .collect()
}

/// Every decision of `d` with the span of the rule that made it.
fn decided(d: &Decisions) -> Vec<(PinnedKey, Option<Span>)> {
    let mut out = Vec::new();
    for t in &d.tasks {
        out.push((PinnedKey::Proc(t.task.clone()), t.proc_rule));
        out.push((PinnedKey::Map(t.task.clone()), t.map_rule));
        for r in &t.regions {
            out.push((
                PinnedKey::Memory(t.task.clone(), r.region.clone(), t.proc_kind),
                r.memory_rule,
            ));
            out.push((
                PinnedKey::Layout(t.task.clone(), r.region.clone(), r.memory),
                r.layout_rule,
            ));
            for l in &r.launches {
                out.push((
                    PinnedKey::Memory(t.task.clone(), l.region.clone(), t.proc_kind),
                    l.memory_rule,
                ));
                out.push((
                    PinnedKey::Layout(t.task.clone(), l.region.clone(), l.memory),
                    l.layout_rule,
                ));
            }
        }
    }
    out
}

impl Pins {
    /// The pins of `base` (the mapper as written) with what each decides
    /// there (`decisions`: `base` resolved; empty when it does not compile).
    pub fn of(base: &str, decisions: &Decisions) -> Pins {
        let decided = decided(decisions);
        let pins = pinned_in(base)
            .into_iter()
            .map(|(span, text)| {
                let mut keys: Vec<PinnedKey> = decided
                    .iter()
                    .filter(|(_, rule)| rule.is_some_and(|r| r.start() == span.start()))
                    .map(|(k, _)| k.clone())
                    .collect();
                keys.dedup();
                Pin {
                    text,
                    line: base[..span.start()].matches('\n').count() + 1,
                    keys,
                }
            })
            .collect();
        Pins { pins }
    }

    pub fn is_empty(&self) -> bool {
        self.pins.is_empty()
    }

    /// Every decision some pinned statement makes.
    pub fn keys(&self) -> impl Iterator<Item = &PinnedKey> {
        self.pins.iter().flat_map(|p| p.keys.iter())
    }

    /// Why `text` (with `decisions`, when it compiles) does not respect the
    /// pins, or `None` when it does: every pinned statement is there as
    /// written, still pinned, and still makes the decisions it made.
    pub fn violation(&self, text: &str, decisions: Option<&Decisions>) -> Option<String> {
        if self.pins.is_empty() {
            return None;
        }
        let present = pinned_in(text);
        for pin in &self.pins {
            let Some((span, _)) = present.iter().find(|(_, t)| *t == pin.text) else {
                return Some(format!(
                    "it changes or removes the pinned statement `{}` (line {}, `# mapwright: keep`)",
                    pin.text, pin.line
                ));
            };
            let Some(d) = decisions else { continue };
            let now = decided(d);
            for key in &pin.keys {
                // Where the context still holds, the pinned statement decides.
                let overridden = now
                    .iter()
                    .filter(|(k, _)| k == key)
                    .any(|(_, rule)| rule.map(|r| r.start()) != Some(span.start()));
                if overridden {
                    return Some(format!(
                        "it overrides the pinned statement `{}` (line {}, `# mapwright: keep`) for {}",
                        pin.text,
                        pin.line,
                        describe(key)
                    ));
                }
            }
        }
        None
    }
}

/// `the memory of task_4's region a on GPU`.
fn describe(key: &PinnedKey) -> String {
    match key {
        PinnedKey::Proc(t) => format!("the processor kind of {t}"),
        PinnedKey::Memory(t, r, k) => format!("the memory of {t}'s region {r} on {k:?}"),
        PinnedKey::Layout(t, r, m) => format!("the layout of {t}'s region {r} in {m:?}"),
        PinnedKey::Map(t) => format!("the placement of {t}'s points"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_grammar::analyze;
    use mapwright_runtime::app::App;
    use mapwright_runtime::machine::Machine;

    const CIRCUIT: &str =
        "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * rp_ghost GPU ZCMEM;  # mapwright: keep\n";

    fn resolve(text: &str) -> Decisions {
        let app = App::builtin("circuit").unwrap();
        let machine = Machine::preset("p100x4").unwrap();
        mapwright_runtime::resolve_mapping::resolve_mapping(&analyze(text), text, &app, &machine)
    }

    #[test]
    fn removing_editing_or_overriding_a_pin_is_a_violation() {
        let pins = Pins::of(CIRCUIT, &resolve(CIRCUIT));
        assert_eq!(pins.violation(CIRCUIT, Some(&resolve(CIRCUIT))), None);
        let removed = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\n";
        assert!(pins.violation(removed, None).is_some());
        let edited = CIRCUIT.replace("GPU ZCMEM", "GPU FBMEM");
        assert!(pins.violation(&edited, None).is_some());
        let unmarked = CIRCUIT.replace("  # mapwright: keep", "");
        assert!(pins.violation(&unmarked, None).is_some());
        let task = pins.pins[0]
            .keys
            .iter()
            .find_map(|k| match k {
                PinnedKey::Memory(t, _, _) => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        let overridden = format!("Region {task} rp_ghost GPU FBMEM;\n{CIRCUIT}");
        let why = pins
            .violation(&overridden, Some(&resolve(&overridden)))
            .expect("an override is a violation");
        assert!(why.contains("overrides"), "{why}");
    }
}
