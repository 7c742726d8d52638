//! The LLM proposer: an OpenAI-compatible chat-completions endpoint (hosted
//! APIs, vLLM, Ollama, llama.cpp's server) proposes the next mapper.
//!
//! Two ways to ask ([`OutputMode`]):
//! - **structured** ([`super::structured`]): the model answers in a JSON
//!   schema of the decision space, sent as `response_format`, and the
//!   answer is rendered as minimal edits of the user's mapper; the prompt is
//!   JSON and short, which is what makes a small local model usable;
//! - **text**: the prompt carries the DSL guide, the machine and the
//!   application as JSON, and the history of candidates with their raw
//!   output and AutoGuide feedback; the answer's first fenced code block is
//!   the candidate. The fallback for endpoints without structured output.
//!
//! `auto` (the default) asks structured and falls back to text for the rest
//! of the run when the endpoint rejects `response_format`. Every answer that
//! cannot be used says why ([`AnswerProblem`]: no code block, JSON where a
//! mapper block was asked for, repeated text, a truncated answer, an answer
//! outside the schema) and is retried with a reminder; a timeout is its own
//! error. `max_tokens` is always sent. Tokens, seconds and estimated cost
//! are accounted per request.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::chat_text::extract_code_block;
use super::structured;
use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::history::Usage;

/// The DSL reference given to the model in text mode (the project's language guide).
const DSL_GUIDE: &str = include_str!("dsl_guide.md");

/// The retry after an answer was cut off.
const SHORTER: &str = "Your answer was cut off. Answer again, shorter: change only the few decisions that matter most.";

/// How the model is asked to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputMode {
    /// Structured where the endpoint accepts `response_format`, else text.
    Auto,
    /// A JSON schema of the decision space (`response_format`).
    Structured,
    /// A complete mapper in a fenced code block.
    Text,
}

/// How to reach the model.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// e.g. `http://127.0.0.1:8000/v1` (vLLM), `http://localhost:11434/v1` (Ollama).
    pub base_url: String,
    pub model: String,
    /// The API key itself (read from an environment variable by the caller).
    pub api_key: Option<String>,
    /// Per request, connection to last byte.
    pub timeout: Duration,
    /// Extra attempts when the answer cannot be used or the request fails.
    pub max_retries: usize,
    pub temperature: f64,
    /// Sent as `max_tokens`: the most tokens one answer may have.
    pub max_tokens: u32,
    pub output: OutputMode,
    /// Prices in USD per million tokens, for the cost estimate.
    pub price_prompt_per_mtok: f64,
    pub price_completion_per_mtok: f64,
    /// How many past candidates the prompt shows (most recent).
    pub history_window: usize,
    /// Whether the structured prompt carries the last real runs' measured
    /// figures per task (off: `--llm-no-measurements`, for comparison).
    pub measurements: bool,
    /// PEM certificates to trust besides the usual roots, for an `https://`
    /// endpoint behind a private certificate authority.
    pub ca_file: Option<std::path::PathBuf>,
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
            max_tokens: 1024,
            output: OutputMode::Auto,
            price_prompt_per_mtok: 0.0,
            price_completion_per_mtok: 0.0,
            history_window: 6,
            measurements: true,
            ca_file: None,
        }
    }
}

/// Why an answer could not be used as a candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerProblem {
    /// Text mode: no fenced code block.
    NoCode,
    /// Text mode: JSON where a mapper code block was asked for.
    Json,
    /// The same lines over and over (a small model looping).
    Repeated,
    /// Cut off at `max_tokens` before the answer was complete.
    Truncated(u32),
    /// Cut off because prompt and answer filled the model's context.
    ContextFull(u64),
    /// Structured mode: not JSON of the schema's shape.
    Schema(String),
}

impl std::fmt::Display for AnswerProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerProblem::NoCode => write!(f, "no code block"),
            AnswerProblem::Json => write!(f, "JSON instead of a mapper code block"),
            AnswerProblem::Repeated => write!(f, "repeated text"),
            AnswerProblem::Truncated(n) => write!(f, "truncated at max_tokens ({n})"),
            AnswerProblem::ContextFull(p) => {
                write!(f, "truncated: the context is full ({p} prompt tokens)")
            }
            AnswerProblem::Schema(e) => write!(f, "not the schema's JSON ({e})"),
        }
    }
}

