//! The language server (`mapwright lsp`): LSP over stdio with tower-lsp.
//!
//! Module map. Two layers, as in rust-analyzer: the protocol glue knows LSP
//! types and tower-lsp; everything below it is pure functions from a document
//! (text, its parse, its names) and a byte offset to plain data, unit-tested
//! without a server.
//!
//! Protocol glue (LSP types, async, state):
//! - [`server`]          the `LanguageServer` impl, protocol wiring only (one
//!   line per method); each request family in its own submodule:
//!   `capabilities` (initialize), `sync` (documents, settings, publishing),
//!   `language` (completion, hover, tokens, symbols, ...), `goto`
//!   (navigation), `pull` (pull diagnostics), `editing` (formatting, code
//!   actions, lenses), `running` (commands and `$/progress`).
//! - [`state`]           open documents (owned `Arc` snapshots in a DashMap),
//!   the negotiated encoding, settings, project files, semantic-token results.
//! - [`config`]          settings (initializationOptions, workspace/configuration)
//!   and `mapwright.toml` discovery.
//! - [`convert`]         byte spans <-> LSP positions in the negotiated encoding;
//!   grammar diagnostics -> LSP diagnostics (optional fields only for
//!   clients that advertise them; `data` names the version; code actions
//!   recompute the fixes, see `convert::DiagnosticData`).
//! - [`diagnostic_extras`] tags (`Unnecessary`, `Deprecated`) and the
//!   `codeDescription` link to `docs/codes.md`.
//! - [`proto`]           the pure results below -> LSP types (Markdown, or
//!   [`plain_text`] for a client that does not declare Markdown).
//! - [`quick_fix_order`] the order of a code-action answer's quick fixes
//!   (the context's diagnostics first, the narrowest first) and which one
//!   is preferred.
//! - [`commands`]        `mapwright.explain`, `mapwright.run` and
//!   `mapwright.optimize` (arguments, setup from settings and project file,
//!   the blocking work, AutoGuide feedback as diagnostics); the server runs
//!   them on blocking threads with `$/progress` and applies the result.
//! - [`guard`]           `catch_unwind` around every handler's synchronous work.
//! - [`transport`]       stdin framing guard: a malformed message gets an error
//!   response instead of ending the session; `params: null`, `$/` requests,
//!   oversized messages; the end-of-input signal.
//! - [`lifecycle`]       ending when the editor is gone: end of input, the
//!   parent `processId`.
//! - [`outbox`]          the output: tower-lsp's frames and the published
//!   diagnostics (serialized directly, without a `Value` tree) through one
//!   writer.
//! - [`resolve_thread`]  the one warm thread that resolves documents against
//!   their application while publishing (and gives memory back when idle).
//! - [`publish_limit`]   which diagnostics are sent when there are too many
//!   (`diagnostics.maxPublished`, a byte budget; errors, then those nearest
//!   the last edit) and the `I0001` note counting the rest.
//! - [`publish_cache`]   the JSON of each published diagnostic of the
//!   document published last, reused by its next publish for every
//!   diagnostic that did not change.
//!
//! Pure analysis (no tower-lsp; byte offsets in, data out):
//! - [`analysis`]        one document's parse, line index and name resolution.
//! - [`analysis_cache`]  which documents keep their analysis in memory (the
//!   most recently used, bounded in count and text bytes; the others are
//!   analysed again on demand).
//! - [`recent`]          the most-recently-used list that bounds both the kept
//!   analyses and the kept mapping resolutions.
//! - [`docs`]            documentation of every keyword, property and method.
//! - [`cursor`]          what is being typed at an offset (statement field,
//!   after `.`, inside a call, ...).
//! - [`provider_api`]    what providers are asked and answer: `Query`,
//!   `InlayQuery`, the hover/completion/inlay-hint provider traits and their
//!   results (`HoverSection`, `Completion`, `InlayHint`). A leaf: the
//!   providers below import it, the analysis and the helpers, never each
//!   other (`server/tests/lsp_module_graph.rs` fails on any import cycle
//!   among these modules).
//! - [`name_facts`]      what the document says about a name: signature,
//!   assignment text, parameter type, task/region names of mapping
//!   statements (shared by hover, completion, symbols, navigation, tokens).
//! - [`providers`]       the registry: the one module that imports the
//!   concrete providers and composes them (application/machine awareness
//!   plugs in here).
//! - [`target`]          the configured application and machine (loaded once
//!   per project file) and one version's resolution against them: mapping
//!   decisions with diagnostics and fixes, top-level values on the machine.
//! - [`app_aware`]       the providers that use them: task/region completion,
//!   hover with machine-model sizes, task details and launch distributions,
//!   inlay hints with sizes and points per processor.
//! - [`completion`], [`hover`], [`inlay`]: the built-in providers;
//!   [`signature`]: signature help.
//! - [`navigation`]      definition, references, rename, document highlight.
//! - [`selection`]       selection ranges, declaration (the first definition).
//! - [`symbols`]         document outline and workspace symbols.
//! - [`folding`]         function bodies, multi-line statements, comment blocks.
//! - [`semantic_tokens`] token classification and full/delta encoding.
//! - [`semantic_range`]  the tokens of a range.
//! - [`formatting`]      formatter output as minimal edits (via [`diff`]).
//! - [`on_type`]         formatting after `;` and `}`.
//! - [`code_actions`]    diagnostic fixes and source actions.
//! - [`document_link`]   the description files a `mapwright.toml` names, as
//!   links (relative to its folder; a name or a missing file gets none).
//!
//! Invariants: a panic in one request becomes an error response and a log
//! message, never a dead server; no DashMap guard lives across an `.await`;
//! document changes are applied before a handler's first `.await` (tower-lsp
//! polls handlers concurrently, in arrival order until they first yield).

