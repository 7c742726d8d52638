;;; e2e.el --- headless end-to-end check of mapwright.el with eglot  -*- lexical-binding: t; -*-

;; Run by tests/tests/emacs_e2e.rs as
;;
;;   emacs --batch -l editors/emacs/test/e2e.el
;;
;; with MAPWRIGHT_SERVER (the binary), MAPWRIGHT_EMACS_PACKAGE (the folder
;; of mapwright.el) and MAPWRIGHT_E2E_DIR (a project: `mapwright.toml'
;; naming cannon, `semicolon.mapper' and `layout.mapper', edited in place).
;; Each step does what a user does, through eglot's own commands where it
;; has one: `eglot-code-actions' answered with the default (RET) or with a
;; chosen title, `eglot-format-buffer', `eglot-completion-at-point'.  Any
;; failure ends Emacs with exit code 1 and a message (and the conversation
;; in eglot-events.log); success with 0.  Only Emacs 28 / eglot 1.9 APIs
;; (Debian 12's `emacs-nox' and `elpa-eglot').

(require 'cl-lib)
(require 'package)
(package-initialize)
(require 'eglot)
(require 'flymake)

(load (expand-file-name "e2e-support.el" (file-name-directory load-file-name)) nil t)
(defvar e2e-messages nil "The server's `window/showMessage' texts, newest first.")

(defun e2e-lsp-diag (d)
  (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))))

(defun e2e-codes ()
  "The codes of the current buffer's flymake diagnostics."
  (mapcar (lambda (d) (plist-get (e2e-lsp-diag d) :code)) (flymake-diagnostics)))

(defun e2e-diag (code)
  (cl-find-if (lambda (d) (equal code (plist-get (e2e-lsp-diag d) :code)))
              (flymake-diagnostics)))

(defun e2e-wait-codes (what pred)
  "Wait until PRED holds for the diagnostic codes."
  (condition-case err
      (e2e-wait what (lambda ()
                       ;; Idle timers never fire in batch mode: send the
                       ;; pending didChange and re-run flymake, as their
                       ;; idle timers do in an interactive session.
                       (eglot--signal-textDocument/didChange)
                       (unless (funcall pred (e2e-codes))
                         (flymake-start))
                       (funcall pred (e2e-codes))))
    (error (error "%s; the diagnostics are %S" (error-message-string err) (e2e-codes)))))

(defun e2e-code-action (pick)
  "M-x eglot-code-actions at point; PICK nil answers with the default
(RET), else with the title that starts with PICK.  Returns the titles
offered."
  (let (offered)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &optional _pred _req _init _hist default &rest _)
                 (setq offered (mapcar #'car collection))
                 (if (null pick) default
                   (or (cl-find-if (lambda (title) (string-prefix-p pick title)) offered)
                       (error "no action `%s...' among %S" pick offered))))))
      ;; A keyboard event, not a mouse one: eglot asks in the minibuffer.
      (let ((last-nonmenu-event ?\r))
        (call-interactively #'eglot-code-actions)))
    offered))

