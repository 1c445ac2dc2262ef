package ui

import "testing"

// S in the detail lists the nearest events by embedding; enter opens one,
// ] steps to the next of the list, esc goes back to the list, then to the
// event it was of.
func TestSimilarListOpensLikeTheStream(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "enter")
	of := m.detail.Doc().EventID
	press(t, m, "?")
	mustContain(t, screen(m), "similar events")
	press(t, m, "x", "S")
	if m.focus != viewSimilar {
		t.Fatalf("S: focus %v", m.focus)
	}
	s := screen(m)
	mustContain(t, s, "Similar to "+of, "nearest by embedding")
	mustNotContain(t, rowsOf(s), of)
	first := m.similar.Selected()
	press(t, m, "enter")
	if m.focus != viewDetail || m.detail.Doc() != first {
		t.Fatalf("enter opened %v in %v", m.detail.Doc(), m.focus)
	}
	press(t, m, "]")
	if d := m.detail.Doc(); d == first || d != m.similar.Selected() {
		t.Fatalf("] went to %v, want the list's second", d.EventID)
	}
	press(t, m, "esc")
	if m.focus != viewSimilar {
		t.Fatalf("esc from a neighbour's detail: focus %v, want the list", m.focus)
	}
	press(t, m, "esc")
	if m.focus != viewDetail || m.detail.Doc().EventID != of {
		t.Fatalf("esc from the list: focus %v on %v, want the detail of %s", m.focus, m.detail.Doc(), of)
	}
	press(t, m, "esc")
	if m.focus != viewStream {
		t.Fatalf("esc from the detail: focus %v, want the stream it was opened from", m.focus)
	}
}
