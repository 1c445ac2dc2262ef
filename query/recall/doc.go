// Package recall ranks what the memory would retrieve for a prompt, and says
// why: each candidate's factors, their weights and the formula that combines
// them (docs/recall.md). It is pure: the backends only find the candidates
// (Searcher), so both indexes rank alike, and nothing here changes the index.
package recall