/// One answer with its accounting.
struct Answer {
    content: String,
    finish_reason: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    seconds: f64,
}

impl Answer {
    /// `[7.9 s, 412+96 tokens]`: what progress shows of a request.
    fn stats(&self) -> String {
        format!(
            "[{:.1} s, {}+{} tokens]",
            self.seconds, self.prompt_tokens, self.completion_tokens
        )
    }
}

pub struct LlmProposer {
    config: LlmConfig,
    /// TLS settings of `https://` requests (the roots and `ca_file`).
    tls: std::sync::Arc<ureq::rustls::ClientConfig>,
    usage: Usage,
    /// Whether the endpoint took `response_format` (auto mode learns it).
    structured: bool,
    /// Set to stop waiting for the model (Ctrl-C).
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl LlmProposer {
    /// A proposer for `config`; an error says why its `ca_file` cannot be
    /// used.
    pub fn new(config: LlmConfig) -> Result<LlmProposer, String> {
        let tls = super::abortable::tls_config(config.ca_file.as_deref())?;
        let structured = config.output != OutputMode::Text;
        Ok(LlmProposer {
            config,
            tls,
            usage: Usage::default(),
            structured,
            cancel: None,
        })
    }

    /// Whether the next request asks for structured output.
    pub fn is_structured(&self) -> bool {
        self.structured
    }

    /// The chat messages for the next proposal (in the current mode).
    pub fn messages(&self, ctx: &ProposalContext<'_>) -> Vec<Value> {
        if self.structured {
            return vec![
                json!({"role": "system", "content": structured::SYSTEM}),
                json!({"role": "user", "content": structured::prompt(ctx, self.config.history_window, self.config.measurements)}),
            ];
        }
        self.text_messages(ctx)
    }

    fn text_messages(&self, ctx: &ProposalContext<'_>) -> Vec<Value> {
        let system = format!(
            "You write mappers in the Legion mapper DSL. A mapper decides which processor kind runs each task, which memory holds each region, the layout of each instance, and which processor each point of an index launch goes to. Reply with ONE complete mapper in a single ```mapper fenced code block, then at most three sentences on what you changed and why.\n\n{DSL_GUIDE}"
        );
        // The application and the machine in the names and numbers a mapper
        // uses (their full descriptions would not fit a small model's context).
        let app = json!({
            "name": ctx.app.name,
            "tasks": structured::tasks_summary(ctx),
            "library_constraints": ctx.app.library_constraints,
        });
        let machine = structured::machine_summary(ctx.machine);
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

    /// One chat-completions request. `schema`: ask for structured output.
    fn request(
        &mut self,
        messages: &[Value],
        schema: Option<&Value>,
    ) -> Result<Answer, ProposeError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        });
        if let Some(schema) = schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "mapping_decisions", "strict": true, "schema": schema},
            });
        }
        // The socket of this request, for a cancel to shut down: an
        // `https://` connection keeps it there when it connects (an agent
        // per request, so every request connects: no pooled connection
        // hides its socket), a local `http://` one in `send_abortable`.
        let socket = super::abortable::Socket::new();
        let agent = ureq::AgentBuilder::new()
            .timeout(self.config.timeout)
            .tls_connector(std::sync::Arc::new(super::abortable::CancellableTls {
                config: self.tls.clone(),
                socket: socket.clone(),
            }))
            .build();
        let mut req = agent.post(&url).set("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            req = req.set("Authorization", &format!("Bearer {key}"));
        }
        self.usage.requests += 1;
        let t0 = Instant::now();
        let timeout = self.config.timeout;
        let body = body.to_string();
        let text = match &self.cancel {
            None => send(req, &body, timeout)?,
            Some(flag) => {
                // On its own thread, so that a cancel is not kept waiting
                // for the model; the cancel shuts the request's socket
                // down, so the server sees its client go and stops
                // generating.
                let (tx, rx) = std::sync::mpsc::channel();
                if url.starts_with("http://") {
                    let mut headers = vec![("Content-Type", "application/json".to_string())];
                    if let Some(key) = &self.config.api_key {
                        headers.push(("Authorization", format!("Bearer {key}")));
                    }
                    let socket = socket.clone();
                    std::thread::spawn(move || {
                        let _ = tx.send(send_abortable(&url, &headers, &body, timeout, &socket));
                    });
                } else {
                    std::thread::spawn(move || {
                        let _ = tx.send(send(req, &body, timeout));
                    });
                }
                loop {
                    if flag.load(std::sync::atomic::Ordering::SeqCst) {
                        socket.abort();
                        return Err(ProposeError::Cancelled);
                    }
                    match rx.recv_timeout(Duration::from_millis(100)) {
                        Ok(result) => break result?,
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            return Err(ProposeError::Request("the request thread ended".into()))
                        }
                    }
                }
            }
        };
        let seconds = t0.elapsed().as_secs_f64();
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| ProposeError::Request(format!("the answer is not JSON ({e})")))?;
        let count = |k: &str| {
            value
                .pointer(&format!("/usage/{k}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (p, c) = (count("prompt_tokens"), count("completion_tokens"));
        self.usage.prompt_tokens += p;
        self.usage.completion_tokens += c;
        self.usage.cost_usd += (p as f64 * self.config.price_prompt_per_mtok
            + c as f64 * self.config.price_completion_per_mtok)
            / 1e6;
        let content = value
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                ProposeError::Request("the answer has no choices[0].message.content".into())
            })?;
        Ok(Answer {
            content,
            finish_reason: value
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            prompt_tokens: p,
            completion_tokens: c,
            seconds,
        })
    }

    /// An answer cut off before `max_tokens` was cut off by the context.
    fn cut_short(&self, answer: &Answer, problem: AnswerProblem) -> AnswerProblem {
        match problem {
            AnswerProblem::Truncated(_)
                if answer.completion_tokens > 0
                    && answer.completion_tokens < u64::from(self.config.max_tokens) =>
            {
                AnswerProblem::ContextFull(answer.prompt_tokens)
            }
            p => p,
        }
    }

    /// A text answer as a candidate, or why it cannot be one.
    fn text_proposal(&self, answer: &Answer) -> Result<Proposal, AnswerProblem> {
        let content = &answer.content;
        let Some(source) = extract_code_block(content) else {
            return Err(self.cut_short(
                answer,
                classify_unusable(content, &answer.finish_reason, self.config.max_tokens),
            ));
        };
        let rationale = content[content.rfind("```").map(|i| i + 3).unwrap_or(0)..]
            .trim()
            .chars()
            .take(200)
            .collect::<String>();
        Ok(Proposal {
            source,
            spec: None,
            rationale: format!(
                "{} {}",
                answer.stats(),
                if rationale.is_empty() {
                    "LLM proposal"
                } else {
                    &rationale
                }
            ),
        })
    }

    /// A structured answer rendered as edits of the user's mapper.
    fn structured_proposal(
        &self,
        ctx: &ProposalContext<'_>,
        answer: &Answer,
    ) -> Result<Proposal, AnswerProblem> {
        // An answer cut off at `max_tokens` keeps its complete entries.
        let salvaged = (answer.finish_reason == "length")
            .then(|| structured::complete_truncated(&answer.content))
            .flatten();
        let parsed = match structured::parse(ctx, &answer.content) {
            Err(_) if salvaged.is_some() => salvaged
                .as_deref()
                .map(|text| structured::parse(ctx, text))
                .unwrap_or(Err(structured::Invalid::Empty))
                .map(|(spec, mut skipped, reason)| {
                    skipped.push(format!(
                        "the rest (truncated at max_tokens, {})",
                        self.config.max_tokens
                    ));
                    (spec, skipped, reason)
                }),
            other => other,
        };
        let (spec, skipped, reason) = match parsed {
            Ok(parsed) => parsed,
            Err(invalid) => {
                // An endpoint that ignored `response_format` may still have
                // written a mapper.
                if let Ok(p) = self.text_proposal(answer) {
                    return Ok(p);
                }
                if answer.finish_reason == "length" {
                    return Err(
                        self.cut_short(answer, AnswerProblem::Truncated(self.config.max_tokens))
                    );
                }
                return Err(match invalid {
                    structured::Invalid::NotJson(_) if is_repeated(&answer.content) => {
                        AnswerProblem::Repeated
                    }
                    structured::Invalid::NotJson(e) => AnswerProblem::Schema(e),
                    structured::Invalid::Empty => AnswerProblem::Schema("no decision lists".into()),
                });
            }
        };
        let source = ctx.render(ctx.base, ctx.base_decisions, &spec);
        let mut rationale = answer.stats();
        let change = structured::describe(&spec);
        if change.as_object().is_some_and(|o| o.is_empty()) {
            rationale.push_str(" no change");
        } else {
            rationale.push(' ');
            rationale.push_str(&change.to_string());
        }
        if !skipped.is_empty() {
            rationale.push_str(&format!("; left out: {}", skipped.join(", ")));
        }
        if !reason.trim().is_empty() {
            rationale.push_str(&format!("; {}", reason.trim()));
        }
        Ok(Proposal {
            source,
            spec: Some(spec),
            rationale,
        })
    }
}

