// Package detail is the inspector's Detail view: one event, its index
// document at once and its archived event fetched on demand, both as
// foldable JSON, together or side by side.
package detail

import (
	"context"
	"encoding/json"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
	"engram/ui/widget/textinput"
)

// Model is the Detail view.
type Model struct {
	c    *uikit.Common
	doc  *model.IndexDoc
	nav  uikit.Navigator
	w, h int

	folds       map[string]bool // kept while moving between events
	one         *jsontree.Model // index document and archived event together
	left, right *jsontree.Model // side by side
	side        bool

	idxTree  *jsontree.Node
	arch     *query.Archived
	archTree *jsontree.Node
	archErr  error
	fetching bool
	req      uint64
	cancel   context.CancelFunc

	searching bool
	input     textinput.Model

	archTurn archTurn // the chain from the archive (turn.go)
	links    links    // the events this one names or is named by (shapes.go)
}

// Lines above the JSON: title, facts (one line, or more when they wrap),
// archive status.
func (v *Model) headH() int {
	if v.doc == nil {
		return 3
	}
	return 2 + len(v.facts()) + len(v.turnLines()) + len(v.linkLines())
}

// New shows no event yet.
func New(c *uikit.Common) *Model {
	folds := map[string]bool{}
	v := &Model{c: c, folds: folds, input: textinput.Model{Prompt: "/", Placeholder: "search the JSON"}}
	v.one, v.left, v.right = jsontree.New(c, folds), jsontree.New(c, folds), jsontree.New(c, folds)
	v.right.ShowMarks = true
	return v
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize lays out the JSON panes: the whole width, or two halves.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.layout()
}

// layout sizes the panes to what the head lines leave: they depend on the
// event shown (its facts wrap) as well as on the size.
func (v *Model) layout() {
	w, h := v.w, v.h
	bodyH := max(1, h-v.headH()-1)
	v.one.SetSize(w, bodyH)
	half := (w - 1) / 2
	v.left.SetSize(half, bodyH)
	v.right.SetSize(w-half-1, bodyH)
}

// Open shows doc, cancelling the fetch of the previous event and starting
// this one's.
func (v *Model) Open(doc *model.IndexDoc, nav uikit.Navigator) tea.Cmd {
	if v.cancel != nil {
		v.cancel()
	}
	other := v.doc == nil || v.doc.EventID != doc.EventID
	v.doc, v.nav = doc, nav
	turn := tea.Batch(v.openTurn(doc), v.openLinks(doc))
	v.layout()
	v.arch, v.archTree, v.archErr = nil, nil, nil
	b, _ := json.Marshal(doc)
	if t, err := jsontree.Parse(b, "index"); err == nil {
		v.idxTree = jsontree.Rekey(t, "index", "index")
	} else { // never the previous event's tree under this one's title
		v.idxTree = jsontree.Note("index", "index", "cannot show the index document: "+uikit.ErrorText(err), true, false)
	}
	v.req++
	v.fetching = true
	ctx, cancel := context.WithTimeout(v.c.Ctx, v.c.Opts.ArchiveTimeout)
	v.cancel = cancel
	v.rebuild()
	if other { // the search and the cursor were the last event's
		v.searching = false
		v.input.Blur()
		v.input.SetValue("")
		for _, p := range v.allPanes() {
			p.Search("")
			p.Top()
		}
	}
	return tea.Batch(fetchArchive(ctx, v.c.Deps.Archive, doc, v.c.Opts.ArchiveLimit, v.req), turn)
}

// Close stops a fetch still running (the view is left); its answer is
// then dropped, and coming back fetches again.
func (v *Model) Close() {
	v.archTurn.stop()
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
	if v.fetching {
		v.req++
		v.fetching = false
	}
}

// Busy reports whether the archived event, or its turn, is being fetched.
func (v *Model) Busy() bool { return v.fetching || v.archTurn.loading }

