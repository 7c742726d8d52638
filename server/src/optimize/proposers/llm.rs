//! The LLM proposer: an OpenAI-compatible chat-completions endpoint (hosted
//! APIs, vLLM, Ollama, llama.cpp's server) writes the next mapper.
//!
//! The prompt carries the DSL guide, the machine and the application as
//! structured JSON, and the history of candidates with their raw output and
//! AutoGuide feedback (as much as the feedback mode allows). The answer's
//! first fenced code block is the candidate; an answer without one is retried
//! with a reminder. Tokens and estimated cost are accounted.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::history::Usage;

/// The DSL reference given to the model (the project's language guide).
const DSL_GUIDE: &str = include_str!("dsl_guide.md");

/// How to reach the model.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// e.g. `http://127.0.0.1:8000/v1` (vLLM), `http://localhost:11434/v1` (Ollama).
    pub base_url: String,
    pub model: String,
    /// The API key itself (read from an environment variable by the caller).
    pub api_key: Option<String>,
    pub timeout: Duration,
    /// Extra attempts when the answer has no code block or the request fails.
    pub max_retries: usize,
    pub temperature: f64,
    /// Prices in USD per million tokens, for the cost estimate.
    pub price_prompt_per_mtok: f64,
    pub price_completion_per_mtok: f64,
    /// How many past candidates the prompt shows (most recent).
    pub history_window: usize,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: "http://127.0.0.1:8000/v1".into(),
            model: "gpt-4o".into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            max_retries: 2,
            temperature: 0.7,
            price_prompt_per_mtok: 0.0,
            price_completion_per_mtok: 0.0,
            history_window: 6,
        }
    }
}

pub struct LlmProposer {
    config: LlmConfig,
    agent: ureq::Agent,
    usage: Usage,
}

impl LlmProposer {
    pub fn new(config: LlmConfig) -> LlmProposer {
        let agent = ureq::AgentBuilder::new().timeout(config.timeout).build();
        LlmProposer {
            config,
            agent,
            usage: Usage::default(),
        }
    }

    /// The chat messages for the next proposal.
    pub fn messages(&self, ctx: &ProposalContext<'_>) -> Vec<Value> {
        let system = format!(
            "You write mappers in the Legion mapper DSL. A mapper decides which processor kind runs each task, which memory holds each region, the layout of each instance, and which processor each point of an index launch goes to. Reply with ONE complete mapper in a single ```mapper fenced code block, then at most three sentences on what you changed and why.\n\n{DSL_GUIDE}"
        );
        let app = json!({
            "name": ctx.app.name,
            "tasks": ctx.app.tasks.iter().map(|t| json!({
                "name": t.name,
                "launch": t.launch,
                "domain": t.domain,
                "variants": t.variants,
                "regions": t.regions.iter().map(|r| json!({"name": r.name, "index": r.index, "privilege": r.privilege, "bytes": r.bytes})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "library_constraints": ctx.app.library_constraints,
        });
        let machine = serde_json::to_value(ctx.machine).unwrap_or(Value::Null);
        let mut user = format!(
            "Machine:\n```json\n{}\n```\nApplication:\n```json\n{}\n```\nThe current mapper:\n```mapper\n{}\n```\n",
            machine,
            app,
            ctx.base.trim_end()
        );
        let start = ctx.history.len().saturating_sub(self.config.history_window);
        if !ctx.history.is_empty() {
            user.push_str("\nCandidates tried so far (most recent last):\n");
        }
        for r in &ctx.history[start..] {
            user.push_str(&format!(
                "\n### Candidate {} ({})\n```mapper\n{}\n```\nExecution output:\n```\n{}\n```\n",
                r.iteration,
                if r.evaluation.ok() { "ran" } else { "failed" },
                r.source.trim_end(),
                r.evaluation.raw_output.trim_end()
            ));
            for f in &r.evaluation.feedback {
                let text = f.render(ctx.feedback_mode);
                if !text.is_empty() {
                    user.push_str(&text);
                    user.push('\n');
                }
            }
        }
        if !ctx.space.pins.is_empty() {
            // Told up front; a candidate that breaks a pin is still
            // rejected unrun by the loop.
            user.push_str("\nThe user pinned these statements with a trailing `# mapwright: keep` comment. Copy each one unchanged, comment included, and add no statement that decides differently for what it covers:\n");
            for p in &ctx.space.pins.pins {
                user.push_str(&format!("- `{}  # mapwright: keep`\n", p.text));
            }
        }
        user.push_str("\nPropose an improved mapper that runs faster. Keep the task and region names of the application.");
        vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": user}),
        ]
    }

    fn request(&mut self, messages: &[Value]) -> Result<String, ProposeError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
        });
        let mut req = self
            .agent
            .post(&url)
            .set("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            req = req.set("Authorization", &format!("Bearer {key}"));
        }
        self.usage.requests += 1;
        let response = req.send_string(&body.to_string()).map_err(|e| match e {
            ureq::Error::Status(code, resp) => {
                let text = resp.into_string().unwrap_or_default();
                ProposeError::Request(format!(
                    "HTTP {code}: {}",
                    text.chars().take(300).collect::<String>()
                ))
            }
            other => ProposeError::Request(other.to_string()),
        })?;
        let text = response
            .into_string()
            .map_err(|e| ProposeError::Request(e.to_string()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| ProposeError::Request(format!("the answer is not JSON ({e})")))?;
        if let Some(usage) = value.get("usage") {
            let p = usage
                .get("prompt_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let c = usage
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            self.usage.prompt_tokens += p;
            self.usage.completion_tokens += c;
            self.usage.cost_usd += (p as f64 * self.config.price_prompt_per_mtok
                + c as f64 * self.config.price_completion_per_mtok)
                / 1e6;
        }
        value
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                ProposeError::Request("the answer has no choices[0].message.content".into())
            })
    }
}

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

impl Proposer for LlmProposer {
    fn name(&self) -> &str {
        "llm"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        let mut messages = self.messages(ctx);
        let attempts = self.config.max_retries + 1;
        let mut last_error = None;
        for attempt in 0..attempts {
            if attempt > 0 {
                self.usage.retries += 1;
            }
            match self.request(&messages) {
                Ok(answer) => match extract_code_block(&answer) {
                    Some(source) => {
                        let rationale = answer[answer.rfind("```").map(|i| i + 3).unwrap_or(0)..]
                            .trim()
                            .chars()
                            .take(200)
                            .collect::<String>();
                        return Ok(Proposal {
                            source,
                            spec: None,
                            rationale: if rationale.is_empty() {
                                "LLM proposal".into()
                            } else {
                                rationale
                            },
                        });
                    }
                    None => {
                        messages.push(json!({"role": "assistant", "content": answer}));
                        messages.push(json!({"role": "user", "content": "Your answer had no fenced code block. Reply with the complete mapper inside one ```mapper block."}));
                        last_error = Some(ProposeError::NoCode(attempt + 1));
                    }
                },
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(ProposeError::NoCode(attempts)))
    }

    fn usage(&self) -> Option<Usage> {
        Some(self.usage.clone())
    }
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
