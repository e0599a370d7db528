package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/flags"
	"github.com/specd/specd/tools"
)

// flagsFileName is where specd init writes the default flag file and where
// a server finds one on its own: <workspace>/.specd/flags.json.
const flagsFileName = "flags.json"

// flagsConfig is the feature-flag part of the configuration, filled by the
// flags, flags-provider, flagd-host and flagd-port settings (settings.go).
type flagsConfig struct {
	Path      string // flag file ("" = embedded default)
	PathBy    string // flag, env, workspace or default
	Provider  string // file or flagd
	FlagdHost string
	FlagdPort int
}

// findWorkspaceFile applies the last step of the flag file's precedence
// (flag, environment, <workspace>/.specd/flags.json, embedded default) once
// the settings are parsed: by is where the flags setting came from.
func (fc *flagsConfig) findWorkspaceFile(workspace, by string) {
	fc.PathBy = by
	if by != "default" {
		return
	}
	if p := filepath.Join(workspace, ".specd", flagsFileName); fileExists(p) {
		fc.Path, fc.PathBy = p, "workspace"
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// display names the flag file for answers: relative to the workspace when
// inside it, else its base name (never an absolute server path).
func (fc *flagsConfig) display(workspace string) string {
	if fc.Path == "" {
		return ""
	}
	if rel, err := filepath.Rel(workspace, fc.Path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return filepath.Base(fc.Path)
}

// openFlags starts the flags service of c.
func openFlags(c *config, logger *slog.Logger, st bucketstore.Store, transport string) (*flags.Service, error) {
	return flags.Open(context.Background(), flags.Options{
		Path: c.Flags.Path, Provider: c.Flags.Provider, FlagdHost: c.Flags.FlagdHost, FlagdPort: c.Flags.FlagdPort,
		Display:       c.Flags.display(c.Workspace),
		LoadInstallID: installIDLoader(c, st),
		ClientID:      os.Getenv("SPECD_CLIENT_ID"),
		Transport:     transport, Logger: logger,
	})
}

// attachFlags wires the flags service into deps (the hook build calls).
func attachFlags(c *config, logger *slog.Logger, deps *tools.Deps, st bucketstore.Store) error {
	transport := ""
	if len(deps.Transports) > 0 {
		transport = deps.Transports[0]
	}
	svc, err := openFlags(c, logger, st, transport)
	if err != nil {
		return err
	}
	deps.Runtime.Flags = svc
	deps.ConfigSource += ", flags=" + c.Flags.PathBy
	return nil
}

// closeFlags shuts the flags service of deps down (at most 1 s).
func closeFlags(deps *tools.Deps) {
	if c, ok := deps.Runtime.Flags.(io.Closer); ok {
		_ = c.Close()
	}
}

// initCmd writes the embedded default flag file to
// <workspace>/.specd/flags.json (never over an existing one unless --force).
func initCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", "", "workspace root (env SPECD_WORKSPACE; default: the git repository's root, else the current directory)")
	force := fs.Bool("force", false, "overwrite an existing .specd/flags.json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	root, err := initWorkspace(*ws)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	path := filepath.Join(root, ".specd", flagsFileName)
	if fileExists(path) && !*force {
		fmt.Fprintf(stdout, "%s exists; left as it is (use --force to overwrite it with the defaults).\n", path)
		return 0
	}
	if err := writeDefaultFlags(path); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (feature flags, flagd format); a server in this workspace reads it and applies edits without a restart.\n", path)
	return 0
}

// initWorkspace is the workspace specd init writes to: --workspace, else
// SPECD_WORKSPACE, else the one found from the current directory
// (resolveWorkspace).
func initWorkspace(explicit string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, _ := resolveWorkspace(cmp.Or(explicit, os.Getenv("SPECD_WORKSPACE")), cwd)
	return root, nil
}

// writeDefaultFlags writes the embedded default flag file to path (0644),
// making its folder (0755) when missing.
func writeDefaultFlags(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, flags.DefaultFile, 0o644)
}

// flagsCmd is "specd flags" (every flag with its value for a client, and
// the rollout health table of a running HTTP server with --url) and
// "specd flags eval --client ID".
func flagsCmd(args []string, stdout, stderr io.Writer) int {
	req, code, ok := parseFlagsCmd(args, stderr)
	if !ok {
		return code
	}
	c, _, err := parseConfig("flags", req.settings, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.LogLevel}))
	st, err := openStore(c, logger)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer st.Close()
	if req.clientID != "" {
		os.Setenv("SPECD_CLIENT_ID", req.clientID)
	}
	svc, err := openFlags(c, logger, st, "cli")
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer svc.Close()
	printFlagValues(stdout, svc, c.Flags.Provider, req.clientName)
	if req.eval {
		return 0
	}
	return printRemoteHealth(stdout, stderr, req.url, req.apiKey)
}

// flagsRequest is what specd flags was asked for.
type flagsRequest struct {
	eval                              bool // specd flags eval
	clientID, clientName, url, apiKey string
	settings                          []string // serve's store and flag settings, for parseConfig
}

// parseFlagsCmd reads specd flags' own flags and sets serve's settings
// aside; on -h or a usage error (printed on stderr) ok is false and code
// is the exit status, 0 or 2.
func parseFlagsCmd(args []string, stderr io.Writer) (req flagsRequest, code int, ok bool) {
	req.eval = len(args) > 0 && args[0] == "eval"
	if req.eval {
		args = args[1:]
	}
	fs := flag.NewFlagSet("flags", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&req.clientID, "client", "", "targeting key to evaluate for (default: SPECD_CLIENT_ID, else specd-cli@<install id>)")
	fs.StringVar(&req.clientName, "client-name", "specd-cli", "client_name attribute of the evaluation context")
	fs.StringVar(&req.url, "url", "", "a running specd HTTP server (e.g. http://127.0.0.1:7777/mcp) whose rollout health to print")
	fs.StringVar(&req.apiKey, "api-key", "", "API key for --url, sent as Authorization: Bearer (env SPECD_API_KEY)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: specd flags [--url URL [--api-key KEY]] [--client ID] [--client-name NAME] [serve's store and flag settings]\n"+
			"       specd flags eval --client ID [--client-name NAME] [serve's store and flag settings]\n\n"+
			"Every flag with its value for a client; with --url, a running HTTP server's rollout health.\n\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nIt also takes serve's store and flag settings (--db, --store, --workspace, --flags, --flags-provider,\n"+
			"--flagd-host, --flagd-port, --log-level, with their environment variables; see specd serve -h).\n")
	}
	own, settings := splitFlagArgs(args, fs)
	req.settings = settings
	if code, ok := parseFlags(fs, own); !ok {
		return req, code, false
	}
	if req.eval && req.clientID == "" {
		fmt.Fprintln(stderr, "usage: specd flags eval --client ID [--client-name NAME] [--flags PATH]")
		return req, 2, false
	}
	return req, 0, true
}

