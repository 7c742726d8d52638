//! Byte offsets <-> (line, column) in UTF-8 bytes or UTF-16 code units.
//!
//! Everything inside mapwright works on byte offsets; the LSP boundary converts
//! with the position encoding negotiated with the client. Out-of-range
//! positions are clamped (to the end of the line, or of the file) rather than
//! rejected, as editors routinely send positions past a line's end.
//!
//! Lines end at `\n`, `\r\n` or a lone `\r`: the three line breaks the
//! LSP specification allows, so positions agree with any client's.

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// A zero-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The start of every line of a text, without the text: line numbers
/// for a pass that has the text at hand anyway (the checker), at 4 bytes
/// a line instead of a copy of the text. Offsets are `u32`, as in a
/// [`crate::Span`] (a text over 4 GiB, which no caller reads, has its
/// later line starts saturated, as its spans are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineStarts {
    /// Byte offset of the start of every line; `starts[0] == 0`.
    starts: Vec<u32>,
    text_len: usize,
}

impl Default for LineStarts {
    /// The line starts of the empty text.
    fn default() -> Self {
        LineStarts::new("")
    }
}

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        LineStarts {
            starts: line_starts(text.as_bytes()),
            text_len: text.len(),
        }
    }

    /// The line starts of `new_text`, this text with the bytes
    /// `start..old_end` replaced by `new_text[start..new_end]` (see
    /// `incremental::changed_range`): the starts before the edit are kept,
    /// those in it found again, those after it moved, in place. A
    /// keystroke's analysis scanned the whole text for them (3 % of it on a
    /// 5,000-line file). Equal to `LineStarts::new(new_text)`; if the range
    /// does not fit the two texts, it is that.
    pub fn after_edit(
        mut self,
        new_text: &str,
        (start, old_end, new_end): (usize, usize, usize),
    ) -> LineStarts {
        let bytes = new_text.as_bytes();
        let fits = start <= old_end
            && start <= new_end
            && old_end <= self.text_len
            && new_end <= bytes.len()
            && self.text_len - old_end == bytes.len() - new_end;
        if !fits {
            return LineStarts::new(new_text);
        }
        // A start `s` depends on bytes `s - 1` (a break) and `s` (what
        // follows a `\r`): those with both before the edit stay, those with
        // both after it move.
        let keep = self
            .starts
            .partition_point(|&s| (s as usize) < start.max(1));
        let after = self.starts.partition_point(|&s| s as usize <= old_end);
        let delta = new_end as isize - old_end as isize;
        for s in &mut self.starts[after..] {
            *s = narrow((*s as isize + delta) as usize);
        }
        let found = (start.max(1)..=new_end)
            .filter(|&p| is_break(bytes, p - 1))
            .map(narrow);
        self.starts.splice(keep..after, found);
        self.text_len = bytes.len();
        self
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The length of the text these are the line starts of.
    pub fn text_len(&self) -> usize {
        self.text_len
    }

    /// Zero-based line containing byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = narrow(offset.min(self.text_len));
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }
}

