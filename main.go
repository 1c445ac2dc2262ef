// Command engram is a terminal inspector for the experience streams of AI
// agents: it ingests experience events through the cognitive-memory pipeline
// (embed, score, archive once, index, publish), and shows what is there.
//
// This file only turns signals into a context and a result into an exit
// status; the commands are in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"engram/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := cli.Main(ctx, cli.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}