(defun e2e-run ()
  (let* ((server-bin (e2e-env "MAPWRIGHT_SERVER"))
         (dir (file-name-as-directory (e2e-env "MAPWRIGHT_E2E_DIR")))
         server)
    (add-to-list 'load-path (e2e-env "MAPWRIGHT_EMACS_PACKAGE"))
    (require 'mapwright)
    (setq mapwright-server-command (list server-bin "lsp" "--stdio"))
    (e2e-log "Emacs %s" emacs-version)
    (advice-add 'eglot-handle-notification :before
                (lambda (_server method &rest args)
                  (when (eq method 'window/showMessage)
                    (push (plist-get args :message) e2e-messages))))
    ;; Never ask: this is a batch session.
    (setq eglot-confirm-server-initiated-edits nil)
    ;; The set-up of issue 39: eglot without markdown-mode, which then
    ;; declares plain text only for hovers.  (Debian's elpa-lsp-mode pulls
    ;; markdown-mode in; with it, eglot asks for Markdown instead.)
    (when (fboundp 'gfm-view-mode)
      (fmakunbound 'gfm-view-mode))

    ;; 1. Diagnostics, and the `;' fix as the default action.  `Task * GPU'
    ;; with cannon has E0101 (missing `;') at its end and E0305 on the
    ;; whole statement; eglot sends both in the context, E0305 first.
    ;; RET must insert the `;'.
    (e2e-open dir "semicolon.mapper")
    (apply #'eglot (eglot--guess-contact))
    (e2e-wait "the server" (lambda () (eglot-current-server)))
    (setq server (eglot-current-server))
    (flymake-start)
    (e2e-wait-codes "E0101 and E0305"
                    (lambda (c) (and (member "E0101" c) (member "E0305" c))))
    (e2e-log "diagnostics: %S" (e2e-codes))
    (goto-char (flymake-diagnostic-beg (e2e-diag "E0101")))
    (e2e-log "offered at E0101: %S" (e2e-code-action nil))
    (e2e-check (string= (buffer-string) "Task * GPU;")
               "the default action gave %S" (buffer-string))
    (e2e-wait-codes "E0101 to go"
                    (lambda (c) (and (not (member "E0101" c)) (member "E0305" c))))
    (save-buffer)

    ;; 2. The layout quick fix: one word in the statement that decides.
    (e2e-open dir "layout.mapper")
    (e2e-wait-codes "E0305" (lambda (c) (member "E0305" c)))
    (goto-char (point-min))
    (search-forward "F_order")
    (backward-char 2)
    (e2e-log "offered at F_order: %S"
             (e2e-code-action "change `F_order` to `C_order`"))
    (e2e-check (string-match-p "Layout task_4 \\* \\* SOA C_order;" (buffer-string))
               "the layout fix gave %S" (buffer-string))
    (e2e-wait-codes "E0305 to go" (lambda (c) (not (member "E0305" c))))

    ;; 3. Hover, as plain text: eglot without markdown-mode declares
    ;; plaintext only.
    (goto-char (point-min))
    (forward-char 1)
    (let* ((hover (jsonrpc-request server :textDocument/hover
                                   (eglot--TextDocumentPositionParams)))
           (contents (plist-get hover :contents))
           (value (plist-get contents :value)))
      (e2e-log "hover: %S" value)
      (e2e-check (equal (plist-get contents :kind) "plaintext") "hover kind %S" contents)
      (e2e-check (string-match-p "Processor placement" value) "hover %S" value)
      (e2e-check (not (string-match-p "```\\|\\*\\*\\|`" value))
                 "Markdown in the hover: %S" value))

    ;; 4. Completion of a processor kind, its documentation plain too.
    (goto-char (point-max))
    (insert "Task task_1 G")
    (let* ((capf (eglot-completion-at-point))
           (items (all-completions (buffer-substring (nth 0 capf) (nth 1 capf))
                                   (nth 2 capf)))
           (docs (delq nil (mapcar (lambda (c)
                                     (plist-get (get-text-property 0 'eglot--lsp-item c)
                                                :documentation))
                                   items))))
      (e2e-log "completions: %S" (mapcar #'substring-no-properties items))
      (e2e-check (member "GPU" items) "no GPU among %S" items)
      (e2e-check docs "no completion documentation")
      (dolist (d docs)
        (e2e-check (or (stringp d) (equal (plist-get d :kind) "plaintext"))
                   "completion documentation %S" d)))
    (delete-region (line-beginning-position) (point-max))

    ;; 5. Formatting.
    (eglot-format-buffer)
    (save-buffer)
    (e2e-log "formatted: %S" (buffer-string))

    ;; 6. Explain, without window/showDocument (eglot 1.9 has none): a
    ;; one-line message naming a file that holds the explanation.
    (setq e2e-messages nil)
    (e2e-code-action "Explain mapping decisions")
    (e2e-wait "the explain message" (lambda () e2e-messages))
    (e2e-log "explain: %s" (car e2e-messages))
    (e2e-explain-file (car e2e-messages))

    ;; 7. Shutdown and exit, as `eglot-shutdown' sends them; the server
    ;; must then end by itself with status 0.  (`eglot-shutdown' deletes
    ;; the process right after `exit' without waiting, so it cannot tell
    ;; a clean exit from a kill.)
    (let ((process (jsonrpc--process server)))
      (setf (eglot--shutdown-requested server) t)
      (jsonrpc-request server :shutdown nil :timeout 5)
      (jsonrpc-notify server :exit nil)
      (e2e-wait "the server to exit" (lambda () (not (process-live-p process))))
      (e2e-log "server exited: %s %s" (process-status process) (process-exit-status process))
      (e2e-check (and (eq (process-status process) 'exit)
                      (eq 0 (process-exit-status process)))
                 "the server ended with %s %s"
                 (process-status process) (process-exit-status process)))))

(defun e2e-save-events ()
  "The conversation with the server, for the test's log."
  (dolist (servers (hash-table-values eglot--servers-by-project))
    (dolist (server servers)
      (when-let ((events (jsonrpc-events-buffer server)))
        (with-current-buffer events
          (write-region (point-min) (point-max)
                        (expand-file-name "eglot-events.log" (getenv "MAPWRIGHT_E2E_DIR"))
                        nil 'quiet))))))

(condition-case err
    (progn (e2e-run)
           (e2e-log "OK")
           (kill-emacs 0))
  (error (e2e-log "FAIL: %s" (error-message-string err))
         (ignore-errors (e2e-save-events))
         (kill-emacs 1)))
;;; e2e.el ends here