/// `offset` as a line start is stored: saturated at `u32::MAX`.
fn narrow(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// Whether byte `j` ends a line: a `\n`, or a `\r` not followed by `\n`.
fn is_break(bytes: &[u8], j: usize) -> bool {
    match bytes[j] {
        b'\n' => true,
        b'\r' => bytes.get(j + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// The start of every line of `bytes`: 0, and the byte after each `\n`
/// and each `\r` not followed by `\n`. Built on every keystroke (by the
/// checker), so the text is scanned eight bytes at a time, and only the
/// words that hold a `\n` or a `\r` byte by byte: most lines are several
/// words long. (Collecting `match_indices` of both, then sorting, was 3 %
/// of a keystroke's analysis on a 5,000-line file.)
fn line_starts(bytes: &[u8]) -> Vec<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Non-zero if a byte of `word` is `byte` (it may also be for a byte
    // next to one that is: those words are then looked at byte by byte).
    let holds = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut starts = Vec::with_capacity(bytes.len() / 32 + 1);
    starts.push(0);
    let look_at = |from: usize, to: usize, starts: &mut Vec<u32>| {
        starts.extend(
            (from..to)
                .filter(|&j| is_break(bytes, j))
                .map(|j| narrow(j + 1)),
        );
    };
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        if holds(word, b'\n') | holds(word, b'\r') != 0 {
            look_at(at, at + 8, &mut starts);
        }
        at += 8;
    }
    look_at(at, bytes.len(), &mut starts);
    // (The guess above can be up to twice too big: the starts live as long
    // as their analysis.)
    starts.shrink_to_fit();
    starts
}

/// Line starts of a text, for fast conversions.
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Shared with its holder where it has the text already (the language
    /// server's document and analysis): not a copy of the file per
    /// keystroke.
    text: std::sync::Arc<String>,
    lines: LineStarts,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex {
            text: std::sync::Arc::new(text.to_string()),
            lines: LineStarts::new(text),
        }
    }

    /// The index of `text` from its line starts, made already (by the
    /// checker, see `check::Checked::lines`). Only their text's length is
    /// checked: made again if it is not `text`'s.
    pub fn with_line_starts(text: &str, lines: LineStarts) -> LineIndex {
        LineIndex::sharing(std::sync::Arc::new(text.to_string()), lines)
    }

    /// [`LineIndex::with_line_starts`] that shares `text` rather than
    /// copying it.
    pub fn sharing(text: std::sync::Arc<String>, lines: LineStarts) -> LineIndex {
        let lines = if lines.text_len() == text.len() {
            lines
        } else {
            LineStarts::new(&text)
        };
        LineIndex { text, lines }
    }

    pub fn line_count(&self) -> usize {
        self.lines.line_count()
    }

    /// The line starts, without the text (for the next edit's
    /// [`LineStarts::after_edit`]).
    pub fn into_line_starts(self) -> LineStarts {
        self.lines
    }

    /// Zero-based line containing byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        self.lines.line_of(offset)
    }

    /// Byte range of line `line` without its line terminator (`\n`, `\r\n`
    /// or `\r`).
    pub fn line_span(&self, line: usize) -> (usize, usize) {
        let start = self
            .lines
            .starts
            .get(line)
            .map_or(self.text.len(), |&s| s as usize);
        let mut end = self
            .lines
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&s| s as usize - 1);
        let bytes = self.text.as_bytes();
        let ends_in_lf = bytes.get(end) == Some(&b'\n');
        if ends_in_lf && end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        (start, end.max(start))
    }

    /// Converts a byte offset to a line and column in `enc`. An offset inside
    /// a character is moved back to the character's start.
    pub fn line_col(&self, offset: usize, enc: Encoding) -> LineCol {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset);
        let start = self.lines.starts[line] as usize;
        let prefix = &self.text[start..offset];
        let col = match enc {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        LineCol {
            line: line as u32,
            col: col as u32,
        }
    }

    /// Converts a line and column in `enc` to a byte offset, clamping a line
    /// past the end to the end of the text and a column past the end of its
    /// line to the end of the line. A column inside a character (a UTF-16
    /// surrogate half, a UTF-8 continuation byte) maps to the character's start.
    pub fn offset(&self, pos: LineCol, enc: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.lines.starts.len() {
            return self.text.len();
        }
        let (start, end) = self.line_span(line);
        let mut units = 0usize;
        for (i, ch) in self.text[start..end].char_indices() {
            let width = match enc {
                Encoding::Utf8 => ch.len_utf8(),
                Encoding::Utf16 => ch.len_utf16(),
            };
            if units + width > pos.col as usize {
                return start + i;
            }
            units += width;
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of every line, looking at each byte: `\r\n` is one break, at
    /// its `\n`; a `\r` alone is a break too.
    fn starts_scanning_bytes(text: &str) -> Vec<u32> {
        let mut starts = vec![0];
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let breaks = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if breaks {
                starts.push(i as u32 + 1);
            }
        }
        starts
    }

    /// `old` with `old[from..to]` replaced by `insert`: the line starts
    /// spliced from the old ones and found again must be the same.
    fn splice_matches(old: &str, from: usize, to: usize, insert: &str) {
        let new = format!("{}{insert}{}", &old[..from], &old[to..]);
        let changed = crate::incremental::changed_range(old, &new);
        let spliced = LineStarts::new(old).after_edit(&new, changed);
        assert_eq!(spliced, LineStarts::new(&new), "{old:?} -> {new:?}");
        // A wider range than the smallest one is as good.
        let wide = LineStarts::new(old).after_edit(&new, (from, to, from + insert.len()));
        assert_eq!(wide, LineStarts::new(&new), "{old:?} -> {new:?} (wide)");
    }

    #[test]
    fn line_starts_after_an_edit_equal_a_new_scan() {
        // Breaks typed, erased and split: `\r` then `\n` makes one break of
        // two, a `\r\n` cut in half makes two of one.
        let cases = [
            ("", 0, 0, "a\n"),
            ("a\nb", 0, 0, "\n"),
            ("a\nb", 1, 2, ""),
            ("a\rb", 2, 2, "\nx"),
            ("a\rb", 2, 2, "\n"),
            ("a\r\nb", 2, 2, "x"),
            ("a\r\nb", 1, 2, ""),
            ("a\r\nb", 2, 3, ""),
            ("a\r", 2, 2, "\n"),
            ("x\n\ny\r\nz", 3, 3, "\r"),
            ("x\n\ny\r\nz", 0, 7, "q"),
            ("é\n😀\n", 3, 7, "\r\r"),
        ];
        for (old, from, to, insert) in cases {
            splice_matches(old, from, to, insert);
        }
        // A range that does not fit the texts: scanned again.
        assert_eq!(
            LineStarts::new("a\nb").after_edit("a\nbc\n", (9, 9, 9)),
            LineStarts::new("a\nbc\n")
        );
    }

    proptest::proptest! {
        #[test]
        fn line_starts_after_random_edits_equal_a_new_scan(
            old in "[ab\r\n]{0,24}",
            insert in "[ab\r\n]{0,6}",
            a in 0usize..25,
            b in 0usize..25,
        ) {
            let (from, to) = (a.min(b).min(old.len()), a.max(b).min(old.len()));
            splice_matches(&old, from, to, &insert);
        }
    }

    #[test]
    fn line_starts_equal_the_byte_scan() {
        // The word-at-a-time scan must find what looking at each byte finds.
        let texts = [
            "",
            "\n",
            "\r",
            "\r\n",
            "\n\r",
            "a",
            "a\n",
            "\n\nx\n",
            "é\n😀\n\n",
            "a\r\nb\rc\n\rd\r\r\n",
            "m = Machine(GPU);\r\nTask * GPU;\n",
            // A `\r\n` across two eight-byte words, and breaks at their ends.
            "1234567\r\nabc",
            "1234567\r",
            "12345678\n",
            "1234567\n12345678\r\r",
        ];
        for t in texts {
            assert_eq!(LineStarts::new(t).starts, starts_scanning_bytes(t), "{t:?}");
        }
        let breaks = ["\n", "\r\n", "\r"];
        let long: String = (0..500)
            .map(|i| "x".repeat(i % 37) + breaks[i % 7 % 3])
            .collect();
        assert_eq!(LineStarts::new(&long).starts, starts_scanning_bytes(&long));
        // With a `\r` the byte scan decides: `\r\n` is one break.
        assert_eq!(LineStarts::new("a\r\nb\rc").starts, vec![0, 3, 5]);
    }

    #[test]
    fn round_trips_in_both_encodings() {
        let text = "a é\r\nb 😀 c\n\nx";
        let idx = LineIndex::new(text);
        for (offset, _) in text.char_indices() {
            for enc in [Encoding::Utf8, Encoding::Utf16] {
                let lc = idx.line_col(offset, enc);
                if text.as_bytes()[offset] == b'\n' || text.as_bytes()[offset] == b'\r' {
                    continue;
                }
                assert_eq!(idx.offset(lc, enc), offset, "offset {offset} {enc:?}");
            }
        }
        let emoji = text.find('😀').unwrap();
        assert_eq!(
            idx.line_col(emoji + 4, Encoding::Utf16),
            LineCol { line: 1, col: 4 }
        );
        assert_eq!(
            idx.line_col(emoji + 4, Encoding::Utf8),
            LineCol { line: 1, col: 6 }
        );
    }

    #[test]
    fn lone_cr_crlf_and_lf_are_all_line_breaks() {
        let text = "a\rbc\r\nd\ne\r\rf";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 6);
        let lines: Vec<&str> = (0..idx.line_count())
            .map(|l| {
                let (s, e) = idx.line_span(l);
                &text[s..e]
            })
            .collect();
        assert_eq!(lines, ["a", "bc", "d", "e", "", "f"]);
        let f = text.find('f').unwrap();
        assert_eq!(
            idx.line_col(f, Encoding::Utf16),
            LineCol { line: 5, col: 0 }
        );
        assert_eq!(idx.offset(LineCol { line: 1, col: 1 }, Encoding::Utf16), 3);
        // Past the end of a line that ends in a lone `\r`: its end, not the
        // next line.
        assert_eq!(idx.offset(LineCol { line: 0, col: 9 }, Encoding::Utf16), 1);
    }

    #[test]
    fn clamps_out_of_range() {
        let idx = LineIndex::new("ab\r\ncd");
        assert_eq!(idx.offset(LineCol { line: 0, col: 99 }, Encoding::Utf16), 2);
        assert_eq!(idx.offset(LineCol { line: 9, col: 0 }, Encoding::Utf16), 6);
        assert_eq!(
            idx.line_col(99, Encoding::Utf8),
            LineCol { line: 1, col: 2 }
        );
        // A column inside a surrogate pair lands on the character start.
        let idx = LineIndex::new("😀x");
        assert_eq!(idx.offset(LineCol { line: 0, col: 1 }, Encoding::Utf16), 0);
    }
}
