package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// protectedPatch creates .vscode/settings.json, a protected path: applying
// it needs the user's approval.
const protectedPatch = "*** Begin Patch\n*** Add File: .vscode/settings.json\n+{}\n*** End Patch\n"

// TestApplyPatchAsksOnTheTerminal answers apply-patch's prompt on a real
// terminal: standard input when the patch is a file, the controlling
// terminal when the patch comes on standard input.
func TestApplyPatchAsksOnTheTerminal(t *testing.T) {
	cases := []struct {
		name, answer string
		fromStdin    bool
		applied      bool
	}{
		{"allow once", "1", false, true},
		{"y", "y", false, true},
		{"deny", "2", false, false},
		{"deny and stop", "3", false, false},
		{"just Enter", "", false, false},
		{"patch on stdin, answer on the controlling terminal", "y", true, true},
		{"patch on stdin, denied on the controlling terminal", "n", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work, home := t.TempDir(), t.TempDir()
			patchFile := filepath.Join(home, "p.patch")
			os.WriteFile(patchFile, []byte(protectedPatch), 0o644)
			master, slave := openPTY(t)
			args := []string{"apply-patch", "--cwd", work, patchFile}
			cmd := exec.Command(wardenBin(t))
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+home, "XDG_CONFIG_HOME="+home)
			if c.fromStdin {
				args[len(args)-1] = "-"
				cmd.Stdin = strings.NewReader(protectedPatch)
				// The terminal is the controlling one, fd 3 in the child.
				cmd.ExtraFiles = []*os.File{slave}
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
			} else {
				cmd.Stdin = slave
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			}
			cmd.Args = append(cmd.Args, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read the prompt off the terminal, then answer it.
			prompt := make(chan string, 1)
			go func() {
				var seen []byte
				buf := make([]byte, 4096)
				for !bytes.Contains(seen, []byte("Choose 1-")) {
					n, err := master.Read(buf)
					if err != nil {
						break
					}
					seen = append(seen, buf[:n]...)
				}
				prompt <- string(seen)
			}()
			asked := stderr.String
			if c.fromStdin {
				select {
				case p := <-prompt:
					asked = func() string { return p }
				case <-time.After(20 * time.Second):
					t.Fatal("no prompt on the controlling terminal")
				}
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			master.Write([]byte(c.answer + "\n"))
			err := cmd.Wait()
			_, statErr := os.Stat(filepath.Join(work, ".vscode", "settings.json"))
			if !strings.Contains(asked(), ".vscode/settings.json") || !strings.Contains(asked(), "Allow once") {
				t.Errorf("the prompt does not name the file and the choices:\n%s", asked())
			}
			if (err == nil) != c.applied || (statErr == nil) != c.applied {
				t.Fatalf("answer %q: exit err %v, file created %v, want applied=%v\nstdout %s\nstderr %s", c.answer, err, statErr == nil, c.applied, stdout.String(), stderr.String())
			}
			if !c.applied && !strings.Contains(stderr.String(), "Nothing was changed") {
				t.Errorf("a refusal does not say nothing changed: %s", stderr.String())
			}
		})
	}
}

func TestApplyPatchWithoutATerminalRefuses(t *testing.T) {
	work := t.TempDir()
	_, stderr, code := runApplyPatch(t, protectedPatch, "--cwd", work)
	if code != 1 || !strings.Contains(stderr, "no terminal to ask on") || !strings.Contains(stderr, ".vscode/settings.json") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(work, ".vscode")); err == nil {
		t.Fatal("a refused patch changed the workspace")
	}
}
