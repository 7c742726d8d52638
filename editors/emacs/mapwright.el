;;; mapwright.el --- Legion mapper files with the mapwright language server  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages

;;; Commentary:

;; A small major mode for Legion mapper DSL files (`*.mapper',
;; `*.mappings', `mappings', `*_mappings') and its registration with eglot:
;; all language intelligence (diagnostics, quick fixes, hover, completion,
;; formatting) comes from `mapwright lsp'.  Set-up: docs/editors.md.
;;
;;   (add-to-list 'load-path "/path/to/mapwright/editors/emacs")
;;   (require 'mapwright)
;;   (add-hook 'mapper-mode-hook #'eglot-ensure)
;;
;; The server program is `mapwright-server-command' (default: `mapwright'
;; on PATH).  Settings (`app', `machine', ...) go in a `mapwright.toml'
;; beside the mapper files, or in `eglot-workspace-configuration' under
;; `:mapwright'.

;;; Code:

(defgroup mapwright nil
  "Legion mapper DSL with the mapwright language server."
  :group 'languages)

(defcustom mapwright-server-command '("mapwright" "lsp" "--stdio")
  "The language server's command line: the program and its arguments."
  :type '(repeat string))

(defconst mapwright--keywords
  '("Task" "Region" "Layout" "InstanceLimit" "CollectMemory" "IndexTaskMap"
    "SingleTaskMap" "ControlReplicate" "def" "return" "print" "for" "in"
    "tuple" "True" "False")
  "Statement and expression keywords.")

(defconst mapwright--constants
  '("CPU" "GPU" "IO" "PY" "PROC" "OMP" "SYSMEM" "FBMEM" "RDMEM" "ZCMEM"
    "SOCKMEM" "VIRTUAL" "F_order" "C_order" "AOS" "SOA" "Compact" "Align"
    "Exact")
  "Processor kinds, memory kinds and layout constraints.")

(defconst mapwright--types '("int" "bool" "IPoint" "ISpace" "MSpace")
  "Type names.")

(defvar mapper-mode-syntax-table
  (let ((table (make-syntax-table)))
    ;; `#' and `//' comments run to the end of the line.
    (modify-syntax-entry ?# "<" table)
    (modify-syntax-entry ?/ ". 12" table)
    (modify-syntax-entry ?\n ">" table)
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?\" "\"" table)
    table)
  "Syntax table of `mapper-mode'.")

(defvar mapper-mode-font-lock-keywords
  `((,(regexp-opt mapwright--keywords 'symbols) . font-lock-keyword-face)
    (,(regexp-opt mapwright--constants 'symbols) . font-lock-constant-face)
    (,(regexp-opt mapwright--types 'symbols) . font-lock-type-face)
    ("\\_<def\\s-+\\(\\sw\\(?:\\sw\\|\\s_\\)*\\)" 1 font-lock-function-name-face))
  "Highlighting of `mapper-mode'.")

;;;###autoload
(define-derived-mode mapper-mode prog-mode "Mapper"
  "Major mode for Legion mapper DSL files."
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "\\(?:#\\|//\\)+\\s-*")
  (setq-local font-lock-defaults '(mapper-mode-font-lock-keywords))
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width 4))

;;;###autoload
(add-to-list 'auto-mode-alist
             '("\\(?:\\.mapper\\|\\.mappings\\|/mappings\\|_mappings\\)\\'" . mapper-mode))

;; The language id `mapper', the one the VS Code and Neovim clients send.
;;;###autoload
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((mapper-mode :language-id "mapper")
                 . ,(lambda (&rest _) mapwright-server-command))))

(provide 'mapwright)
;;; mapwright.el ends here
