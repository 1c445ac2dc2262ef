package detail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query/expr"
	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
)

// The newer event shapes, shown readably above the JSON (a "shown"
// member: where the event came from, its MCP content blocks, an
// operational signal's payload, CaseHub's memory domains), and the links
// between events (the replacement chain, a reflection's sources) on a
// line that digit keys follow.

// maxLinks is how many links the line numbers (keys 1 to 9).
const maxLinks = 9

// link is one event the shown one names or is named by.
type link struct {
	rel, id string
	held    bool // the index holds it (asked once; false until known)
}

// links is the link line's state for the event shown.
type links struct {
	list    []link
	asked   bool // the index answered which are held, and what replaced it
	req     uint64
	cancel  context.CancelFunc
	opening string // the id being opened
}

// linksMsg answers findLinks.
type linksMsg struct {
	req  uint64
	list []link
}

// followMsg answers follow: the document of the link taken.
type followMsg struct {
	req uint64
	id  string
	doc *model.IndexDoc
	err error
}

// Link relations, as the line names them.
const (
	relReplaces   = "replaces"
	relReplacedBy = "replaced by"
	relCritique   = "critique"
	relSource     = "source"
)

// openLinks starts finding doc's links: those it names are known at once
// (its tags, its structured metadata); the index says which of them it
// holds and which events replaced this one.
func (v *Model) openLinks(doc *model.IndexDoc) tea.Cmd {
	l := &v.links
	if l.cancel != nil {
		l.cancel()
		l.cancel = nil
	}
	l.req++
	l.opening = ""
	l.list, l.asked = nil, false
	named := model.LinksOf(doc.Tags, doc.Structured)
	for _, id := range named.Replaces {
		l.list = append(l.list, link{rel: relReplaces, id: id})
	}
	for _, id := range named.Critiques {
		l.list = append(l.list, link{rel: relCritique, id: id})
	}
	for _, id := range named.Sources {
		l.list = append(l.list, link{rel: relSource, id: id})
	}
	r := v.c.Deps.Reader
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(v.c.Ctx, v.c.Opts.ArchiveTimeout)
	l.cancel = cancel
	req, id, list := l.req, doc.EventID, append([]link(nil), l.list...)
	return func() tea.Msg {
		defer cancel()
		by := expr.Term{Kind: expr.KindField, Field: expr.FieldTag, Value: model.TagReplaces + id}.String()
		if p, err := r.Recent(ctx, by, "", maxLinks); err == nil {
			for _, d := range p.Docs {
				if d.EventID != id {
					list = append(list, link{rel: relReplacedBy, id: d.EventID, held: true})
				}
			}
		}
		var ids []string
		for _, k := range list {
			if !k.held {
				ids = append(ids, k.id)
			}
		}
		if len(ids) > 0 {
			if held, err := r.Match(ctx, "", ids); err == nil {
				for i := range list {
					list[i].held = list[i].held || held[list[i].id]
				}
			}
		}
		return linksMsg{req: req, list: list}
	}
}

func (v *Model) onLinks(msg linksMsg) {
	if msg.req != v.links.req {
		return
	}
	v.links.list, v.links.asked = msg.list, true
}

// linkLines is the link line: nothing when the event names no other and
// none replaced it.
func (v *Model) linkLines() []string {
	l := &v.links
	if len(l.list) == 0 {
		return nil
	}
	st := v.c.Styles
	var parts []string
	for i, k := range l.list {
		if i == maxLinks {
			parts = append(parts, st.Muted.Render(fmt.Sprintf("+%d more", len(l.list)-maxLinks)))
			break
		}
		label := k.rel + " " + uikit.Clean(k.id)
		switch {
		case k.held:
			parts = append(parts, st.Accent.Render(strconv.Itoa(i+1))+" "+label)
		case l.asked:
			parts = append(parts, st.Muted.Render(strconv.Itoa(i+1)+" "+label+" (not held)"))
		default:
			parts = append(parts, st.Muted.Render(strconv.Itoa(i+1))+" "+label)
		}
	}
	return packParts(append([]string{st.Muted.Render("links")}, parts...), st.Subtle.Render(" · "), v.w-1)
}

// followKey opens link n (1-based) when the key is a digit naming one.
func (v *Model) followKey(s string) (tea.Cmd, bool) {
	if len(s) != 1 || s[0] < '1' || s[0] > '9' {
		return nil, false
	}
	if len(v.links.list) == 0 { // the help names 1-9: say why nothing opens
		return uikit.StatusCmd("no link "+s+": this event names no other event", false), true
	}
	n := int(s[0] - '0')
	if n > len(v.links.list) || n > maxLinks {
		return uikit.StatusCmd(fmt.Sprintf("no link %d: this event has %d", n, min(len(v.links.list), maxLinks)), false), true
	}
	k := v.links.list[n-1]
	if v.links.asked && !k.held {
		return uikit.StatusCmd(k.rel+" "+uikit.Clean(k.id)+": not in this index", false), true
	}
	r := v.c.Deps.Reader
	if r == nil {
		return nil, true
	}
	v.links.opening = k.id
	ctx, cancel := context.WithTimeout(v.c.Ctx, v.c.Opts.ArchiveTimeout)
	req := v.links.req
	return func() tea.Msg {
		defer cancel()
		d, err := r.Document(ctx, k.id)
		return followMsg{req: req, id: k.id, doc: d, err: err}
	}, true
}

