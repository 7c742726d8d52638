//! Input generation for the fuzzer: the seeds with their token spans
//! lexed once ([`Corpus`]), the mutations ([`mutate`]) and random editor
//! sessions ([`editor_session`]). Everything here is harness, not code
//! under test, so it is kept cheap: a seed is never re-read, re-lexed or
//! cloned to be mutated.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::token::{lex, KEYWORDS, OPERATORS};

/// A small, fast, seedable generator (xorshift64*); the fuzzer needs no
/// statistical quality, only reproducibility without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Words and punctuation of the DSL, inserted as tokens: every keyword of
/// the lexer's table (properties also after a `.`) and every operator, then
/// numbers, strings, comments, line breaks and odd characters.
static DICTIONARY: LazyLock<Vec<String>> = LazyLock::new(|| {
    let keywords = KEYWORDS.iter().map(|(_, text)| text.to_string());
    let properties = KEYWORDS
        .iter()
        .filter(|(kind, _)| kind.is_property())
        .map(|(_, text)| format!(".{text}"));
    let operators = OPERATORS.iter().map(|(_, text)| text.to_string());
    let others = [
        "Machine",
        "0",
        "1",
        "2",
        "-1",
        "2147483648",
        "99999999999999999999",
        "\"%d\"",
        "\"",
        "#",
        "//",
        "/*",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "é",
        "𝕏",
        "\u{0}",
        "m",
        "x",
        "task",
        "mgpu",
    ];
    keywords
        .chain(properties)
        .chain(operators)
        .chain(others.map(String::from))
        .collect()
});

/// Inputs are kept below this size: larger ones slow the run without
/// reaching new code (the deep-input tests cover size separately).
const MAX_INPUT: usize = 64 * 1024;

/// The fuzzer's seeds: every `.mapper` file under `dir` (recursively) and
/// every built-in expert mapper.
pub fn load_seeds(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    collect_mappers(dir, &mut files);
    files.sort();
    let mut seeds: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    for name in mapwright_runtime::app::App::builtin_names() {
        if let Some(text) = mapwright_runtime::app::expert_mapper_text(name) {
            seeds.push(text.to_string());
        }
    }
    seeds
}

fn collect_mappers(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_mappers(&path, out);
        } else if path.extension().is_some_and(|e| e == "mapper") {
            out.push(path);
        }
    }
}

/// The seeds and, for each, the byte ranges of its tokens, lexed once:
/// every mutation of a seed, every token copied from one and every splice
/// with one reads these instead of lexing the seed again.
pub struct Corpus {
    texts: Vec<String>,
    spans: Vec<Vec<(usize, usize)>>,
}