/// Sends one request and reads the answer's body.
fn send(req: ureq::Request, body: &str, timeout: Duration) -> Result<String, ProposeError> {
    let response = req.send_string(body).map_err(|e| match e {
        ureq::Error::Status(code, resp) => {
            let text = resp.into_string().unwrap_or_default();
            ProposeError::Request(format!(
                "HTTP {code}: {}",
                text.chars().take(300).collect::<String>()
            ))
        }
        other if timed_out(&other) => ProposeError::Timeout(timeout.as_secs_f64()),
        other => ProposeError::Request(other.to_string()),
    })?;
    response.into_string().map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut || e.kind() == std::io::ErrorKind::WouldBlock {
            ProposeError::Timeout(timeout.as_secs_f64())
        } else {
            ProposeError::Request(e.to_string())
        }
    })
}

/// [`send`] to a plain `http://` endpoint over a socket that `socket`
/// can shut down (a cancel).
fn send_abortable(
    url: &str,
    headers: &[(&str, String)],
    body: &str,
    timeout: Duration,
    socket: &super::abortable::Socket,
) -> Result<String, ProposeError> {
    use super::abortable::{post, PostError};
    match post(url, headers, body, timeout, socket) {
        Ok((code, text)) if (200..300).contains(&code) => Ok(text),
        Ok((code, text)) => Err(ProposeError::Request(format!(
            "HTTP {code}: {}",
            text.chars().take(300).collect::<String>()
        ))),
        Err(PostError::Timeout) => Err(ProposeError::Timeout(timeout.as_secs_f64())),
        Err(PostError::Other(e)) => Err(ProposeError::Request(e)),
    }
}

