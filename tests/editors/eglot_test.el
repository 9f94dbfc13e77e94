;;; eglot_test.el --- fevlint lsp under Emacs + Eglot, headless  -*- lexical-binding: t; -*-
;;
;;   FEVLINT=target/debug/fevlint emacs --batch -l tests/editors/eglot_test.el tests/editors/problems.fev
;;
;; (--batch, not -Q: Debian's site-start puts elpa-eglot on the load-path.)
;; Opens a copy of the file through Eglot, checks the published diagnostics, a hover,
;; completion in a half-typed line sent as an incremental change, and the S003 fix
;; applied with Eglot's own workspace-edit code; a `.bt' script's kernel diagnostic
;; (tests/editors/kernel/kernel.bt). Prints a JSON report; exit 0 when
;; every check passed, 1 otherwise. Run by server/tests/lsp_editors.rs.

(require 'eglot)
(require 'json)
(require 'cl-lib)

(defvar fev-test-timeout 15)
(defvar fev-test-publish nil "Raw publishDiagnostics params, newest first.")
(defvar fev-test-checks nil)
(defvar fev-test-failures nil)
(defvar fev-test-report nil)
(defvar fev-test-root default-directory "The repository root (the tests run from there).")

(defun fev-test-codes-of (suffix)
  "The last diagnostics published for the file ending in SUFFIX, as \"CODE@LINE:COL ...\"."
  (let ((last (cl-find-if (lambda (p) (string-suffix-p suffix (plist-get p :uri))) fev-test-publish)))
    (mapconcat (lambda (d)
                 (let ((start (plist-get (plist-get d :range) :start)))
                   (format "%s@%d:%d" (plist-get d :code) (plist-get start :line) (plist-get start :character))))
               (and last (plist-get last :diagnostics)) " ")))

;; The shipped major mode (editors/emacs/fev-mode.el): auto-mode-alist, font-lock and
;; its Eglot registration are what this test exercises.
(load (expand-file-name "editors/emacs/fev-mode.el" fev-test-root) nil t)
(setq fev-mode-fevlint-program (or (getenv "FEVLINT") "fevlint"))
(setq eglot-sync-connect fev-test-timeout eglot-connect-timeout fev-test-timeout eglot-autoshutdown nil
      eglot-send-changes-idle-time 0.01)

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (push (list :uri uri :diagnostics diagnostics) fev-test-publish))

(defun fev-test-check (name ok &optional detail)
  (push name fev-test-checks)
  (unless ok (push (format "%s: %S" name detail) fev-test-failures))
  ok)

(defun fev-test-wait (pred)
  (let ((deadline (+ (float-time) fev-test-timeout)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (funcall pred)))

(defun fev-test-codes ()
  "The last published diagnostics as \"CODE@LINE:COL ...\"."
  (let ((last (car fev-test-publish)))
    (mapconcat (lambda (d)
                 (let ((start (plist-get (plist-get d :range) :start)))
                   (format "%s@%d:%d" (plist-get d :code) (plist-get start :line) (plist-get start :character))))
               (and last (plist-get last :diagnostics)) " ")))

(defun fev-test-wait-codes (want)
  (fev-test-wait (lambda () (equal (fev-test-codes) want)))
  (fev-test-codes))

;; Highlighting, as grammar/queries/highlights.scm captures it.
(with-temp-buffer
  (insert "vfs_read(symbol read+16[0]+24[0], u32 a=0x10, x64 x | NULL, int int, unsigned char $sym) # c\n")
  (fev-mode)
  (font-lock-ensure)
  (let ((faces nil))
    ;; (TEXT OFFSET FACE): the face at OFFSET into the first occurrence of TEXT.
    (dolist (probe '(("vfs_read" 0 font-lock-function-name-face)
                     ("symbol read" 0 font-lock-type-face)
                     ("symbol read" 7 font-lock-variable-name-face)
                     ("read+16" 4 fev-mode-operator-face)
                     ("read+16" 5 fev-mode-number-face)
                     ("u32 a=" 4 font-lock-variable-name-face)
                     ("a=0x10" 1 fev-mode-operator-face)
                     ("a=0x10" 2 fev-mode-number-face)
                     ("x64 x |" 4 font-lock-variable-name-face)
                     ("| NULL" 2 font-lock-constant-face)
                     ("int int" 0 font-lock-type-face)
                     ("int int" 4 font-lock-variable-name-face)
                     ("unsigned char" 0 font-lock-type-face)
                     ("unsigned char" 9 font-lock-type-face)
                     ("$sym" 0 font-lock-preprocessor-face)
                     ("$sym" 1 font-lock-constant-face)
                     ("# c" 2 font-lock-comment-face)))
      (goto-char (point-min))
      (search-forward (nth 0 probe))
      (let* ((pos (+ (match-beginning 0) (nth 1 probe)))
             (face (get-text-property pos 'face))
             (name (format "%s@%d" (nth 0 probe) (nth 1 probe))))
        (push (format "%s=%s" name face) faces)
        (fev-test-check (format "face of %s" name)
                        (if (listp face) (memq (nth 2 probe) face) (eq face (nth 2 probe)))
                        face)))
    (push :faces fev-test-report) (push (vconcat (reverse faces)) fev-test-report)))

(let* ((src (expand-file-name (car command-line-args-left)))
       (dir (make-temp-file "fev-eglot" t))
       (file (expand-file-name "problems.fev" dir))
       server)
  (setq command-line-args-left nil)
  (copy-file src file)
  (with-current-buffer (find-file-noselect file)
    (fev-test-check "fev-mode from auto-mode-alist" (eq major-mode 'fev-mode) major-mode)
    (condition-case err
        (progn (apply #'eglot (eglot--guess-contact)) (setq server (eglot-current-server)))
      (error (fev-test-check "connect" nil err)))
    (when (fev-test-check "eglot connected" server)
      (let ((codes (fev-test-wait-codes "S001@1:16 S003@2:18")))
        (fev-test-check "exactly S001 at x86 and S003 at +8" (equal codes "S001@1:16 S003@2:18") codes))
      (let* ((s001 (aref (plist-get (car fev-test-publish) :diagnostics) 0))
             (text (concat (plist-get s001 :message)
                           (mapconcat (lambda (r) (concat "\n" (plist-get r :message)))
                                      (plist-get s001 :relatedInformation) ""))))
        (push :s001 fev-test-report) (push s001 fev-test-report)
        (fev-test-check "S001 note quotes the kernel"
                        (string-match-p (regexp-quote "kernel: Unexpected token 'x86' for COMMA state") text) text)
        ;; Eglot declares `codeDescriptionSupport' false: no rule link is sent to it.
        (fev-test-check "S001 source, no code description"
                        (and (equal (plist-get s001 :source) "fevlint")
                             (not (plist-member s001 :codeDescription)))
                        s001))
      ;; Hover on `read` in `__vfs_read(symbol read+40[0]+16)`.
      (let* ((hover (jsonrpc-request server :textDocument/hover
                                     (list :textDocument (eglot--TextDocumentIdentifier)
                                           :position '(:line 3 :character 19))))
             (value (plist-get (plist-get hover :contents) :value)))
        (push :hover fev-test-report) (push value fev-test-report)
        (fev-test-check "hover says what is read"
                        (and value (string-match-p (regexp-quote "*(u64 *)(param0 + 40) + 16") value)
                             (string-match-p "`rdi`" value))
                        value))
      ;; A half-typed line, sent by Eglot as an incremental change.
      (goto-char (point-max))
      (insert "vfs_read(int fd, x")
      (eglot--signal-textDocument/didChange)
      (let ((codes (fev-test-wait-codes "S001@1:16 S003@2:18 S001@4:17")))
        (fev-test-check "half-typed line is an error" (equal codes "S001@1:16 S003@2:18 S001@4:17") codes))
      (let* ((res (jsonrpc-request server :textDocument/completion
                                   (list :textDocument (eglot--TextDocumentIdentifier)
                                         :position '(:line 4 :character 18))))
             (items (if (vectorp res) res (plist-get res :items)))
             (labels (mapcar (lambda (i) (plist-get i :label)) items)))
        (push :completion fev-test-report) (push (vconcat labels) fev-test-report)
        (fev-test-check "completion offers x64, NULL, unsigned"
                        (and (member "x64" labels) (member "NULL" labels) (member "unsigned" labels)) labels))
      (delete-region (line-beginning-position) (point-max))
      (eglot--signal-textDocument/didChange)
      (let ((codes (fev-test-wait-codes "S001@1:16 S003@2:18")))
        (fev-test-check "deleting the line clears its error" (equal codes "S001@1:16 S003@2:18") codes))
      ;; The S003 quick fix, applied by Eglot.
      (let* ((actions (jsonrpc-request server :textDocument/codeAction
                                       (list :textDocument (eglot--TextDocumentIdentifier)
                                             :range '(:start (:line 2 :character 18) :end (:line 2 :character 20))
                                             :context '(:diagnostics []))))
             (remove (cl-find-if (lambda (a) (string-prefix-p "Remove" (plist-get a :title))) actions)))
        (push :code-actions fev-test-report)
        (push (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)) fev-test-report)
        (when (fev-test-check "S003 remove action offered" remove actions)
          (eglot--apply-workspace-edit (plist-get remove :edit))
          (eglot--signal-textDocument/didChange)
          (let ((codes (fev-test-wait-codes "S001@1:16")))
            (fev-test-check "S003 gone after the fix" (equal codes "S001@1:16") codes))
          (goto-char (point-min)) (forward-line 2)
          (let ((line (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
            (fev-test-check "fixed line" (equal line "do_IRQ(int counter=0xffffffff82354c18)") line))))
      ;; Kernel-aware features: a folder whose fevlint.toml names the 6.12.117 fixture.
      (let* ((kdir (expand-file-name "kernel" dir))
             (kfile (expand-file-name "kernel.fev" kdir))
             kserver)
        (make-directory kdir t)
        (with-temp-file (expand-file-name "fevlint.toml" kdir)
          (insert (format "kernels = [%S]\n"
                          (expand-file-name "fixtures/kernels/6.12.117+deb12-amd64" fev-test-root))))
        (copy-file (expand-file-name "tests/editors/kernel/kernel.fev" fev-test-root) kfile)
        (with-current-buffer (find-file-noselect kfile)
          (condition-case err
              (progn (apply #'eglot (eglot--guess-contact)) (setq kserver (eglot-current-server)))
            (error (fev-test-check "connect (kernel)" nil err)))
          (when (fev-test-check "eglot connected (kernel)" kserver)
            (let ((fev-test-timeout 30))
              (fev-test-wait (lambda () (equal (fev-test-codes-of "kernel/kernel.fev") "K201@1:0 T406@2:22"))))
            (let ((codes (fev-test-codes-of "kernel/kernel.fev")))
              (fev-test-check "kernel diagnostics K201 and T406" (equal codes "K201@1:0 T406@2:22") codes))
            (let* ((hover (jsonrpc-request kserver :textDocument/hover
                                           (list :textDocument (eglot--TextDocumentIdentifier)
                                                 :position '(:line 2 :character 3))))
                   (value (plist-get (plist-get hover :contents) :value)))
              (push :kernel-hover fev-test-report) (push value fev-test-report)
              (fev-test-check "kernel hover lists the registers"
                              (and value (string-match-p (regexp-quote "slot 0 `rdi`: `struct file *` file") value)
                                   (string-match-p (regexp-quote "slot 3 `rcx`") value))
                              value))
            (ignore-errors (eglot-shutdown kserver nil 3))))
        ;; A bpftrace script in the same folder: `fev-bpftrace-mode', its own Eglot server
        ;; (one more `fevlint lsp' and kernel load: about 2 s of the test's 5), K210 on the kernel.
        (let ((bfile (expand-file-name "kernel.bt" kdir))
              bserver)
          (copy-file (expand-file-name "tests/editors/kernel/kernel.bt" fev-test-root) bfile)
          (with-current-buffer (find-file-noselect bfile)
            (fev-test-check "fev-bpftrace-mode from auto-mode-alist" (eq major-mode 'fev-bpftrace-mode) major-mode)
            (condition-case err
                (progn (apply #'eglot (eglot--guess-contact)) (setq bserver (eglot-current-server)))
              (error (fev-test-check "connect (bpftrace)" nil err)))
            (when (fev-test-check "eglot connected (bpftrace)" bserver)
              (let ((fev-test-timeout 30))
                (fev-test-wait (lambda () (equal (fev-test-codes-of "kernel/kernel.bt") "K210@2:7"))))
              (let ((codes (fev-test-codes-of "kernel/kernel.bt")))
                (fev-test-check ".bt kernel diagnostic K210" (equal codes "K210@2:7") codes))
              (ignore-errors (eglot-shutdown bserver nil 3))))))
      ;; The mainline dialect: a *.dynevents file gets its mode, Eglot, and diagnostics.
      (let* ((mdir (expand-file-name "mainline" dir))
             (mfile (expand-file-name "problems.dynevents" mdir))
             mserver)
        (make-directory mdir t)
        (copy-file (concat (file-name-sans-extension src) ".dynevents") mfile)
        (with-current-buffer (find-file-noselect mfile)
          (fev-test-check "dynevents-mode from auto-mode-alist" (eq major-mode 'dynevents-mode) major-mode)
          (condition-case err
              (progn (apply #'eglot (eglot--guess-contact)) (setq mserver (eglot-current-server)))
            (error (fev-test-check "connect (dynevents)" nil err)))
          (when (fev-test-check "eglot connected (dynevents)" mserver)
            (fev-test-wait (lambda () (equal (fev-test-codes-of "mainline/problems.dynevents") "S001@1:24")))
            (let ((codes (fev-test-codes-of "mainline/problems.dynevents")))
              (fev-test-check ".dynevents diagnostics" (equal codes "S001@1:24") codes))
            (ignore-errors (eglot-shutdown mserver nil 3)))))
      (ignore-errors (eglot-shutdown server nil 3)))))

(princ (json-serialize
        (append (list :emacs emacs-version
                      :checks (vconcat (reverse fev-test-checks))
                      :failures (vconcat (reverse fev-test-failures)))
                (reverse fev-test-report))
        :null-object :null :false-object :json-false))
(terpri)
(dolist (f (reverse fev-test-failures)) (message "FAIL %s" f))
(kill-emacs (if fev-test-failures 1 0))
