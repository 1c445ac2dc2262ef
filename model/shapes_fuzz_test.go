package model_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"engram/model"
)

// FuzzShapes drives the newer event shapes (context.source, result.content
// blocks and isError, the OperationalSignal payload, CaseHub's confidence,
// timestamps and attributes) through Decode and Validate, seeded with the
// fixtures of testdata/shapes. A refusal is Problems, each on one line,
// each located: its path empty (the whole value) or starting at a member
// the input has (or, said required, one it lacks). An event that validates
// is read alike on the fast and the slow path, and its archive reads back
// to the same source, success, content blocks, signal and links.
func FuzzShapes(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "shapes", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no shape fixtures: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		// Each fixture on one line, as it comes in a JSON Lines file.
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			f.Add(c.Bytes())
		}
	}
	for _, s := range []string{
		`{"eventId":"x","timestamp":"2026-05-08T10:00:00Z","type":"tool_result","context":{"sessionId":"s","source":""},"input":{"text":"x"},"result":{"content":[],"isError":"yes"}}`,
		`{"eventId":"x","timestamp":"2026-05-08T10:00:00Z","type":"tool_result","context":{"sessionId":"s"},"input":{"text":"x"},"result":{"content":[{"type":"image"},{"type":7},null,"t"],"isError":false,"success":true}}`,
		`{"eventId":"x","timestamp":"2026-05-08T10:00:00Z","type":"environmental_observation","subtype":"OperationalSignal","context":{"sessionId":"system:x"},"input":{"text":"x"},"payload":[]}`,
		`{"eventId":"x","timestamp":"2026-05-08T10:00:00Z","type":"environmental_observation","subtype":"OperationalSignal","context":{"sessionId":"s"},"input":{"text":"x"},"payload":{"source":"p","severity":"high","affectedServices":[],"correlationEmbedding":[1e999],"graphSeeds":[{},1]}}`,
		`{"kind":"observation","agentId":"a","tenantId":"t","caseId":"c","description":"d","subject":"s","confidence":-0.1,"timestamp":-1e300}`,
		`{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","timestamp":"2026-05-08","metadata":{"sub-thought-count":"99999999999","reflection-level":"-1","source-memory-ids":",,"}}`,
		`{"kind":"outcome","agentId":"a","tenantId":"t","caseId":"c","description":"d","confidence":"0.5","metadata":{"quality-signal":"NaN"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := model.Decode(data, caseHubOpts)
		if err == nil {
			err = e.Validate().Err()
		}
		if err != nil {
			var ps model.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not Problems: %T %v", err, err)
			}
			var top map[string]json.RawMessage
			_ = json.Unmarshal(data, &top)
			for _, p := range ps {
				if p.Reason == "" || strings.ContainsAny(p.String(), "\n\r") {
					t.Fatalf("problem not one line with a reason: %q", p.String())
				}
				if !located(p, top) {
					t.Fatalf("problem %q names no member of the input %s", p.String(), data)
				}
			}
			return
		}
		agree(t, data)
		arch, err := e.ArchiveJSON()
		if err != nil {
			t.Fatalf("ArchiveJSON: %v", err)
		}
		back, err := model.Decode(arch, caseHubOpts)
		if err != nil {
			t.Fatalf("the archive %s does not decode: %v", arch, err)
		}
		if ps := back.Validate(); len(ps) > 0 {
			t.Fatalf("the archive %s of a valid event is invalid: %v", arch, ps)
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"source", model.SourceOf(back.Context.Source, back.Context.SessionID), model.SourceOf(e.Context.Source, e.Context.SessionID)},
			{"success", back.Result.Succeeded(), e.Result.Succeeded()},
			{"blocks", back.Result.Blocks(), e.Result.Blocks()},
			{"signal", back.Signal(), e.Signal()},
			{"links", model.LinksOf(back.Tags, back.Input.Structured), model.LinksOf(e.Tags, e.Input.Structured)},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("%s: the archive reads %#v, the event %#v\narchive %s", c.what, c.got, c.want, arch)
			}
		}
	})
}

// located reports whether a problem's path is the whole value (empty) or
// starts at a member of the input object top (any case: members are
// matched so), or is a required member it lacks.
func located(p model.Problem, top map[string]json.RawMessage) bool {
	if p.Path == "" || strings.Contains(p.Reason, "required") {
		return true
	}
	first := p.Path
	if i := strings.IndexAny(first, ".["); i >= 0 {
		first = first[:i]
	}
	for k := range top {
		if strings.EqualFold(k, first) {
			return true
		}
	}
	return false
}
