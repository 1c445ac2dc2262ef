package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"engram/ingest/gen"
)

// TestHashedGroupsTasks: on demo data, the nearest neighbours of an event
// by the Hashed embedding share its task (the scenario, the event's first
// tag) far more often than chance, and than the stub's.
func TestHashedGroupsTasks(t *testing.T) {
	type ev struct {
		text, task string
	}
	var evs []ev
	for _, b := range gen.Events(gen.Config{Seed: 1}, 600) {
		var e struct {
			Input struct{ Text string } `json:"input"`
			Tags  []string              `json:"tags"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev{e.Input.Text, e.Tags[0]})
	}
	texts := make([]string, len(evs))
	freq := map[string]float64{}
	for i, e := range evs {
		texts[i] = e.text
		freq[e.task]++
	}
	chance := 0.0
	for _, n := range freq {
		p := n / float64(len(evs))
		chance += p * p
	}
	share := func(emb interface {
		Embed(context.Context, []string) ([][]float64, error)
	}) float64 {
		vs, err := emb.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		const k = 10
		same, all := 0, 0
		for i := range vs {
			best := make([]int, 0, k) // indexes, best first
			score := func(j int) float64 { return cosine(vs[i], vs[j]) }
			for j := range vs {
				if j == i {
					continue
				}
				pos := len(best)
				for pos > 0 && score(best[pos-1]) < score(j) {
					pos--
				}
				if pos < k {
					if len(best) < k {
						best = append(best, 0)
					}
					copy(best[pos+1:], best[pos:])
					best[pos] = j
				}
			}
			for _, j := range best {
				all++
				if evs[j].task == evs[i].task {
					same++
				}
			}
		}
		return float64(same) / float64(all)
	}
	hashed, stub := share(Hashed{}), share(Stub{})
	t.Logf("neighbours@10 sharing the task: hashed %.3f, stub %.3f, chance %.3f", hashed, stub, chance)
	if hashed < 0.9 || hashed < 3*chance {
		t.Errorf("hashed: %.3f of the neighbours share the task (chance %.3f)", hashed, chance)
	}
}

func TestHashedDeterministicUnit(t *testing.T) {
	for _, dim := range []int{8, 256, 1536, 100} {
		h := Hashed{Dim: dim}
		a, _ := h.Embed(context.Background(), []string{"Build 42 failed on the integration stage"})
		b, _ := h.Embed(context.Background(), []string{"Build 42 failed on the integration stage"})
		if len(a[0]) != dim || math.Abs(cosine(a[0], a[0])-1) > 1e-9 || cosine(a[0], b[0]) != 1 {
			t.Errorf("dim %d: len %d, not a unit deterministic vector", dim, len(a[0]))
		}
		var n2 float64
		for _, x := range a[0] {
			n2 += x * x
		}
		if math.Abs(n2-1) > 1e-6 {
			t.Errorf("dim %d: |v|² = %v", dim, n2)
		}
	}
	z, _ := Hashed{}.Embed(context.Background(), []string{"the 42 of"})
	for _, x := range z[0] {
		if x != 0 {
			t.Fatal("a text without features is not the zero vector")
		}
	}
	near, _ := Hashed{}.Embed(context.Background(), []string{
		"Build 17 failed on the integration stage", "Build 9031 failed on the integration stage", "Approved with one comment on jitter."})
	if c1, c2 := cosine(near[0], near[1]), cosine(near[0], near[2]); c1 < 0.99 || c2 > 0.5 {
		t.Errorf("cosines: same task %.3f, other task %.3f", c1, c2)
	}
}

func cosine(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

func BenchmarkHashed(b *testing.B) {
	text := "Decide how to handle: Build 4821 failed on the integration stage. The failure is a timeout talking to the object store; check whether the bucket exists in the test environment before blaming the code."
	for _, dim := range []int{256, 768, 1536} {
		b.Run(fmt.Sprint(dim), func(b *testing.B) {
			h := Hashed{Dim: dim}
			for b.Loop() {
				if _, err := h.Embed(context.Background(), []string{text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
