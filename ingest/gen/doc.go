// Package gen makes realistic, deterministic experience events (turns of
// observation, action and outcome by several agents, with failures and
// varied importance), so the demo, tests and benchmarks see the same data.
package gen
