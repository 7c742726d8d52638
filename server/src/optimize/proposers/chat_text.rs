//! What a chat model's free-text answer holds: the mapper in its first
//! fenced code block. Shared by the text-mode LLM proposer and the
//! structured one (which falls back to a block where a model wraps its
//! JSON in one).

/// The first fenced code block of a chat answer (any info string).
pub fn extract_code_block(answer: &str) -> Option<String> {
    let start = answer.find("```")?;
    let after_fence = &answer[start + 3..];
    let body_start = after_fence.find('\n')? + 1;
    let body = &after_fence[body_start..];
    let end = body.find("```")?;
    let code = body[..end].trim_end();
    (!code.trim().is_empty()).then(|| format!("{code}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_the_first_code_block() {
        assert_eq!(
            extract_code_block("Here:\n```mapper\nTask * GPU;\n```\nDone").as_deref(),
            Some("Task * GPU;\n")
        );
        assert_eq!(
            extract_code_block("```\nx = 1;\n```").as_deref(),
            Some("x = 1;\n")
        );
        assert_eq!(extract_code_block("no code here"), None);
        assert_eq!(extract_code_block("```mapper\n```"), None);
        assert_eq!(extract_code_block("```mapper\nunterminated"), None);
    }
}
