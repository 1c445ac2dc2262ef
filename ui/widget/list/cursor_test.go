package list

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

func TestCursorMoveScrollsTheFewestLines(t *testing.T) {
	var c Cursor
	c.SetHeight(3)
	steps := []struct {
		delta, sel, top int
	}{
		{1, 1, 0}, {1, 2, 0}, {1, 3, 1}, {6, 9, 7}, {-1, 8, 7}, {-7, 1, 1}, {-5, 0, 0}, {-1, 0, 0},
	}
	for _, s := range steps {
		c.Move(s.delta, 10)
		if c.Sel() != s.sel || c.Top() != s.top {
			t.Fatalf("after %+d: sel %d top %d, want %d %d", s.delta, c.Sel(), c.Top(), s.sel, s.top)
		}
	}
}

func TestCursorLeavesNoSpaceBelowTheLastItem(t *testing.T) {
	var c Cursor
	c.SetHeight(3)
	c.Move(9, 10) // top 7
	c.SetHeight(5)
	c.Scroll(10)
	if from, to := c.Visible(10); from != 5 || to != 10 {
		t.Fatalf("taller window draws %d..%d, want 5..10", from, to)
	}
	c.Scroll(2) // the list shrank
	if c.Top() != 0 {
		t.Fatalf("top %d over a list of 2", c.Top())
	}
}

func TestCursorShiftStaysOnTheSameItems(t *testing.T) {
	var c Cursor
	c.SetHeight(3)
	c.Move(4, 10)
	c.Shift(5)
	if c.Sel() != 9 || c.Top() != 7 {
		t.Fatalf("shift by 5: sel %d top %d", c.Sel(), c.Top())
	}
	c.Shift(-20)
	if c.Sel() != 0 || c.Top() != 0 {
		t.Fatalf("shift past the top: sel %d top %d", c.Sel(), c.Top())
	}
}

func TestCursorZeroHeightShowsTheSelection(t *testing.T) {
	var c Cursor
	c.Move(4, 10)
	if from, to := c.Visible(10); from != 4 || to != 5 {
		t.Fatalf("no height set: draws %d..%d", from, to)
	}
}

func TestStep(t *testing.T) {
	km := uikit.DefaultKeyMap()
	keys := map[string]struct {
		msg   tea.KeyPressMsg
		delta int
		ok    bool
	}{
		"up": {tea.KeyPressMsg{Code: tea.KeyUp}, -1, true}, "j": {tea.KeyPressMsg{Code: 'j', Text: "j"}, 1, true},
		"pgdown": {tea.KeyPressMsg{Code: tea.KeyPgDown}, 7, true}, "pgup": {tea.KeyPressMsg{Code: tea.KeyPgUp}, -7, true},
		"home": {tea.KeyPressMsg{Code: tea.KeyHome}, -40, true}, "G": {tea.KeyPressMsg{Code: 'G', Text: "G"}, 40, true},
		"enter": {tea.KeyPressMsg{Code: tea.KeyEnter}, 0, false},
	}
	for name, k := range keys {
		if delta, ok := Step(k.msg, km, 7, 40); delta != k.delta || ok != k.ok {
			t.Errorf("%s: %d %v, want %d %v", name, delta, ok, k.delta, k.ok)
		}
	}
}
