package risk

import "testing"

// TestRiskDestinations: archives extracted and repositories cloned into a
// directory outside the workspace write there; programs installed onto PATH,
// containers given the host and jobs handed to a scheduler say so. The
// twins stay in the workspace or only list.
func TestRiskDestinations(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"tar", "xzf", "x.tgz", "-C", "~"}, High, "writes outside the workspace: ~", ""},
		{[]string{"tar", "-xf", "x.tar", "--directory=/opt"}, High, "writes outside the workspace: /opt", ""},
		{[]string{"tar", "--extract", "-f", "x.tar", "-C/srv/app"}, High, "writes outside the workspace: /srv/app", ""},
		{[]string{"unzip", "-o", "x.zip", "-d", "~/bin"}, High, "writes outside the workspace: ~/bin", ""},
		{[]string{"git", "clone", "https://github.com/x/y", "~/src/y"}, High, "writes outside the workspace: ~/src/y", ""},
		{[]string{"npm", "install", "-g", "typescript"}, Medium, "installs packages globally, outside the workspace (npm install -g)", ""},
		{[]string{"go", "install", "golang.org/x/tools/gopls@latest"}, Medium, "installs programs into GOBIN (~/go/bin), on your PATH", ""},
		{[]string{"cargo", "install", "ripgrep"}, Medium, "~/.cargo/bin", ""},
		{[]string{"uv", "tool", "install", "ruff"}, Medium, "installs programs into ~/.local/bin", ""},
		{[]string{"pip", "install", "--user", "black"}, Medium, "installs packages into your user site", ""},
		{[]string{"launchctl", "load", "~/Library/LaunchAgents/x.plist"}, High, "changes system configuration (launchctl load)", ""},
		{sh("at now + 1 minute < job.sh"), High, "schedules a command to run later, outside the sandbox (at)", ""},
		{[]string{"docker", "run", "--privileged", "alpine"}, High, "runs a container with access to the host (--privileged)", ""},
		{[]string{"docker", "run", "-v", "/:/host", "alpine"}, High, "(-v /)", ""},
		{[]string{"docker", "run", "--pid=host", "alpine"}, High, "(--pid=host)", ""},
		{[]string{"podman", "run", "--mount", "type=bind,source=/var/run/docker.sock,target=/s", "img"}, High, "docker.sock", ""},
		{[]string{"docker", "run", "--cap-add", "SYS_ADMIN", "img"}, High, "(--cap-add SYS_ADMIN)", ""},
		// twins
		{[]string{"tar", "xzf", "x.tgz", "-C", "vendor"}, Low, "", "outside"},
		{[]string{"tar", "czf", "out.tgz", "-C", "/etc", "hosts"}, Low, "", "writes outside"},
		{[]string{"unzip", "-l", "x.zip"}, Low, "", "outside"},
		{[]string{"git", "clone", "https://github.com/x/y", "vendor/y"}, Medium, "contacts github.com", "outside"},
		{[]string{"npm", "install", "typescript"}, Medium, "", "globally"},
		{[]string{"go", "build", "./..."}, Low, "", "PATH"},
		{[]string{"launchctl", "list"}, Low, "", "system"},
		{[]string{"docker", "run", "--rm", "-v", "./src:/w", "-w", "/w", "node:20", "npm", "test"}, Low, "", "host"},
		{[]string{"docker", "run", "--network", "bridge", "img"}, Low, "", "host"},
	})
}

// TestRiskCopiesIntoDirectories: a copy or move into a directory writes
// DIR/NAME, so `cp x /tmp/` writes inside a writable root (it read "writes
// outside the workspace: /tmp", high), while `cp x ~/` still writes
// outside; a file copied onto itself writes nothing.
func TestRiskCopiesIntoDirectories(t *testing.T) {
	ctx := looseContext(t)
	home := ctx.Home
	checkRisk(t, ctx, []riskCase{
		{[]string{"cp", "main.go", home + "/"}, High, "writes outside the workspace: ~/main.go", ""},
		{[]string{"cp", "main.go", home + "/.local/bin/"}, High, "writes outside the workspace: ~/.local/bin/main.go", ""},
		{[]string{"cp", "-t", home, "main.go", "README.md"}, High, "writes outside the workspace: ~/README.md", ""},
		{[]string{"install", "-m", "755", "main.go", home}, High, "writes outside the workspace: ~/main.go", ""},
		{[]string{"cp", "main.go", "README.md"}, Medium, "overwrites README.md", ""},
		// twins
		{[]string{"cp", "main.go", "/tmp/"}, Low, "", "outside"},
		{[]string{"mv", "main.go", "/tmp"}, Low, "", "outside"},
		{[]string{"cp", "-r", "main.go", "README.md", "/tmp"}, Low, "", "outside"},
		{[]string{"cp", "-t", "/tmp", "main.go"}, Low, "", "outside"},
		{[]string{"cp", "main.go", "."}, Low, "", "overwrites"},
	})
}

// TestRiskWritesAnywhere: archives and patches that name absolute paths,
// world-writable modes and privileged pods were "low, nothing risky found".
func TestRiskWritesAnywhere(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"tar", "xf", "x.tar", "-P"}, High, "wherever the archive's absolute paths point (tar -P)", ""},
		{[]string{"tar", "xPf", "x.tar"}, High, "the archive's absolute paths", ""},
		{[]string{"tar", "--extract", "--absolute-names", "-f", "x.tar"}, High, "the archive's absolute paths", ""},
		{[]string{"git", "apply", "--unsafe-paths", "--directory=/", "p.diff"}, High, "wherever the patch's paths point", ""},
		{[]string{"chmod", "-R", "777", "."}, Medium, "lets every user of this machine change . (chmod 777)", ""},
		{[]string{"chmod", "-R", "a+rwx", "."}, Medium, "lets every user of this machine change", ""},
		{[]string{"chmod", "u+x,o+w", "run.sh"}, Medium, "lets every user", ""},
		{[]string{"chmod", "0666", "main.go"}, Medium, "lets every user", ""},
		{[]string{"kubectl", "run", "x", "--image=alpine", "--privileged"}, High, "runs a privileged pod", ""},
		// twins
		{[]string{"tar", "xf", "x.tar", "-C", "out"}, Low, "", "outside"},
		{[]string{"tar", "cPf", "x.tar", "src"}, Low, "", "outside"},
		{[]string{"git", "apply", "p.diff"}, Low, "", "outside"},
		{[]string{"chmod", "755", "run.sh"}, Low, "", "every user"},
		{[]string{"chmod", "+x", "run.sh"}, Low, "", "every user"},
		{[]string{"chmod", "go-w", "main.go"}, Low, "", "every user"},
		{[]string{"chmod", "644", "main.go"}, Low, "", "every user"},
		{[]string{"kubectl", "run", "x", "--image=alpine"}, Low, "", "privileged"},
	})
}
