package approvals

import "testing"

// TestRiskDestinations: archives extracted and repositories cloned into a
// directory outside the workspace write there; programs installed onto PATH,
// containers given the host and jobs handed to a scheduler say so. The
// twins stay in the workspace or only list.
func TestRiskDestinations(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"tar", "xzf", "x.tgz", "-C", "~"}, RiskHigh, "writes outside the workspace: ~", ""},
		{[]string{"tar", "-xf", "x.tar", "--directory=/opt"}, RiskHigh, "writes outside the workspace: /opt", ""},
		{[]string{"tar", "--extract", "-f", "x.tar", "-C/srv/app"}, RiskHigh, "writes outside the workspace: /srv/app", ""},
		{[]string{"unzip", "-o", "x.zip", "-d", "~/bin"}, RiskHigh, "writes outside the workspace: ~/bin", ""},
		{[]string{"git", "clone", "https://github.com/x/y", "~/src/y"}, RiskHigh, "writes outside the workspace: ~/src/y", ""},
		{[]string{"npm", "install", "-g", "typescript"}, RiskMedium, "installs packages globally, outside the workspace (npm install -g)", ""},
		{[]string{"go", "install", "golang.org/x/tools/gopls@latest"}, RiskMedium, "installs programs into GOBIN (~/go/bin), on your PATH", ""},
		{[]string{"cargo", "install", "ripgrep"}, RiskMedium, "~/.cargo/bin", ""},
		{[]string{"uv", "tool", "install", "ruff"}, RiskMedium, "installs programs into ~/.local/bin", ""},
		{[]string{"pip", "install", "--user", "black"}, RiskMedium, "installs packages into your user site", ""},
		{[]string{"launchctl", "load", "~/Library/LaunchAgents/x.plist"}, RiskHigh, "changes system configuration (launchctl load)", ""},
		{sh("at now + 1 minute < job.sh"), RiskHigh, "schedules a command to run later, outside the sandbox (at)", ""},
		{[]string{"docker", "run", "--privileged", "alpine"}, RiskHigh, "runs a container with access to the host (--privileged)", ""},
		{[]string{"docker", "run", "-v", "/:/host", "alpine"}, RiskHigh, "(-v /)", ""},
		{[]string{"docker", "run", "--pid=host", "alpine"}, RiskHigh, "(--pid=host)", ""},
		{[]string{"podman", "run", "--mount", "type=bind,source=/var/run/docker.sock,target=/s", "img"}, RiskHigh, "docker.sock", ""},
		{[]string{"docker", "run", "--cap-add", "SYS_ADMIN", "img"}, RiskHigh, "(--cap-add SYS_ADMIN)", ""},
		// twins
		{[]string{"tar", "xzf", "x.tgz", "-C", "vendor"}, RiskLow, "", "outside"},
		{[]string{"tar", "czf", "out.tgz", "-C", "/etc", "hosts"}, RiskLow, "", "writes outside"},
		{[]string{"unzip", "-l", "x.zip"}, RiskLow, "", "outside"},
		{[]string{"git", "clone", "https://github.com/x/y", "vendor/y"}, RiskMedium, "contacts github.com", "outside"},
		{[]string{"npm", "install", "typescript"}, RiskMedium, "", "globally"},
		{[]string{"go", "build", "./..."}, RiskLow, "", "PATH"},
		{[]string{"launchctl", "list"}, RiskLow, "", "system"},
		{[]string{"docker", "run", "--rm", "-v", "./src:/w", "-w", "/w", "node:20", "npm", "test"}, RiskLow, "", "host"},
		{[]string{"docker", "run", "--network", "bridge", "img"}, RiskLow, "", "host"},
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
		{[]string{"cp", "main.go", home + "/"}, RiskHigh, "writes outside the workspace: ~/main.go", ""},
		{[]string{"cp", "main.go", home + "/.local/bin/"}, RiskHigh, "writes outside the workspace: ~/.local/bin/main.go", ""},
		{[]string{"cp", "-t", home, "main.go", "README.md"}, RiskHigh, "writes outside the workspace: ~/README.md", ""},
		{[]string{"install", "-m", "755", "main.go", home}, RiskHigh, "writes outside the workspace: ~/main.go", ""},
		{[]string{"cp", "main.go", "README.md"}, RiskMedium, "overwrites README.md", ""},
		// twins
		{[]string{"cp", "main.go", "/tmp/"}, RiskLow, "", "outside"},
		{[]string{"mv", "main.go", "/tmp"}, RiskLow, "", "outside"},
		{[]string{"cp", "-r", "main.go", "README.md", "/tmp"}, RiskLow, "", "outside"},
		{[]string{"cp", "-t", "/tmp", "main.go"}, RiskLow, "", "outside"},
		{[]string{"cp", "main.go", "."}, RiskLow, "", "overwrites"},
	})
}

// TestRiskWritesAnywhere: archives and patches that name absolute paths,
// world-writable modes and privileged pods were "low, nothing risky found".
func TestRiskWritesAnywhere(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"tar", "xf", "x.tar", "-P"}, RiskHigh, "wherever the archive's absolute paths point (tar -P)", ""},
		{[]string{"tar", "xPf", "x.tar"}, RiskHigh, "the archive's absolute paths", ""},
		{[]string{"tar", "--extract", "--absolute-names", "-f", "x.tar"}, RiskHigh, "the archive's absolute paths", ""},
		{[]string{"git", "apply", "--unsafe-paths", "--directory=/", "p.diff"}, RiskHigh, "wherever the patch's paths point", ""},
		{[]string{"chmod", "-R", "777", "."}, RiskMedium, "lets every user of this machine change . (chmod 777)", ""},
		{[]string{"chmod", "-R", "a+rwx", "."}, RiskMedium, "lets every user of this machine change", ""},
		{[]string{"chmod", "u+x,o+w", "run.sh"}, RiskMedium, "lets every user", ""},
		{[]string{"chmod", "0666", "main.go"}, RiskMedium, "lets every user", ""},
		{[]string{"kubectl", "run", "x", "--image=alpine", "--privileged"}, RiskHigh, "runs a privileged pod", ""},
		// twins
		{[]string{"tar", "xf", "x.tar", "-C", "out"}, RiskLow, "", "outside"},
		{[]string{"tar", "cPf", "x.tar", "src"}, RiskLow, "", "outside"},
		{[]string{"git", "apply", "p.diff"}, RiskLow, "", "outside"},
		{[]string{"chmod", "755", "run.sh"}, RiskLow, "", "every user"},
		{[]string{"chmod", "+x", "run.sh"}, RiskLow, "", "every user"},
		{[]string{"chmod", "go-w", "main.go"}, RiskLow, "", "every user"},
		{[]string{"chmod", "644", "main.go"}, RiskLow, "", "every user"},
		{[]string{"kubectl", "run", "x", "--image=alpine"}, RiskLow, "", "privileged"},
	})
}
