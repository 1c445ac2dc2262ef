package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
)

// HashedDimension is the Hashed embedder's default vector length.
const HashedDimension = 256

// Hashed is an offline, deterministic embedder whose cosine means
// something: a random projection of a text's words and word pairs (seeded
// per feature by its hash), so texts that share words land near each other.
// Every component is used, as in a real model, so sign-bit quantization
// keeps its meaning; a text without features embeds as the zero vector.
type Hashed struct{ Dim int }

// Dimension is the vector length (HashedDimension by default).
func (h Hashed) Dimension() int {
	if h.Dim <= 0 {
		return HashedDimension
	}
	return h.Dim
}

// Describe names the embedder.
func (h Hashed) Describe() string { return fmt.Sprintf("hashed (dimension %d)", h.Dimension()) }

// Embed returns the embedding of each text.
func (h Hashed) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	acc := make([]float32, h.Dimension())
	for i, t := range texts {
		out[i] = hashedEmbedding(t, acc)
	}
	return out, nil
}

// hashedEmbedding is the Hashed embedding of text of len(acc) components;
// acc is scratch space.
func hashedEmbedding(text string, acc []float32) []float64 {
	clear(acc)
	counts := map[string]float64{}
	prev := ""
	for _, w := range words(text) {
		counts[w]++
		if prev != "" {
			counts[prev+" "+w] += 0.5
		}
		prev = w
	}
	for f, c := range counts {
		w := float32(1 + math.Log(c))
		if c < 1 {
			w = float32(c) // a bigram seen once
		}
		project(acc, fnv64(f), w)
	}
	var n2 float64
	for _, x := range acc {
		n2 += float64(x) * float64(x)
	}
	v := make([]float64, len(acc))
	if n2 == 0 {
		return v
	}
	inv := 1 / math.Sqrt(n2)
	for i, x := range acc {
		v[i] = float64(x) * inv
	}
	return v
}

// project adds w times the ±1 vector seeded by seed to acc.
func project(acc []float32, seed uint64, w float32) {
	s := seed
	for base := 0; base < len(acc); base += 64 {
		s += 0x9e3779b97f4a7c15 // splitmix64
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		chunk := acc[base:min(base+64, len(acc))]
		// Branch-free: bit j of z flips the sign of w (a branch on a
		// random bit is mispredicted half the time, 5x slower).
		wb := math.Float32bits(w)
		for j := range chunk {
			chunk[j] += math.Float32frombits(wb ^ uint32(z>>uint(j)&1)<<31)
		}
	}
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// words are the feature words of text.
func words(text string) []string {
	f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	out := f[:0]
	for _, w := range f {
		if stopWords[w] || !hasLetter(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func hasLetter(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can did do does for from had has have he her his i if in
into is it its me my no not of on or our she so than that the their them then there these they this to
too was we were what when where which who will with would you your`) {
		m[w] = true
	}
	return m
}()
