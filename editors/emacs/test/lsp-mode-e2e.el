;;; lsp-mode-e2e.el --- headless end-to-end check with lsp-mode  -*- lexical-binding: t; -*-

;; Run by tests/tests/emacs_e2e.rs as
;;
;;   emacs --batch -l editors/emacs/test/lsp-mode-e2e.el
;;
;; with the environment of e2e.el (MAPWRIGHT_SERVER, MAPWRIGHT_EMACS_PACKAGE,
;; MAPWRIGHT_E2E_DIR with `mapwright.toml', `semicolon.mapper' and
;; `layout.mapper').  lsp-mode 8.0 (Debian 12's `elpa-lsp-mode') with the
;; client registration docs/editors.md gives.  lsp-mode sends the line's
;; diagnostics as the code-action context and lists the actions in the
;; server's order, so the first one is what RET takes in a completion UI
;; (ivy, vertico): it must be the `;' at a missing `;'.  lsp-mode declares
;; Markdown, so hovers are Markdown here, and no `window/showDocument'.

(require 'package)
(package-initialize)
;; Batch mode: no prompts (project root), no session file in $HOME; set
;; before lsp-mode is loaded (its macros are needed below).
(setq lsp-auto-guess-root t
      lsp-session-file (expand-file-name "lsp-session" (getenv "MAPWRIGHT_E2E_DIR"))
      lsp-enable-snippet nil
      lsp-keep-workspace-alive nil
      lsp-log-io t)
(require 'lsp-mode)
(load (expand-file-name "e2e-support.el" (file-name-directory load-file-name)) nil t)
(defvar e2e-messages nil "The server's `window/showMessage' texts, newest first.")

(defun e2e-codes ()
  "The codes of the current buffer's diagnostics, as lsp-mode keeps them."
  (mapcar (lambda (d) (gethash "code" d))
          (gethash (buffer-file-name) (lsp-diagnostics t))))

(defun e2e-wait-codes (what pred)
  (condition-case err
      (e2e-wait what (lambda () (funcall pred (e2e-codes))))
    (error (error "%s; the diagnostics are %S" (error-message-string err) (e2e-codes)))))

(defun e2e-code-action (pick)
  "M-x lsp-execute-code-action at point; PICK nil takes the first action
offered (RET in a completion UI), else the one whose title starts with
PICK.  Returns the titles offered."
  (let (offered)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _)
                 (setq offered (all-completions "" collection))
                 (if (null pick) (car offered)
                   (or (cl-find-if (lambda (title) (string-prefix-p pick title)) offered)
                       (error "no action `%s...' among %S" pick offered))))))
      (call-interactively #'lsp-execute-code-action))
    offered))