/// Whether a transport error is the request's timeout.
fn timed_out(e: &ureq::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ) {
                return true;
            }
        }
        source = s.source();
    }
    e.to_string().contains("timed out")
}

/// Why a text answer without a usable code block cannot be used.
pub fn classify_unusable(content: &str, finish_reason: &str, max_tokens: u32) -> AnswerProblem {
    let trimmed = content.trim();
    if finish_reason == "length" {
        return AnswerProblem::Truncated(max_tokens);
    }
    if is_repeated(trimmed) {
        return AnswerProblem::Repeated;
    }
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        || serde_json::from_str::<Value>(trimmed).is_ok()
    {
        return AnswerProblem::Json;
    }
    AnswerProblem::NoCode
}

/// Whether the text loops: a line of some length appears three times or
/// more and repeated lines are at least a third of all lines.
pub fn is_repeated(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 6)
        .collect();
    if lines.len() < 3 {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for l in &lines {
        *counts.entry(*l).or_insert(0usize) += 1;
    }
    let repeated: usize = counts.values().filter(|n| **n >= 2).map(|n| n - 1).sum();
    counts.values().any(|n| *n >= 3) && repeated * 3 >= lines.len()
}

/// Whether an HTTP error says the endpoint does not take `response_format`.
fn rejects_structured(e: &ProposeError) -> bool {
    match e {
        ProposeError::Request(msg) => {
            msg.starts_with("HTTP 4")
                || msg.contains("response_format")
                || msg.contains("json_schema")
        }
        _ => false,
    }
}

