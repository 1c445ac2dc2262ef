package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// Every function here returns a tea.Cmd: the I/O runs in the command's
// goroutine with what was copied into the closure, never in Update.

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

// exportFile is the predictable name `e` writes: engram-<eventId>.json,
// or engram-<eventId>-N.json for the Nth export of the same event.
func exportFile(dir, eventID string, n int) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, eventID)
	if n > 1 {
		safe += "-" + strconv.Itoa(n)
	}
	return filepath.Join(dir, "engram-"+safe+".json")
}

// writeNew writes out to the first of the export names not taken, never
// over an earlier export; it returns the absolute path written.
func writeNew(dir, eventID string, out []byte) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for n := 1; n <= 1000; n++ {
		path := exportFile(dir, eventID, n)
		err := writeExcl(path, out)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return path, err
	}
	return "", fmt.Errorf("1000 exports of %s are already in %s", eventID, dir)
}

// writeExcl writes out to a new file at path; an existing one is an
// fs.ErrExist error and stays as it was.
func writeExcl(path string, out []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(out); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// export writes what `engram show` prints for doc, its index document and
// its archived event, to a new file of dir.
func export(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, dir string) tea.Cmd {
	return exportWith(ctx, ar, doc, func(out []byte) (string, error) { return writeNew(dir, doc.EventID, out) })
}

// exportTo is export to path: into it when it is a directory, else to the
// file, which must not exist yet (an export never replaces a file).
func exportTo(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, path string) tea.Cmd {
	return exportWith(ctx, ar, doc, func(out []byte) (string, error) {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return writeNew(path, doc.EventID, out)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		return abs, writeExcl(abs, out)
	})
}

func exportWith(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, write func([]byte) (string, error)) tea.Cmd {
	return func() tea.Msg {
		out, archErr := query.ShowJSON(ctx, ar, doc)
		if out == nil {
			return uikit.StatusMsg{Text: "export: " + archErr.Error(), Err: true}
		}
		path, err := write(out)
		if err != nil {
			return uikit.StatusMsg{Text: "export: " + err.Error(), Err: true}
		}
		note := ""
		if archErr != nil {
			note = " (index document only: " + archErr.Error() + ")"
		}
		return uikit.StatusMsg{Text: fmt.Sprintf("exported %s%s", path, note)}
	}
}

// copyMsg is the archived event of a duplicate opened without it.
type copyMsg struct {
	id   string
	body []byte
	err  error
}

// fetchCopy reads the archived event a duplicate is made of.
func fetchCopy(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, limit int64) tea.Cmd {
	return func() tea.Msg {
		a, err := query.FetchArchive(ctx, ar, doc, limit)
		if err == nil && a.Truncated {
			err = fmt.Errorf("the archived event is over %d bytes", limit)
		}
		if err != nil {
			return copyMsg{id: doc.EventID, err: err}
		}
		return copyMsg{id: doc.EventID, body: a.Body}
	}
}