(defun e2e-run ()
  (let ((dir (file-name-as-directory (e2e-env "MAPWRIGHT_E2E_DIR")))
        (server-bin (e2e-env "MAPWRIGHT_SERVER")))
    (add-to-list 'load-path (e2e-env "MAPWRIGHT_EMACS_PACKAGE"))
    (require 'mapwright)
    (e2e-log "Emacs %s, lsp-mode" emacs-version)
    ;; The registration of docs/editors.md.
    (add-to-list 'lsp-language-id-configuration '(mapper-mode . "mapper"))
    (lsp-register-client
     (make-lsp-client
      :new-connection (lsp-stdio-connection (lambda () (list server-bin "lsp" "--stdio")))
      :activation-fn (lsp-activate-on "mapper")
      :server-id 'mapwright))
    ;; lsp-mode shows the server's messages with `message' (its handler
    ;; table holds the handler itself, so advising it would not see them).
    (advice-add 'message :before
                (lambda (format &rest args)
                  (when (stringp format)
                    (push (apply #'format-message format args) e2e-messages))))

    ;; 1. Diagnostics, and the `;' first at a missing `;'.
    (e2e-open dir "semicolon.mapper")
    (lsp)
    (e2e-wait "the server" (lambda ()
                             (and (lsp-workspaces)
                                  (eq (lsp--workspace-status (car (lsp-workspaces)))
                                      'initialized))))
    (e2e-wait-codes "E0101 and E0305"
                    (lambda (c) (and (member "E0101" c) (member "E0305" c))))
    (goto-char (point-max))
    (e2e-log "offered at E0101: %S" (e2e-code-action nil))
    (e2e-check (string= (buffer-string) "Task * GPU;")
               "the first action gave %S" (buffer-string))
    (e2e-wait-codes "E0101 to go"
                    (lambda (c) (and (not (member "E0101" c)) (member "E0305" c))))
    (save-buffer)

    ;; 2. The layout quick fix.
    (e2e-open dir "layout.mapper")
    (lsp)
    (e2e-wait-codes "E0305" (lambda (c) (member "E0305" c)))
    (goto-char (point-min))
    (search-forward "F_order")
    (backward-char 2)
    (e2e-log "offered at F_order: %S" (e2e-code-action "change `F_order` to `C_order`"))
    (e2e-check (string-match-p "Layout task_4 \\* \\* SOA C_order;" (buffer-string))
               "the layout fix gave %S" (buffer-string))
    (e2e-wait-codes "E0305 to go" (lambda (c) (not (member "E0305" c))))

    ;; 3. Hover: lsp-mode takes Markdown.
    (goto-char (point-min))
    (forward-char 1)
    (let* ((hover (lsp-request "textDocument/hover" (lsp--text-document-position-params)))
           (contents (gethash "contents" hover)))
      (e2e-check (equal (gethash "kind" contents) "markdown") "hover %S" contents)
      (e2e-check (string-match-p "Processor placement" (gethash "value" contents))
                 "hover %S" (gethash "value" contents)))

    ;; 4. Completion.
    (goto-char (point-max))
    (insert "Task task_1 G")
    (let* ((capf (lsp-completion-at-point))
           (items (all-completions (buffer-substring (nth 0 capf) (nth 1 capf)) (nth 2 capf))))
      (e2e-log "completions: %S" (mapcar #'substring-no-properties items))
      (e2e-check (member "GPU" items) "no GPU among %S" items))
    (delete-region (line-beginning-position) (point-max))

    ;; 5. Formatting.
    (lsp-format-buffer)
    (save-buffer)
    (e2e-log "formatted: %S" (buffer-string))

    ;; 6. Explain: lsp-mode has no window/showDocument either.
    (setq e2e-messages nil)
    (e2e-code-action "Explain mapping decisions")
    (e2e-wait "the explain message"
              (lambda () (cl-find-if (lambda (m) (string-match-p "written to" m)) e2e-messages)))
    (let ((m (cl-find-if (lambda (m) (string-match-p "written to" m)) e2e-messages)))
      (e2e-log "explain: %s" m)
      ;; lsp-mode prefixes the server's text with `LSP :: '.
      (e2e-explain-file m))

    ;; 7. Shutdown and exit as lsp-mode sends them (`shutdown' with
    ;; `"params": {}'); the server must answer and end by itself with
    ;; status 0.  (`lsp-workspace-shutdown' kills the process right after
    ;; `exit', so it cannot tell a clean exit from a kill.)
    (let* ((workspace (car (lsp-workspaces)))
           (process (lsp--workspace-proc workspace)))
      (with-lsp-workspace workspace
        (lsp-request "shutdown" lsp--empty-ht)
        (lsp-notify "exit" nil))
      (e2e-wait "the server to exit" (lambda () (not (process-live-p process))))
      (e2e-log "server exited: %s %s" (process-status process) (process-exit-status process))
      (e2e-check (and (eq (process-status process) 'exit)
                      (eq 0 (process-exit-status process)))
                 "the server ended with %s %s"
                 (process-status process) (process-exit-status process))
      ;; Nothing left for lsp-mode to shut down when Emacs ends.
      (remove-hook 'kill-emacs-hook #'lsp--global-teardown))))

(condition-case err
    (progn (e2e-run)
           (e2e-log "OK")
           (kill-emacs 0))
  (error (e2e-log "FAIL: %s" (error-message-string err))
         ;; The conversation, for the test's log.
         (dolist (buffer (buffer-list))
           (when (string-prefix-p "*lsp-log" (buffer-name buffer))
             (with-current-buffer buffer
               (write-region (concat "--- " (buffer-name buffer) "\n") nil
                             (expand-file-name "eglot-events.log" (getenv "MAPWRIGHT_E2E_DIR"))
                             'append 'quiet)
               (write-region (point-min) (point-max)
                             (expand-file-name "eglot-events.log" (getenv "MAPWRIGHT_E2E_DIR"))
                             'append 'quiet))))
         (kill-emacs 1)))
;;; lsp-mode-e2e.el ends here
