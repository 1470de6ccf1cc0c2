// Package fanotify reads what Warden's fanotify watchers (the sandbox's
// guard and the protected-name index) share: the identity fanotify reports
// a directory by, and the directory and name an event's DFID_NAME record
// names. Linux only.
package fanotify
