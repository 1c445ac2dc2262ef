// Command engram is a terminal inspector for the experience streams of AI
// agents: it ingests experience events through the cognitive-memory
// pipeline and shows what is there. main.go only turns signals into a
// context and a result into an exit status; the commands are in package cli.
package main