// printFlagValues prints every flag of svc with its state, default, value,
// variant and source for the client clientName (the targeting key svc
// resolves: SPECD_CLIENT_ID, else specd-cli@<install id>).
func printFlagValues(w io.Writer, svc *flags.Service, provider, clientName string) {
	who := mcptool.FlagContext{SessionID: "cli-" + strconv.FormatInt(time.Now().UnixNano(), 36), ClientName: clientName}
	fmt.Fprintf(w, "flags from %s (%s provider), client %s\n\n", svc.FileName(), provider, svc.TargetingKey(who))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tSTATE\tDEFAULT\tVALUE\tVARIANT\tSOURCE")
	for _, f := range svc.Views(context.Background(), who) {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\t%s\n", f.Name, f.State, onOff(f.Default), onOff(f.Value), f.Variant, f.Source)
	}
	tw.Flush()
}

// printRemoteHealth prints the rollout health of the HTTP server at url,
// authenticated by apiKey (else SPECD_API_KEY), and returns the exit
// status: 1 when it cannot be read. Without a url it says where rollout
// health lives instead (exit 0).
func printRemoteHealth(stdout, stderr io.Writer, url, apiKey string) int {
	if url == "" {
		fmt.Fprintln(stdout, "\nrollout health lives in the server process: pass --url of a running HTTP server, or call server(action=\"flags\").")
		return 0
	}
	rep, err := remoteHealth(url, cmp.Or(apiKey, os.Getenv("SPECD_API_KEY")))
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	fmt.Fprintln(stdout)
	printHealth(stdout, rep)
	return 0
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// splitFlagArgs separates the flags flagsCmd declares (and -h/-help, so
// help lists the command's own options) from serve's configuration flags
// (--flags, --db, …), which parseConfig reads.
func splitFlagArgs(args []string, fs *flag.FlagSet) (own, cfg []string) {
	for i := 0; i < len(args); i++ {
		dst := &cfg
		if isOwnFlag(fs, args[i]) {
			dst = &own
		}
		*dst = append(*dst, args[i])
		if valueFollows(args, i) {
			i++
			*dst = append(*dst, args[i])
		}
	}
	return own, cfg
}

// isOwnFlag reports whether arg names a flag of fs, or -h/-help.
func isOwnFlag(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(strings.SplitN(arg, "=", 2)[0], "-")
	return fs.Lookup(name) != nil || name == "h" || name == "help"
}

// valueFollows reports whether args[i] is a flag without "=value" followed
// by an argument that is not a flag: its value, as in "--name value".
func valueFollows(args []string, i int) bool {
	a := args[i]
	return !strings.Contains(a, "=") && strings.HasPrefix(a, "-") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
}

// remoteHealth reads server(action="flags") from a running HTTP server,
// sending apiKey as a bearer token when it is not empty.
func remoteHealth(url, apiKey string) (flags.HealthReport, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := connectMCP(ctx, url, apiKey)
	if err != nil {
		return flags.HealthReport{}, err
	}
	defer cl.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "server"
	req.Params.Arguments = map[string]any{"action": "flags"}
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		return flags.HealthReport{}, err
	}
	return healthOf(res)
}

