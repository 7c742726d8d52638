;;; e2e-support.el --- what the Emacs end-to-end scripts share  -*- lexical-binding: t; -*-

;; Loaded by e2e.el (eglot) and lsp-mode-e2e.el: logging to stderr,
;; checks that end the run with a message, the environment, and waiting
;; for the server while timers and process output run.

(require 'cl-lib)
(require 'subr-x)

(defvar e2e-timeout 30 "Seconds any one wait may take.")

(defun e2e-log (fmt &rest args)
  (princ (concat "[emacs-e2e] " (apply #'format fmt args) "\n") #'external-debugging-output))

(defun e2e-check (cond fmt &rest args)
  (unless cond (error "%s" (apply #'format fmt args))))

(defun e2e-env (name)
  (let ((v (getenv name)))
    (e2e-check (and v (not (string-empty-p v))) "%s is not set" name)
    v))

(defun e2e-wait (what pred)
  "Run timers and read the server until PRED holds; fail after a while."
  (let ((deadline (+ (float-time) e2e-timeout)))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun e2e-explain-file (message)
  "The file a one-line Explain MESSAGE names, checked to hold an explanation."
  (e2e-check (not (string-match-p "\n" message)) "a multi-line message: %S" message)
  (e2e-check (string-match "written to \\(.*\\) (file:" message) "no file named: %S" message)
  (let ((file (match-string 1 message)))
    (e2e-check (file-exists-p file) "%s does not exist" file)
    (with-temp-buffer
      (insert-file-contents file)
      (e2e-check (string-match-p "task_4" (buffer-string)) "explanation: %S" (buffer-string)))
    file))

(defun e2e-open (dir name)
  (find-file (expand-file-name name dir))
  (e2e-check (eq major-mode 'mapper-mode) "%s: major mode %s" name major-mode))

(provide 'e2e-support)
;;; e2e-support.el ends here