pub mod analysis;
pub mod analysis_cache;
pub mod app_aware;
pub mod code_actions;
pub mod commands;
pub mod completion;
pub mod config;
pub mod convert;
pub mod cursor;
pub mod diagnostic_extras;
pub mod diff;
pub mod docs;
pub mod document_link;
pub mod folding;
pub mod formatting;
pub mod guard;
pub mod hover;
pub mod inlay;
pub mod lifecycle;
pub mod name_facts;
pub mod navigation;
pub mod on_type;
pub mod outbox;
pub mod plain_text;
pub mod proto;
pub mod provider_api;
pub mod providers;
pub mod publish_cache;
pub mod publish_limit;
pub mod quick_fix_order;
pub mod recent;
pub mod resolve_thread;
pub mod selection;
pub mod semantic_range;
pub mod semantic_tokens;
pub mod server;
pub mod signature;
pub mod state;
pub mod symbols;
pub mod target;
pub mod transport;

/// Runs the server on standard input and output until the client sends
/// `exit` (or closes the stream). Returns whether `shutdown` came first, as
/// the protocol's exit code says (0 if it did, 1 if not).
pub fn run_stdio() -> anyhow::Result<bool> {
    // Two workers: requests on one document are cheap and synchronous; a
    // second worker keeps the reader and the debounce timers moving while a
    // long request (formatting a 10,000-line file) runs.
    //
    // Idle blocking threads (commands run on them; publishing with an
    // application used to resolve on them, see `resolve_thread`) end after
    // half a second instead of tokio's 10 s: each keeps the
    // allocator pages of its transient work resident until it ends (about
    // 20 MB with 100 documents, see the memory runs in README.md's git
    // history).
    //
    // A worker that runs out of work gives back the memory its heap no
    // longer uses (at most every 100 ms; see `alloc::collect_when_idle`),
    // and so does the resolving thread when it idles: most
    // of what one thread allocates is freed by another, and mimalloc
    // leaves such pages resident until their owner looks at them.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_keep_alive(std::time::Duration::from_millis(500))
        .on_thread_park(crate::alloc::collect_when_idle)
        .enable_all()
        .build()?;
    let state = std::sync::Arc::new(state::State::default());
    let exit = std::sync::Arc::new(tokio::sync::Notify::new());
    runtime.block_on(async {
        let (service, socket) = server::service(state.clone());
        let service = server::direct::DirectAnswers::new(service);
        let service = server::StopOnExit::new(service, exit.clone());
        let (stdin, stdin_closed) = transport::guarded_stdin();
        let (stdout, outbox) = outbox::outbox(tokio::io::stdout());
        state.set_outbox(outbox);
        let serve = tower_lsp::Server::new(stdin, stdout, socket).serve(service);
        // tower-lsp only notices `exit` when the next message (or the end of
        // input) arrives; editors expect the process to end right away. At
        // the end of input it waits for every pending handler, and one
        // awaiting the (gone) client's reply would wait forever: a short
        // grace, then stop. The parent process dying stops it too.
        tokio::select! {
            _ = serve => {}
            _ = exit.notified() => {}
            _ = async {
                stdin_closed.notified().await;
                tokio::time::sleep(lifecycle::EOF_GRACE).await;
            } => {}
            _ = state.stopped() => {}
        }
    });
    // The stdin reader sits in a blocking read that would keep a normal
    // runtime drop waiting for input that never comes.
    runtime.shutdown_background();
    Ok(state.shutdown_requested())
}
