package stream

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/uikit"
)

// Find searches the rows held for term without filtering them (lnav's
// search, :search): it selects the first row from the selection on that
// holds it; n and N go on. "" ends the search.
func (v *Model) Find(term string) tea.Cmd {
	v.find = strings.TrimSpace(term)
	if v.find == "" {
		return nil
	}
	return v.findFrom(0, 1)
}

// Finding is the term searched for ("" when none).
func (v *Model) Finding() string { return v.find }

// findFrom selects the first row holding the term, from the row skip
// away from the selection on, towards dir (1 older, -1 newer).
func (v *Model) findFrom(skip, dir int) tea.Cmd {
	for i := v.cur.Sel() + skip; i >= 0 && i < v.buf.Len(); i += dir {
		if holds(v.buf.Row(i), v.find) {
			return v.move(i - v.cur.Sel())
		}
	}
	return uikit.StatusCmd("no row loaded holds "+strconv.Quote(uikit.Clean(v.find))+" that way", false)
}

// holds: one of the columns shown holds term, case aside.
func holds(d *model.IndexDoc, term string) bool {
	for _, s := range []string{d.Summary, d.AgentID, d.EventType, d.TurnKey(), d.EventID} {
		if uikit.IndexFold(uikit.Clean(s), term) >= 0 {
			return true
		}
	}
	return false
}