func (v *Model) onFollow(msg followMsg) tea.Cmd {
	if msg.req != v.links.req || msg.id != v.links.opening {
		return nil // the view moved on
	}
	v.links.opening = ""
	if msg.err != nil || msg.doc == nil {
		return uikit.StatusCmd("open "+uikit.Clean(msg.id)+": "+uikit.ErrorText(msg.err), true)
	}
	return v.Open(msg.doc, v.nav)
}

// shownNode is the readable "shown" member for doc and its archived
// event (nil until fetched): nil when the event has none of the newer
// shapes.
func shownNode(doc *model.IndexDoc, body []byte) *jsontree.Node {
	var ev *model.Event
	if len(body) > 0 {
		ev, _ = model.Decode(body, model.DecodeOptions{})
	}
	var o ordered
	source, session := doc.Source, doc.SessionID
	if ev != nil {
		source, session = model.SourceOf(ev.Context.Source, ev.Context.SessionID), ev.Context.SessionID
	}
	if source != "" || model.IsSystemSession(session) {
		s := source
		if model.IsSystemSession(session) {
			s += " · system session " + session
		}
		o.add("source", strings.TrimPrefix(s, " · "))
	}
	if ev != nil {
		if sig := ev.Signal(); sig != nil {
			var p ordered
			p.add("severity", sig.Severity)
			p.add("source", sig.Source)
			if len(sig.AffectedServices) > 0 {
				p.add("affected", strings.Join(sig.AffectedServices, ", "))
			}
			if n := len(sig.CorrelationEmbedding); n > 0 {
				p.add("correlation", fmt.Sprintf("an embedding of %d numbers", n))
			}
			if seeds := sig.Seeds(); len(seeds) > 0 {
				p.add("graph seeds", strings.Join(seeds, ", "))
			}
			o.add("operational signal", p)
		} else if ev.Subtype != "" {
			o.add("subtype", ev.Subtype)
		}
		if r := ev.Result; r != nil {
			if bs := r.Blocks(); len(bs) > 0 {
				var lines []string
				for _, b := range bs {
					lines = append(lines, b.Describe())
				}
				o.add("content", lines)
			}
			if r.IsError != nil && *r.IsError && r.Success == nil {
				o.add("result", "isError: counted as a failure")
			}
		}
	}
	structured := doc.Structured
	if ev != nil && len(ev.Input.Structured) > 0 {
		structured = ev.Input.Structured
	}
	if m := model.MemoryOf(structured); m != nil {
		if m.OtherAgent != "" || m.QualitySignal != "" {
			var p ordered
			p.addIf("other agent", m.OtherAgent)
			p.addIf("quality signal", m.QualitySignal)
			o.add("relationship", p)
		}
		if m.Insight != "" || m.ReflectionLevel != "" || len(m.SourceMemoryIDs) > 0 {
			var p ordered
			p.addIf("level", m.ReflectionLevel)
			p.addIf("insight", m.Insight)
			if len(m.SourceMemoryIDs) > 0 {
				p.add("sources", strings.Join(m.SourceMemoryIDs, ", ")+" (keys on the links line)")
			}
			o.add("reflection", p)
		}
		if len(m.SubThoughts) > 0 || m.SubThoughtCount != "" {
			var lines []string
			for _, st := range m.SubThoughts {
				lines = append(lines, subThought(st))
			}
			key := "sub-thoughts"
			if m.SubThoughtCount != "" && m.SubThoughtCount != strconv.Itoa(len(m.SubThoughts)) {
				key = fmt.Sprintf("sub-thoughts (%s counted)", m.SubThoughtCount)
			}
			o.add(key, lines)
		}
	}
	if len(o) == 0 {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		return nil
	}
	t, err := jsontree.Parse(b, "shown")
	if err != nil {
		return nil
	}
	return jsontree.Rekey(t, "shown", "shown")
}

// subThought is one sub-thought on a line: its number and type, its text,
// then what else it says.
func subThought(st model.SubThought) string {
	typ := st.Type
	if typ == "" {
		typ = "untyped"
	}
	s := fmt.Sprintf("%d. [%s] %s", st.N, typ, st.Text)
	var more []string
	if st.Entity != "" {
		more = append(more, "entity "+st.Entity)
	}
	switch st.Graduated {
	case "true":
		more = append(more, "graduated")
	case "false":
		more = append(more, "not graduated")
	}
	if st.Confidence != "" {
		more = append(more, "confidence "+st.Confidence)
	}
	if len(more) > 0 {
		s += " — " + strings.Join(more, " · ")
	}
	return s
}

// ordered is a JSON object whose members keep their order.
type ordered []struct {
	k string
	v any
}

func (o *ordered) add(k string, v any) {
	*o = append(*o, struct {
		k string
		v any
	}{k, v})
}

func (o *ordered) addIf(k, v string) {
	if v != "" {
		o.add(k, v)
	}
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
