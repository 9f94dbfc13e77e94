;;; fev-mode.el --- Major mode for kernel function-event scripts (*.fev)  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: GPL-2.0-only
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages, tools

;;; Commentary:

;; Editing support for function-event scripts (`func(type name+off[idx], ...)`, one
;; definition per line, `#` comments), checked by fevlint's language server:
;;
;;   (add-to-list 'load-path "/path/to/fevlint/editors/emacs")
;;   (require 'fev-mode)
;;   (add-hook 'fev-mode-hook #'eglot-ensure)     ; diagnostics, hover, fixes via Eglot
;;
;; Highlighting follows grammar/queries/highlights.scm (the tree-sitter grammar's single
;; source of highlighting): function, types, `unsigned`, `NULL`, parameter and
;; absolute-address names, `$symbol`, numbers and addresses, `+`, `=`. Eglot is told to
;; run `fevlint lsp` (`fev-mode-fevlint-program`); kernels come from a `fevlint.toml`
;; next to the scripts (or `eglot-workspace-configuration`: (:fevlint (:kernels [...]))).
;;
;; Tested headless under Emacs 28.2 + Eglot 1.9 against the real server by
;; server/tests/lsp_editors.rs (tests/editors/eglot_test.el).

;;; Code:

(require 'rx)

(defgroup fev nil
  "Kernel function-event scripts."
  :group 'languages
  :prefix "fev-mode-")

(defcustom fev-mode-fevlint-program "fevlint"
  "The fevlint executable Eglot runs as `PROGRAM lsp'."
  :type 'string
  :group 'fev)

(defconst fev-mode-types
  '("long" "int" "short" "char" "size_t" "u64" "s64" "x64" "u32" "s32" "x32"
    "u16" "s16" "x16" "u8" "s8" "x8" "symbol" "string")
  "Type keywords of a field (grammar.js ATOMS, and `string').")

(defvar fev-mode-syntax-table
  (let ((st (make-syntax-table)))
    (modify-syntax-entry ?# "<" st)
    (modify-syntax-entry ?\n ">" st)
    (modify-syntax-entry ?_ "_" st)
    (modify-syntax-entry ?$ "'" st)
    (modify-syntax-entry ?+ "." st)
    (modify-syntax-entry ?= "." st)
    (modify-syntax-entry ?| "." st)
    (modify-syntax-entry ?, "." st)
    (modify-syntax-entry ?\( "()" st)
    (modify-syntax-entry ?\) ")(" st)
    (modify-syntax-entry ?\[ "(]" st)
    (modify-syntax-entry ?\] ")[" st)
    st)
  "Syntax table for `fev-mode'.")

(defconst fev-mode--ident (rx (any "A-Za-z_") (* (any "A-Za-z0-9_"))))

(defconst fev-mode--type (concat "\\_<" (regexp-opt fev-mode-types) "\\_>")
  "A type keyword (no capture group).")

(defun fev-mode--in-args-p (pos)
  "Non-nil when POS is inside a definition's argument list, outside a comment."
  (let ((ppss (syntax-ppss pos)))
    (and (> (nth 0 ppss) 0) (not (nth 4 ppss)))))

(defun fev-mode--field-start-matcher (limit)
  "Find the next field start (`[unsigned] TYPE') before LIMIT.
A type keyword counts only right after `(', `,' or `|' (keywords are contextual:
in `int int' the second `int' is a name), as the kernel's parser reads them."
  (let (found)
    (while (and (not found)
                (re-search-forward
                 (rx (or "(" "," "|") (* (any " \t"))
                     (? (group "unsigned") (+ (any " \t")))
                     (group (regexp fev-mode--type)))
                 limit t))
      (when (fev-mode--in-args-p (match-beginning 2))
        (setq found t)))
    found))

(defun fev-mode--field-name-matcher (limit)
  "Find the target name of a field (after its type and array size) before LIMIT.
Group 1 is a parameter name, group 2 an absolute-address name (`name=...')."
  (let (found)
    (while (and (not found)
                (re-search-forward
                 (rx (or "(" "," "|") (* (any " \t"))
                     (? "unsigned" (+ (any " \t")))
                     (regexp fev-mode--type)
                     (* (any " \t")) (? "[" (* (any " \t")) (+ (any "A-Za-z0-9_")) (* (any " \t")) "]")
                     (* (any " \t"))
                     (group (any "A-Za-z_") (* (any "A-Za-z0-9_"))))
                 limit t))
      (when (fev-mode--in-args-p (match-beginning 1))
        (let ((name-beg (match-beginning 1)) (name-end (match-end 1)))
          (save-excursion
            (goto-char name-end)
            ;; Redirects, then `=': an absolute-address field.
            (if (looking-at (rx (* (* (any " \t")) (or (seq "+" (* (any " \t")) (+ (any "A-Za-z0-9_")))
                                                        (seq "[" (* (any " \t")) (* (any "A-Za-z0-9_")) (* (any " \t")) "]")))
                                (* (any " \t")) "="))
                (set-match-data (list name-beg name-end nil nil name-beg name-end))
              (set-match-data (list name-beg name-end name-beg name-end))))
          (goto-char name-end)
          (setq found t))))
    found))

(defvar fev-mode-font-lock-keywords
  `(;; The function: the identifier opening a line, before `('.
    (,(rx bol (* (any " \t")) (group (regexp fev-mode--ident)) (* (any " \t")) "(")
     (1 font-lock-function-name-face))
    (fev-mode--field-start-matcher
     (1 font-lock-type-face nil t)
     (2 font-lock-type-face))
    (fev-mode--field-name-matcher
     (1 font-lock-variable-name-face nil t)
     (2 font-lock-variable-name-face nil t))
    (,(rx (or "(" "," "|") (* (any " \t")) (group "NULL") symbol-end)
     (1 font-lock-constant-face))
    (,(rx (group "$") (* (any " \t")) (group (regexp fev-mode--ident)))
     (1 font-lock-preprocessor-face) (2 font-lock-constant-face))
    (,(rx symbol-start (or (seq "0x" (* (any "A-Za-z0-9_"))) (seq (any "0-9") (* (any "A-Za-z0-9_")))))
     . 'fev-mode-number-face)
    (,(rx (any "+=")) . 'fev-mode-operator-face))
  "Font-lock keywords for `fev-mode', after grammar/queries/highlights.scm.")

(defface fev-mode-number-face '((t :inherit font-lock-constant-face))
  "Numbers and addresses (`@number' in highlights.scm)."
  :group 'fev)

(defface fev-mode-operator-face '((t :inherit font-lock-keyword-face))
  "`+' and `=' (`@operator' in highlights.scm)."
  :group 'fev)

(defun fev-mode-eglot-contact (&optional _interactive)
  "The Eglot contact for fevlint: `fev-mode-fevlint-program lsp'."
  (list fev-mode-fevlint-program "lsp"))

;;;###autoload
(define-derived-mode fev-mode prog-mode "fev"
  "Major mode for kernel function-event scripts (*.fev), checked by fevlint."
  :syntax-table fev-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local comment-end "")
  (setq-local font-lock-defaults '(fev-mode-font-lock-keywords))
  (setq-local imenu-generic-expression
              `((nil ,(rx bol (* (any " \t")) (group (regexp fev-mode--ident)) (* (any " \t")) "(") 1)))
  (setq-local indent-tabs-mode nil))

;;;###autoload
(define-derived-mode dynevents-mode prog-mode "dynevents"
  "Major mode for mainline probe definitions (*.dynevents, kprobe_events).
Checked by fevlint, as `fev-mode' scripts are."
  :syntax-table fev-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local comment-end "")
  (setq-local font-lock-defaults '(nil))
  (setq-local indent-tabs-mode nil))

;;;###autoload
(define-derived-mode fev-bpftrace-mode prog-mode "bpftrace"
  "Major mode for bpftrace scripts (*.bt), checked by fevlint against kernels.
Only comments and the language server; a bpftrace mode can replace it."
  (setq-local comment-start "// ")
  (setq-local comment-start-skip "\\(?://+\\|/\\*+\\)[ \t]*")
  (setq-local comment-end "")
  (modify-syntax-entry ?/ ". 124b" (syntax-table))
  (modify-syntax-entry ?* ". 23" (syntax-table))
  (modify-syntax-entry ?\n "> b" (syntax-table))
  (setq-local indent-tabs-mode nil))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.fev\\'" . fev-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("\\.bt\\'" . fev-bpftrace-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("\\.dynevents\\'" . dynevents-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("/\\(?:kprobe\\|dynamic\\)_events\\'" . dynevents-mode))

(with-eval-after-load 'eglot
  (defvar eglot-server-programs)
  ;; Eglot names the language after the mode: `fev' and `dynevents', as the server expects.
  (add-to-list 'eglot-server-programs '(fev-mode . fev-mode-eglot-contact))
  (add-to-list 'eglot-server-programs '(dynevents-mode . fev-mode-eglot-contact))
  ;; The server knows a bpftrace script by its `.bt' name (Eglot sends `fev-bpftrace').
  (add-to-list 'eglot-server-programs '(fev-bpftrace-mode . fev-mode-eglot-contact)))

(provide 'fev-mode)
;;; fev-mode.el ends here