// connectMCP starts an MCP session with the streamable HTTP server at url
// (apiKey, when set, as a bearer token); the caller closes the client.
// A client that cannot start or initialize is closed before its error
// returns.
func connectMCP(ctx context.Context, url, apiKey string) (*client.Client, error) {
	var opts []transport.StreamableHTTPCOption
	if apiKey != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + apiKey}))
	}
	cl, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "specd-flags", Version: serverVersion()}
	if err := cl.Start(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if _, err := cl.Initialize(ctx, init); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// healthOf is the rollout health report in server(action="flags")'s
// answer: the envelope's data, or the whole text for a client served the
// legacy v1 shape. A refusal or an answer without text is an error.
func healthOf(res *mcp.CallToolResult) (flags.HealthReport, error) {
	var rep flags.HealthReport
	if len(res.Content) == 0 {
		return rep, errors.New("empty answer from server(action=\"flags\")")
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return rep, errors.New("server(action=\"flags\") answered no text")
	}
	if res.IsError {
		return rep, fmt.Errorf("server(action=\"flags\"): %s", tc.Text)
	}
	if res.StructuredContent == nil {
		// this client gets the legacy v1 shape: the text is the data itself
		return rep, json.Unmarshal([]byte(tc.Text), &rep)
	}
	var env struct {
		Data flags.HealthReport `json:"data"`
	}
	err := json.Unmarshal([]byte(tc.Text), &env)
	return env.Data, err
}

// printHealth prints the rollout health table.
func printHealth(w io.Writer, r flags.HealthReport) {
	fmt.Fprintf(w, "rollout health since %s (%s provider, %s)\n\n", r.Since.Format(time.RFC3339), r.Provider, r.FlagFile)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tVARIANT\tSESSIONS\tCALLS\tERRORS\tERROR%\tP50 ms\tP99 ms")
	for _, row := range r.Rows {
		var n int64
		parts := []string{}
		for t, c := range row.Errors {
			n += c
			parts = append(parts, fmt.Sprintf("%s=%d", t, c))
		}
		pct := 0.0
		if row.Calls > 0 {
			pct = 100 * float64(n) / float64(row.Calls)
		}
		slices.Sort(parts) // one order per report, whatever the map's
		errs := strings.Join(parts, ",")
		if errs == "" {
			errs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.1f\t%.2f\t%.2f\n", row.Flag, row.Variant, row.Sessions, row.Calls, errs, pct, row.P50MS, row.P99MS)
	}
	tw.Flush()
}