impl Proposer for LlmProposer {
    fn name(&self) -> &str {
        "llm"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        let mut messages = self.messages(ctx);
        let mut schema = self.structured.then(|| structured::schema(ctx));
        let attempts = self.config.max_retries + 1;
        let mut last_error = None;
        let mut problems: Vec<String> = Vec::new();
        for attempt in 0..attempts {
            if attempt > 0 {
                self.usage.retries += 1;
            }
            let answer = match self.request(&messages, schema.as_ref()) {
                Ok(a) => a,
                Err(ProposeError::Cancelled) => return Err(ProposeError::Cancelled),
                Err(e) => {
                    if schema.is_some()
                        && self.config.output == OutputMode::Auto
                        && rejects_structured(&e)
                    {
                        // The endpoint has no structured output: text from now on.
                        self.structured = false;
                        schema = None;
                        messages = self.text_messages(ctx);
                        problems.push(format!("structured output refused ({e})"));
                    } else {
                        problems.push(e.to_string());
                    }
                    last_error = Some(e);
                    continue;
                }
            };
            let result = if schema.is_some() {
                self.structured_proposal(ctx, &answer)
            } else {
                self.text_proposal(&answer)
            };
            match result {
                Ok(mut p) => {
                    if !problems.is_empty() {
                        p.rationale = format!("{} (after: {})", p.rationale, problems.join("; "));
                    }
                    return Ok(p);
                }
                Err(problem) => {
                    let reminder = if schema.is_some() {
                        "That was not the JSON object asked for. Answer with the JSON object only."
                    } else {
                        "Your answer had no fenced code block. Reply with the complete mapper inside one ```mapper block."
                    };
                    problems.push(format!("{problem} {}", answer.stats()));
                    if matches!(
                        problem,
                        AnswerProblem::Truncated(_) | AnswerProblem::ContextFull(_)
                    ) {
                        // Quoting a cut-off answer only lengthens the prompt:
                        // ask again, for less.
                        if !messages.last().is_some_and(|m| m["content"] == SHORTER) {
                            messages.push(json!({"role": "user", "content": SHORTER}));
                        }
                    } else {
                        messages.push(json!({"role": "assistant", "content": answer.content.chars().take(2000).collect::<String>()}));
                        messages.push(json!({"role": "user", "content": reminder}));
                    }
                    last_error = Some(ProposeError::Answer {
                        problems: problems.clone(),
                    });
                }
            }
        }
        let error = match last_error {
            Some(ProposeError::Answer { .. }) | None => ProposeError::Answer { problems },
            Some(e) => e,
        };
        Err(error)
    }

    fn usage(&self) -> Option<Usage> {
        Some(self.usage.clone())
    }

    fn set_cancel(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.cancel = Some(flag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_answers_say_why() {
        assert_eq!(
            classify_unusable("Sure!", "stop", 64),
            AnswerProblem::NoCode
        );
        assert_eq!(
            classify_unusable("{\"tasks\": []}", "stop", 64),
            AnswerProblem::Json
        );
        assert_eq!(
            classify_unusable("Task * GPU;\nTask * GPU;\nTask * GPU;\n", "stop", 64),
            AnswerProblem::Repeated
        );
        assert_eq!(
            classify_unusable("```mapper\nTask * GPU;", "length", 64),
            AnswerProblem::Truncated(64)
        );
        assert!(!is_repeated("Task a GPU;\nTask b GPU;\nTask c GPU;"));
    }
}
