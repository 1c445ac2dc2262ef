package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand of engram.
type command struct {
	name, args, summary string
	run                 func(ctx context.Context, env *env, args []string) error
	flags               func(*env) *flag.FlagSet // for help
}

// env is what every command gets: its streams, so tests can run commands
// in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// exitError carries a process exit status without a message of its own.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func commands() []command {
	return []command{
		{"ingest", "[flags] [FILE ...]", "ingest experience events (JSON Lines, a JSON array or one object; - or none: stdin)",
			runIngest, func(e *env) *flag.FlagSet { fs, _ := ingestFlags(e); return fs }},
		{"show", "[flags] EVENT_ID", "print an event's index document and archived event as JSON",
			runShow, func(e *env) *flag.FlagSet { fs, _ := showFlags(e); return fs }},
		{"ui", "[flags]", "open the inspector (also: engram with no command); --demo opens it on a live demo data set",
			runUI, func(e *env) *flag.FlagSet { fs, _ := uiFlags(e); return fs }},
		{"config", "[flags]", "print the effective configuration and where each value comes from (secrets redacted)",
			runConfig, func(e *env) *flag.FlagSet { fs, _ := configFlags(e); return fs }},
		{"demo", "[flags]", "write a realistic, deterministic demo data set through the real pipeline",
			runDemo, func(e *env) *flag.FlagSet { fs, _ := demoFlags(e); return fs }},
		{"reindex", "[flags]", "rebuild the index from the archive (all of it, or a day range); idempotent and resumable",
			runReindex, func(e *env) *flag.FlagSet { fs, _ := reindexFlags(e); return fs }},
		{"verify", "[flags]", "walk the archive and the index and report where they disagree (exit 1 if they do)",
			runVerify, func(e *env) *flag.FlagSet { fs, _ := verifyFlags(e); return fs }},
		{"turns", "[flags] [EXPR]", "list turns, newest first, optionally filtered by EXPR",
			runTurns, func(e *env) *flag.FlagSet { fs, _ := turnsFlags(e); return fs }},
		{"turn", "[flags] TURN_KEY", "list the events of one turn in causal order",
			runTurn, func(e *env) *flag.FlagSet { fs, _ := turnFlags(e); return fs }},
		{"diff", "[flags] EVENT_ID EVENT_ID | --turn TURN_KEY TURN_KEY", "compare two events field by field (texts word by word, numeric deltas), or two turns step by step",
			runDiff, func(e *env) *flag.FlagSet { fs, _ := diffFlags(e); return fs }},
		{"session", "[flags] SESSION_ID", "list one session's turns in time order on a time axis, each with its steps, latency and outcome",
			runSession, func(e *env) *flag.FlagSet { fs, _ := sessionFlags(e); return fs }},
		{"search", "[flags] EXPR", "search events: words, \"phrases\", field:value, comparisons, since:/until:",
			runSearch, func(e *env) *flag.FlagSet { fs, _ := searchFlags(e); return fs }},
		{"stats", "[flags] [EXPR]", "the shape of the stream over time: events, failures, latency percentiles, reward and importance per time bucket, split --by a field",
			runStats, func(e *env) *flag.FlagSet { fs, _ := statsFlags(e); return fs }},
		{"similar", "[flags] EVENT_ID", "list the events nearest to an event by embedding (cosine)",
			runSimilar, func(e *env) *flag.FlagSet { fs, _ := similarFlags(e); return fs }},
		{"recall", "[flags] TEXT [EXPR]", "what the memory would retrieve for a prompt, and why: the top K by a hybrid score, each factor's value and contribution; --explain ID says why an event is not among them. Reads only: retrieval_count is not incremented",
			runRecall, func(e *env) *flag.FlagSet { fs, _ := recallFlags(e); return fs }},
		{"tail", "[flags] [EXPR]", "print events as they are indexed (only those matching EXPR when given), one JSON line each, until interrupted",
			runTail, func(e *env) *flag.FlagSet { fs, _ := tailFlags(e); return fs }},
		{"worker", "[flags]", "consume experience.raw in the consumer group and ingest every message into the configured stores, until interrupted (needs kafka.brokers)",
			runWorker, func(e *env) *flag.FlagSet { fs, _ := workerFlags(e); return fs }},
		{"produce", "[flags] [FILE ...]", "validate events as ingest does and produce the valid ones to experience.raw, for the deployment's workers (needs kafka.brokers)",
			runProduce, func(e *env) *flag.FlagSet { fs, _ := produceFlags(e); return fs }},
		{"kafka", "create-topics [flags]", "create the configured Kafka topics with the source system's partitions and retention (never done otherwise)",
			runKafka, func(e *env) *flag.FlagSet { fs, _ := kafkaFlags(e); return fs }},
		{"version", "", "print engram's version (also: engram --version)", runVersion, nil},
		{"completion", "bash|zsh|fish", "print a shell completion script for engram's commands and flags", runCompletion, nil},
		{"help", "[COMMAND]", "describe engram's commands and their flags", runHelp, nil},
	}
}

// Stdio is what the process gives the commands: its streams and environment.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Main runs the command named by args (the inspector when none is) and
// returns the process exit status.
func Main(ctx context.Context, s Stdio, args []string) int {
	return run(ctx, &env{s.Stdin, s.Stdout, s.Stderr, s.Getenv}, args)
}

func run(ctx context.Context, e *env, args []string) int {
	name := "ui"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if len(args) > 0 && name == "ui" && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		name, args = "help", nil
	}
	if len(args) > 0 && name == "ui" && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", args[1:]
	}
	for _, c := range commands() {
		if c.name == name {
			stop, err := cpuProfile(e)
			if err != nil {
				return exitCode(e, err)
			}
			defer stop()
			return exitCode(e, c.run(ctx, e, args))
		}
	}
	fmt.Fprintf(e.stderr, "engram: unknown command %s; %s\n", quoteArg(name), commandHint(name))
	return 2
}

func exitCode(e *env, err error) int {
	var ee exitError
	var fe flagError
	var hr helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &hr):
		return exitCode(e, runHelp(context.Background(), e, []string{hr.cmd}))
	case errors.As(err, &fe):
		fmt.Fprintf(e.stderr, "engram: %s\n", safeLine(fe.Error()))
		return 2
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(e.stderr, "engram: %s\n", safeLine(err.Error()))
	return 1
}

var errUsage = errors.New("usage")

func quoteArg(s string) string { return safeLine(fmt.Sprintf("%q", s)) }

// safeLine keeps untrusted text on one line and unable to drive the
// terminal, and hides credentials written into URLs.
func safeLine(s string) string { return strings.TrimSpace(printable(redactCredentials(s))) }
