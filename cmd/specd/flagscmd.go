package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	wsDir := *ws
	if wsDir == "" {
		wsDir = os.Getenv("SPECD_WORKSPACE")
	}
	root, _ := resolveWorkspace(wsDir, cwd)
	dir := filepath.Join(root, ".specd")
	path := filepath.Join(dir, flagsFileName)
	if fileExists(path) && !*force {
		fmt.Fprintf(stdout, "%s exists; left as it is (use --force to overwrite it with the defaults).\n", path)
		return 0
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	if err := os.WriteFile(path, flags.DefaultFile, 0o644); err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (feature flags, flagd format); a server in this workspace reads it and applies edits without a restart.\n", path)
	return 0
}

// flagsCmd is "specd flags" (every flag with its value for a client, and
// the rollout health table of a running HTTP server with --url) and
// "specd flags eval --client ID".
func flagsCmd(args []string, stdout, stderr io.Writer) int {
	eval := len(args) > 0 && args[0] == "eval"
	if eval {
		args = args[1:]
	}
	fs := flag.NewFlagSet("flags", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clientID := fs.String("client", "", "targeting key to evaluate for (default: SPECD_CLIENT_ID, else specd-cli@<install id>)")
	clientName := fs.String("client-name", "specd-cli", "client_name attribute of the evaluation context")
	url := fs.String("url", "", "a running specd HTTP server (e.g. http://127.0.0.1:7777/mcp) whose rollout health to print")
	apiKey := fs.String("api-key", "", "API key for --url, sent as Authorization: Bearer (env SPECD_API_KEY)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: specd flags [--url URL [--api-key KEY]] [--client ID] [--client-name NAME] [serve's store and flag settings]\n"+
			"       specd flags eval --client ID [--client-name NAME] [serve's store and flag settings]\n\n"+
			"Every flag with its value for a client; with --url, a running HTTP server's rollout health.\n\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nIt also takes serve's store and flag settings (--db, --store, --workspace, --flags, --flags-provider,\n"+
			"--flagd-host, --flagd-port, --log-level, with their environment variables; see specd serve -h).\n")
	}
	// the store and flag settings, as serve takes them
	rest, cfgArgs := splitFlagArgs(args, fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if eval && *clientID == "" {
		fmt.Fprintln(stderr, "usage: specd flags eval --client ID [--client-name NAME] [--flags PATH]")
		return 2
	}
	c, _, err := parseConfig("flags", cfgArgs, stderr)
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
	if *clientID != "" {
		os.Setenv("SPECD_CLIENT_ID", *clientID)
	}
	svc, err := openFlags(c, logger, st, "cli")
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer svc.Close()
	who := mcptool.FlagContext{SessionID: "cli-" + strconv.FormatInt(time.Now().UnixNano(), 36), ClientName: *clientName}
	fmt.Fprintf(stdout, "flags from %s (%s provider), client %s\n\n", svc.FileName(), c.Flags.Provider, svc.TargetingKey(who))
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tSTATE\tDEFAULT\tVALUE\tVARIANT\tSOURCE")
	for _, f := range svc.Views(context.Background(), who) {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\t%s\n", f.Name, f.State, onOff(f.Default), onOff(f.Value), f.Variant, f.Source)
	}
	tw.Flush()
	if eval {
		return 0
	}
	if *url == "" {
		fmt.Fprintln(stdout, "\nrollout health lives in the server process: pass --url of a running HTTP server, or call server(action=\"flags\").")
		return 0
	}
	key := *apiKey
	if key == "" {
		key = os.Getenv("SPECD_API_KEY")
	}
	rep, err := remoteHealth(*url, key)
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
		name := strings.TrimLeft(strings.SplitN(args[i], "=", 2)[0], "-")
		dst := &cfg
		if fs.Lookup(name) != nil || name == "h" || name == "help" {
			dst = &own
		}
		*dst = append(*dst, args[i])
		if !strings.Contains(args[i], "=") && strings.HasPrefix(args[i], "-") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			*dst = append(*dst, args[i])
		}
	}
	return own, cfg
}

// remoteHealth reads server(action="flags") from a running HTTP server,
// sending apiKey as a bearer token when it is not empty.
func remoteHealth(url, apiKey string) (flags.HealthReport, error) {
	var rep flags.HealthReport
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts []transport.StreamableHTTPCOption
	if apiKey != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + apiKey}))
	}
	cl, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return rep, err
	}
	defer cl.Close()
	if err := cl.Start(ctx); err != nil {
		return rep, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "specd-flags", Version: serverVersion()}
	if _, err := cl.Initialize(ctx, init); err != nil {
		return rep, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "server"
	req.Params.Arguments = map[string]any{"action": "flags"}
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		return rep, err
	}
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
	err = json.Unmarshal([]byte(tc.Text), &env)
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
		errs := strings.Join(parts, ",")
		if errs == "" {
			errs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.1f\t%.2f\t%.2f\n", row.Flag, row.Variant, row.Sessions, row.Calls, errs, pct, row.P50MS, row.P99MS)
	}
	tw.Flush()
}
