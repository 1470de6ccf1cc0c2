;;; eglot_e2e.el --- Warden through real Emacs + eglot, in batch  -*- lexical-binding: t -*-
;; Run by TestPlainClientRealEmacsEglot: emacs --batch -q -l eglot_e2e.el
;; with WS (the workspace) and WARDEN_BIN set. Prints RESULT lines on stderr.
(require 'eglot)
(require 'cl-lib)

(defvar ws (file-name-as-directory (getenv "WS")))
(defvar notes nil "Notifications from the server: (METHOD . PARAMS).")
(defvar dialogs nil "Messages of the approval dialogs shown.")
(defvar answer "Deny" "What the user picks in a dialog.")

(setq eglot-confirm-server-initiated-edits nil
      eglot-sync-connect 10
      eglot-autoshutdown t
      make-backup-files nil)
(add-hook 'project-find-functions (lambda (_dir) (cons 'transient ws)))
(add-to-list 'eglot-server-programs `(text-mode ,(getenv "WARDEN_BIN") "serve"))
(cl-defmethod eglot-initialization-options :around ((_s eglot-lsp-server))
  '(:approvalPolicy "untrusted"))
(cl-defmethod eglot-handle-notification :before (_server method &rest params)
  (push (cons method params) notes))
;; The dialog: eglot asks with completing-read.
(advice-add 'completing-read :override
            (lambda (prompt &rest _) (push prompt dialogs) answer))

(defun say (fmt &rest args) (princ (concat (apply #'format fmt args) "\n") #'external-debugging-output))

(defun idle ()
  "What eglot's idle timer does, which never fires in batch: send changes."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (and (bound-and-true-p eglot--managed-mode) eglot--recent-changes)
        (eglot--signal-textDocument/didChange)))))

(defun wait-for (pred what)
  (let ((deadline (+ (float-time) 30)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (idle)
      (accept-process-output nil 0.05))
    (unless (funcall pred) (say "TIMEOUT: %s" what) (kill-emacs 2))))

(defun shown (substring)
  (cl-some (lambda (n) (and (eq (car n) 'window/showMessage)
                            (string-match-p (regexp-quote substring) (or (plist-get (cdr n) :message) ""))
                            (plist-get (cdr n) :message)))
           notes))

(find-file (expand-file-name "a.txt" ws))
(text-mode)
(apply #'eglot (eglot--guess-contact))
(wait-for (lambda () (eglot-current-server)) "eglot connected")
(defvar server (eglot-current-server))

;; 1. Deny `rm -rf build`: the files stay.
(eglot-execute-command server "warden.exec" (vector '(:command "rm -rf build")))
(wait-for (lambda () (shown "rm -rf build")) "the outcome of rm -rf build")
(say "DIALOGS: %d" (length dialogs))
(say "EXEC: %s" (shown "rm -rf build"))
(say "BUILD: %s" (if (file-exists-p (expand-file-name "build/out.o" ws)) "kept" "gone"))

;; 2. A patch lands in the open buffer with unsaved edits (allowed), and
;; the file eglot cannot delete is deleted by Warden.
(setq answer "Allow once")
(goto-char (point-max))
(insert "unsaved\n")
(idle)
(eglot-execute-command server "warden.patch.apply"
                       (vector `(:patch ,(concat "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n"
                                                 "*** Delete File: gone.txt\n*** End Patch"))))
(wait-for (lambda () (shown "Applying a patch")) "the outcome of the patch")
(say "PATCH: %s" (shown "Applying a patch"))
(say "BUFFER: %s" (string-replace "\n" "|" (buffer-string)))
(say "GONE: %s" (if (file-exists-p (expand-file-name "gone.txt" ws)) "exists" "deleted"))
(say "MODIFIED: %s" (buffer-modified-p))
(let ((kill-buffer-query-functions nil)) (set-buffer-modified-p nil))
(eglot-shutdown server)
(kill-emacs 0)