// Shown is called when the view is focused. With no event it opens d (the
// stream's selection, if any) with nav; an event left while its archive
// was being fetched is fetched again.
func (v *Model) Shown(d *model.IndexDoc, nav uikit.Navigator) tea.Cmd {
	switch {
	case v.doc == nil && d != nil:
		return v.Open(d, nav)
	case v.doc != nil && !v.fetching && v.arch == nil && v.archErr == nil:
		return v.Open(v.doc, v.nav)
	case v.doc != nil && v.archTurn.want && !v.archTurn.loading && v.archTurn.turn == nil && v.archTurn.err == nil:
		return v.openTurn(v.doc) // left while its turn was being found
	}
	return nil
}

// Doc is the event shown, nil before any.
func (v *Model) Doc() *model.IndexDoc { return v.doc }

// SpanID is the shown event's context.spanId, once its archive is read.
func (v *Model) SpanID() string { return v.archTree.Member("context", "spanId") }

// Nav is the list the event was opened from, nil for none.
func (v *Model) Nav() uikit.Navigator { return v.nav }

// Archived is the archived event of Doc, nil until it is fetched.
func (v *Model) Archived() *query.Archived { return v.arch }

// Searching reports whether keys are typed into the search.
func (v *Model) Searching() bool { return v.searching }

// Folded reports whether the member at path is folded, in every event shown.
func (v *Model) Folded(path string) bool { return v.folds[path] }

// Panes are the JSON panes keys act on: one, or the index document and
// the archived event side by side.
func (v *Model) Panes() []*jsontree.Model { return v.panes() }

func (v *Model) onArchive(msg archiveMsg) {
	if msg.req != v.req {
		return // an event the view has moved on from
	}
	v.fetching = false
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
	v.arch, v.archTree, v.archErr = msg.arch, msg.tree, msg.err
	if query.IsLayersDisagree(msg.err) && msg.arch == nil {
		v.c.Missing[msg.id] = true
	} else if msg.err == nil {
		delete(v.c.Missing, msg.id)
	}
	v.rebuild()
}

// archiveNode is the archived event, or a note saying where it stands.
func (v *Model) archiveNode() *jsontree.Node {
	switch {
	case v.archTree != nil:
		return jsontree.Rekey(v.archTree, "archive", "archive")
	case v.fetching:
		return jsontree.Note("archive", "archive", "fetching "+v.doc.ObjectStorageKey+"…", false, true)
	case v.archErr != nil:
		return jsontree.Note("archive", "archive", uikit.ErrorText(v.archErr), true, false)
	case v.arch != nil && v.arch.Truncated:
		text := fmt.Sprintf("%s bytes: more than the %s this view reads", uikit.Thousands(v.arch.Size), uikit.Thousands(v.c.Opts.ArchiveLimit))
		if v.c.CanWrite() {
			text += "; export it whole with e"
		}
		return jsontree.Note("archive", "archive", text, true, false)
	}
	return jsontree.Note("archive", "archive", "not fetched", false, false)
}

// rebuild puts the current trees into the panes.
func (v *Model) rebuild() {
	if v.doc == nil {
		return
	}
	idx := v.idxTree
	if idx == nil {
		idx = jsontree.Note("index", "index", "index document could not be shown", true, false)
	}
	arch := v.archiveNode()
	v.left.SetRoot(idx)
	v.right.SetRoot(arch)
	// The combined root adopts both trees, the archived event first: its
	// state is the first line while it loads, the index document under it.
	// The newer shapes, read for people, come first (shapes.go).
	var body []byte
	if v.arch != nil && !v.arch.Truncated {
		body = v.arch.Body
	}
	if shown := shownNode(v.doc, body); shown != nil {
		v.one.SetRoot(jsontree.ObjectOf("", shown, arch, idx))
		return
	}
	v.one.SetRoot(jsontree.ObjectOf("", arch, idx))
}

// allPanes are the three JSON views, shown or not: a search goes to all,
// so that s shows its matches at once.
func (v *Model) allPanes() []*jsontree.Model { return []*jsontree.Model{v.one, v.left, v.right} }

// panes are the JSON views keys act on.
func (v *Model) panes() []*jsontree.Model {
	if v.side {
		return []*jsontree.Model{v.left, v.right}
	}
	return []*jsontree.Model{v.one}
}