impl Corpus {
    /// The corpus of `seeds` (at least one).
    pub fn new(seeds: Vec<String>) -> Corpus {
        assert!(!seeds.is_empty(), "the fuzzer needs at least one seed");
        let spans = seeds.iter().map(|s| token_spans(s)).collect();
        Corpus {
            texts: seeds,
            spans,
        }
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// A seed picked at random, with its token spans.
    fn pick(&self, rng: &mut Rng) -> (&str, &[(usize, usize)]) {
        let i = rng.below(self.texts.len());
        (&self.texts[i], &self.spans[i])
    }

    /// A seed picked at random, mutated one to four times: the input of
    /// one execution, at most [`MAX_INPUT`] bytes.
    pub fn input(&self, rng: &mut Rng) -> String {
        let (seed, spans) = self.pick(rng);
        let rounds = 1 + rng.below(4);
        // The first mutation works on the seed itself and its cached
        // spans; later ones lex the mutated text, which is new.
        let mut input = mutate_with_spans(seed, spans, self, rng);
        for _ in 1..rounds {
            input = mutate(&input, self, rng);
        }
        if input.len() > MAX_INPUT {
            let mut cut = MAX_INPUT;
            while !input.is_char_boundary(cut) {
                cut -= 1;
            }
            input.truncate(cut);
        }
        input
    }
}

/// Byte ranges of the lexer's tokens and comments, in source order: the
/// units of the token mutations.
fn token_spans(text: &str) -> Vec<(usize, usize)> {
    let lexed = lex(text);
    let mut spans: Vec<(usize, usize)> = lexed
        .tokens
        .iter()
        .chain(lexed.comments.iter())
        .map(|t| (t.span.start(), t.span.end()))
        .filter(|&(s, e)| s < e && e <= text.len())
        .collect();
    spans.sort_unstable();
    spans
}

/// One mutation of `text`; `corpus` supplies splice partners and tokens.
pub fn mutate(text: &str, corpus: &Corpus, rng: &mut Rng) -> String {
    mutate_with_spans(text, &token_spans(text), corpus, rng)
}

/// [`mutate`] given `text`'s token spans.
fn mutate_with_spans(
    text: &str,
    spans: &[(usize, usize)],
    corpus: &Corpus,
    rng: &mut Rng,
) -> String {
    let pick = |rng: &mut Rng| spans[rng.below(spans.len())];
    let choice = rng.below(9);
    if spans.is_empty() && choice < 6 {
        return format!("{text}{}", DICTIONARY[rng.below(DICTIONARY.len())]);
    }
    match choice {
        // Insert a token before another, with a space or not.
        0 | 1 => {
            let (at, _) = pick(rng);
            let word = if rng.below(2) == 0 {
                DICTIONARY[rng.below(DICTIONARY.len())].to_string()
            } else {
                let (other, other_spans) = corpus.pick(rng);
                match other_spans.get(rng.below(other_spans.len().max(1))) {
                    Some(&(s, e)) => other[s..e].to_string(),
                    None => ";".to_string(),
                }
            };
            let sep = if rng.below(2) == 0 { " " } else { "" };
            format!("{}{word}{sep}{}", &text[..at], &text[at..])
        }
        // Delete a token.
        2 => {
            let (s, e) = pick(rng);
            format!("{}{}", &text[..s], &text[e..])
        }
        // Duplicate a token.
        3 => {
            let (s, e) = pick(rng);
            format!("{}{}{}", &text[..e], &text[s..e], &text[e..])
        }
        // Swap two tokens.
        4 => {
            let (a, b) = (pick(rng), pick(rng));
            let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            if first.1 > second.0 {
                return text.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &text[..first.0],
                &text[second.0..second.1],
                &text[first.1..second.0],
                &text[first.0..first.1],
                &text[second.1..]
            )
        }
        // Repeat a run of tokens many times (nesting, chains).
        5 => {
            let (s, _) = pick(rng);
            let (_, e) = pick(rng);
            if s >= e {
                return text.to_string();
            }
            let times = 1 + rng.below(200);
            let piece = &text[s..e];
            if piece.len() * times > MAX_INPUT {
                return text.to_string();
            }
            format!("{}{}{}", &text[..s], piece.repeat(times), &text[e..])
        }
        // Flip bytes.
        6 => {
            let mut bytes = text.as_bytes().to_vec();
            if bytes.is_empty() {
                bytes.push(b'x');
            }
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        // Splice: a prefix of this text and a suffix of another seed, both
        // cut at token boundaries.
        _ => {
            let (other, other_spans) = corpus.pick(rng);
            let cut_a = if spans.is_empty() { 0 } else { pick(rng).0 };
            let cut_b = match other_spans.get(rng.below(other_spans.len().max(1))) {
                Some(&(s, _)) => s,
                None => 0,
            };
            format!("{}{}", &text[..cut_a], &other[cut_b..])
        }
    }
}

/// A random editor session on `text`: range edits and query offsets.
#[allow(clippy::type_complexity)]
pub fn editor_session(
    text: &str,
    corpus: &Corpus,
    rng: &mut Rng,
) -> (Vec<(u32, u32, u32, u32, String)>, Vec<usize>, Encoding) {
    let lines = text.lines().count() as u32 + 2;
    let mut edits = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let line = |rng: &mut Rng| rng.below(lines as usize) as u32;
        let col = |rng: &mut Rng| rng.below(90) as u32;
        let (sl, sc) = (line(rng), col(rng));
        // Mostly short edits near the start, as typing is.
        let (el, ec) = if rng.below(3) == 0 {
            (line(rng), col(rng))
        } else {
            (sl, sc + rng.below(4) as u32)
        };
        let new_text = match rng.below(4) {
            0 => String::new(),
            1 => DICTIONARY[rng.below(DICTIONARY.len())].to_string(),
            _ => {
                let (seed, spans) = corpus.pick(rng);
                let piece = mutate_with_spans(seed, spans, corpus, rng);
                let start = rng.below(piece.len().max(1));
                let mut end = (start + 1 + rng.below(40)).min(piece.len());
                let mut start = start.min(end);
                while !piece.is_char_boundary(start) {
                    start -= 1;
                }
                while !piece.is_char_boundary(end) {
                    end += 1;
                }
                piece[start..end].to_string()
            }
        };
        edits.push((sl, sc, el, ec, new_text));
    }
    let offsets = (0..3).map(|_| rng.below(text.len() + 64)).collect();
    let enc = if rng.below(2) == 0 {
        Encoding::Utf16
    } else {
        Encoding::Utf8
    };
    (edits, offsets, enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_corpus() -> Corpus {
        Corpus::new(vec![
            "m = Machine(GPU);\ndef f(Task t) {\n  return m[0, 0];\n}\nIndexTaskMap foo f;\n"
                .to_string(),
            "Task * GPU,CPU; # a comment\nRegion * * GPU FBMEM;\n".to_string(),
            "Layout * * * SOA C_order Align==64;\n".to_string(),
            String::new(),
        ])
    }

    /// The cached spans change nothing: each input is the one that lexing
    /// every seed afresh (as the fuzzer did before the cache) gives, so a
    /// seed's run is the same sequence of inputs.
    #[test]
    fn cached_spans_give_the_inputs_of_fresh_lexing() {
        let corpus = small_corpus();
        let (mut cached, mut fresh) = (Rng::new(5), Rng::new(5));
        for _ in 0..5_000 {
            let got = corpus.input(&mut cached);
            let seed = &corpus.texts[fresh.below(corpus.len())];
            let rounds = 1 + fresh.below(4);
            let mut want = seed.clone();
            for _ in 0..rounds {
                want = mutate(&want, &corpus, &mut fresh);
            }
            if want.len() > MAX_INPUT {
                let mut cut = MAX_INPUT;
                while !want.is_char_boundary(cut) {
                    cut -= 1;
                }
                want.truncate(cut);
            }
            assert_eq!(got, want);
        }
        assert_eq!(cached.next_u64(), fresh.next_u64());
    }
}
