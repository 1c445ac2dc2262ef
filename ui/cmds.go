package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Every function here returns a tea.Cmd: the I/O runs in the command's
// goroutine with what was copied into the closure, never in Update.

func loadHead(ctx context.Context, r Reader, expr string, seq uint64, limit int, first bool) tea.Cmd {
	return func() tea.Msg {
		msg := headMsg{seq: seq, first: first}
		if first {
			if msg.tail, msg.err = r.TailStart(ctx); msg.err != nil {
				return msg
			}
		}
		msg.page, msg.err = r.Recent(ctx, expr, "", limit)
		return msg
	}
}

func loadOlder(ctx context.Context, r Reader, expr string, seq uint64, after query.Cursor, limit int) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Recent(ctx, expr, after, limit)
		return olderMsg{seq, after, page, err}
	}
}

func loadNewer(ctx context.Context, r Reader, expr string, seq uint64, ev list.Evicted) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Recent(ctx, expr, ev.Cur, ev.N)
		return newerMsg{seq, ev, page, err}
	}
}

// pollTail reads what was indexed after from. Tail knows no filter, so with
// one the new documents are checked against it by id (not by asking for the
// newest matches: documents indexed after the Tail call, or arriving late
// behind its position, would crowd new matches out of that answer).
func pollTail(ctx context.Context, r Reader, from query.Cursor, expr string, seq uint64, limit int) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Tail(ctx, from, limit)
		msg := tailMsg{seq: seq, from: from, next: page.Next, docs: page.Docs, seen: len(page.Docs), err: err}
		if err == nil {
			msg.docs, msg.err = query.Filter(ctx, r, expr, page.Docs)
		}
		return msg
	}
}

// listen waits for the next message of the pipelines this process runs;
// the root re-arms it after each one.
func listen(ctx context.Context, ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		select {
		case m := <-ch:
			return m
		case <-ctx.Done():
			return nil
		}
	}
}

// exportFile is the predictable name `e` writes: engram-<eventId>.json.
func exportFile(dir, eventID string) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, eventID)
	return filepath.Join(dir, "engram-"+safe+".json")
}

// export writes what `engram show` prints for doc: its index document and
// its archived event.
func export(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, dir string) tea.Cmd {
	return func() tea.Msg {
		out, archErr := query.ShowJSON(ctx, ar, doc)
		if out == nil {
			return uikit.StatusMsg{Text: "export: " + archErr.Error(), Err: true}
		}
		path := exportFile(dir, doc.EventID)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return uikit.StatusMsg{Text: "export: " + err.Error(), Err: true}
		}
		note := ""
		if archErr != nil {
			note = " (index document only: " + archErr.Error() + ")"
		}
		return uikit.StatusMsg{Text: fmt.Sprintf("exported %s%s", path, note)}
	}
}
