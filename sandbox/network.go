package sandbox

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/wardenhq/warden/internal/envlist"
)

// NetworkMode says how a sandboxed command reaches the network.
type NetworkMode string

const (
	// NetworkOff gives the command no network: no sockets but AF_UNIX, no
	// interface but an unconfigured loopback.
	NetworkOff NetworkMode = "off"
	// NetworkAsk sends the command's TCP through Warden's proxy (the
	// Command's Proxy), which decides per host: the command has only a
	// loopback interface, where a forwarder to the proxy listens, and the
	// proxy variables point at it. Direct connections and DNS fail.
	NetworkAsk NetworkMode = "ask"
	// NetworkOn gives the command the host's network.
	NetworkOn NetworkMode = "on"
)

// DefaultWorkspaceNetwork is the network of workspace-write when the
// configuration says nothing: through Warden's proxy, asked per host. (The
// zero Policy still has no network: the default comes with a configured
// mode, from NewPolicy and ResolveNetwork, whose callers wire the proxy.)
const DefaultWorkspaceNetwork = NetworkAsk

// ParseNetworkMode reads network_access as written in config.toml, an
// editor setting or on the command line: off, ask or on, and true and false
// as on and off. Empty means the default of the sandbox mode.
func ParseNetworkMode(s string) (NetworkMode, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "off", "false":
		return NetworkOff, nil
	case "on", "true":
		return NetworkOn, nil
	case "ask":
		return NetworkAsk, nil
	case "":
		return "", nil
	}
	return "", fmt.Errorf("network_access %q: want off, ask or on (true and false mean on and off)", s)
}

// DefaultNetwork is the network a sandbox mode has when none is configured:
// the workspace-write default, off for read-only, on without a sandbox.
func DefaultNetwork(m Mode) NetworkMode {
	switch m {
	case WorkspaceWrite, "":
		return DefaultWorkspaceNetwork
	case DangerFullAccess, External:
		return NetworkOn
	}
	return NetworkOff
}

// network is the policy's network mode; an empty one is off (the zero
// Policy has no network).
func (p Policy) network() NetworkMode {
	switch p.mode() {
	case DangerFullAccess, External:
		return NetworkOn
	}
	if p.Network == "" {
		return NetworkOff
	}
	return p.Network
}

// NetworkMode is the network the policy's commands really get: on without a
// sandbox whatever Network says, off when Network is empty.
func (p Policy) NetworkMode() NetworkMode { return p.network() }

// networkSummary is the network part of Summary and doctor.
func (p Policy) networkSummary() string {
	switch p.network() {
	case NetworkOn:
		return "network on"
	case NetworkAsk:
		return "network: through Warden's proxy, asked per host"
	}
	return "network off"
}

// ProxyHandler serves one connection a sandboxed command opened to its
// proxy address (HTTP proxy or SOCKS5, told apart by the first byte). The
// caller binds what it needs to know about the run (netproxy.Origin) when
// it builds the handler. ServeConn owns c: when it returns (or panics), the
// connection is closed, so a handler that gives up refuses. ctx ends when
// the run does.
type ProxyHandler interface {
	ServeConn(ctx context.Context, c net.Conn)
}

// NetworkNoter is what a ProxyHandler may also implement to add lines to
// the run's result (the hosts it refused and why); NetworkNotes is called
// once, after the command and its connections are done.
type NetworkNoter interface {
	NetworkNotes() []string
}

// Proxy variables: the names that curl, wget, git, pip, npm, yarn, cargo,
// go, bundler and docker read, set for a command under NetworkAsk.
var (
	proxyHTTPVars = []string{
		"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "FTP_PROXY", "ftp_proxy",
		"npm_config_proxy", "npm_config_https_proxy", "NPM_CONFIG_PROXY", "NPM_CONFIG_HTTPS_PROXY",
		"YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY", "BUNDLE_HTTP_PROXY",
	}
	proxySocksVars = []string{"ALL_PROXY", "all_proxy"}
	noProxyVars    = []string{"NO_PROXY", "no_proxy"}
)

// proxyNoProxy is what never goes through the proxy: the sandbox's own
// loopback (where nothing but the forwarder listens, but a tool may try).
const proxyNoProxy = "localhost,127.0.0.1,::1"

// proxyEnv points the proxy variables at the forwarder on 127.0.0.1:port,
// replacing whatever the caller's environment had (a host proxy is not
// reachable from the sandbox, and Warden's is the only way out).
func proxyEnv(env []string, port int) []string {
	httpURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	socksURL := fmt.Sprintf("socks5h://127.0.0.1:%d", port)
	for _, k := range proxyHTTPVars {
		env = envlist.Set(env, k, httpURL)
	}
	for _, k := range proxySocksVars {
		env = envlist.Set(env, k, socksURL)
	}
	for _, k := range noProxyVars {
		env = envlist.Set(env, k, proxyNoProxy)
	}
	return env
}

// ResolveNetwork is the network commands under a sandbox mode get from a
// configured network_access: the value, or the mode's default when empty.
func ResolveNetwork(mode, network string) (NetworkMode, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return "", err
	}
	n, err := ParseNetworkMode(network)
	if err != nil {
		return "", err
	}
	if n == "" {
		n = DefaultNetwork(m)
	}
	return n, nil
}

// AskRunsOffline reports whether a run under NetworkAsk gets no network on
// this machine: an earlier run found the user namespaces the proxy needs
// refused, so runs fall back to network off. Before any run it is false.
func AskRunsOffline() bool { return askRunsOffline() }
