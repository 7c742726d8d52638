//! "Did you mean" suggestions: the closest candidate by edit distance.

/// Levenshtein distance between two short strings (ASCII-case-sensitive).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`: an exact case-insensitive match first,
/// otherwise the smallest edit distance within a third of the word's length.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if let Some(c) = candidates.iter().find(|c| c.eq_ignore_ascii_case(word)) {
        return Some(c);
    }
    let limit = (word.len() / 3).max(1);
    // Lengths differing by more than the limit cannot be within it.
    candidates
        .into_iter()
        .filter(|c| c.len().abs_diff(word.len()) <= limit)
        .map(|c| {
            (
                edit_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_close_names() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("soa", ["SOA", "AOS"]), Some("SOA"));
        assert_eq!(closest("C_Order", ["C_order", "F_order"]), Some("C_order"));
        assert_eq!(closest("mgpu2", ["mgpu", "mcpu"]), Some("mgpu"));
        assert_eq!(closest("zzz", ["mgpu"]), None);
    }
}
