//go:build race

package ui

// The race detector slows everything several times over: latency is then
// measured and shown, not held to the 16 ms budget.
const raceEnabled = true
