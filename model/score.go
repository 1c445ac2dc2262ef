package model

import (
	"math"
	"unicode/utf8"
)

// DefaultSummaryLen is how many characters of input.text the index keeps.
const DefaultSummaryLen = 1000

// StubDimension is the stub embedder's default dimension.
const StubDimension = 8

// Importance is the ingestion prior (docs/data-contract.md, Importance prior):
// 0.3·t + 0.2·g + 0.2·a + 0.3·s, clamped to [0, 1], 3 decimals.
func Importance(e *Event) float64 {
	t := 1.0
	if e.Type == TypeUserInput || e.Type == TypeSystemEvent {
		t = 0.3
	}
	g := 0.0
	if len(e.Tags) > 0 {
		g = 1
	}
	a := 0.0
	if e.Action != nil {
		a = 1
	}
	s := 0.5
	if ok := e.Result.Succeeded(); ok != nil {
		s = 0.1
		if *ok {
			s = 1
		}
	}
	score := math.Round((0.3*t+0.2*g+0.2*a+0.3*s)*1000) / 1000
	return math.Max(0, math.Min(1, score))
}

// StubEmbedding is the source system's offline, deterministic embedding.
// The seed sums UTF-16 first units (the code point, or its high surrogate
// above the BMP) because that is what JavaScript's charCodeAt(0) gives.
func StubEmbedding(text string, dim int) []float64 {
	seed := 0
	for _, r := range text {
		if r > 0xFFFF {
			r = 0xD800 + ((r - 0x10000) >> 10)
		}
		seed += int(r)
	}
	v := make([]float64, dim)
	for i := range v {
		v[i] = math.Round(float64((seed+17*i)%100)) / 100
	}
	return v
}

// Summary cuts text to at most n characters without splitting one.
func Summary(text string, n int) string {
	if n <= 0 || utf8.RuneCountInString(text) <= n {
		return text
	}
	i := 0
	for pos := range text {
		if i == n {
			return text[:pos]
		}
		i++
	}
	return text
}
