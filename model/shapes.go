package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The newer event shapes (docs/data-contract.md, section 1.1): where an
// event came from, MCP content blocks, operational signals, the
// replacement chain and CaseHub's memory domains.

// Values of context.source.
const (
	SourceSession = "session"
	SourceAmbient = "ambient"
	SourceSystem  = "system"
)

// Sources lists every accepted value of context.source.
var Sources = []string{SourceSession, SourceAmbient, SourceSystem}

// SystemSessionPrefix starts the fixed session ids of the source system's
// own work (system:ambient:telemetry, system:consolidation).
const SystemSessionPrefix = "system:"

// SourceOf is where an event came from: context.source when given, else
// system for a session id starting with "system:", else "" (not said).
func SourceOf(source, sessionID string) string {
	if source != "" {
		return source
	}
	if strings.HasPrefix(sessionID, SystemSessionPrefix) {
		return SourceSystem
	}
	return ""
}

// IsSystemSession reports whether a session id is one of the source
// system's own (system:…).
func IsSystemSession(id string) bool { return strings.HasPrefix(id, SystemSessionPrefix) }

// Succeeded is the result's success: Success when given, else false when
// isError is true (MCP's failure flag), else nil (unknown).
func (r *Result) Succeeded() *bool {
	switch {
	case r == nil:
		return nil
	case r.Success != nil:
		return r.Success
	case r.IsError != nil && *r.IsError:
		return ptr(false)
	}
	return nil
}

// Content block types engram names (MCP); others are shown by type.
const (
	blockText         = "text"
	blockImage        = "image"
	blockAudio        = "audio"
	blockResourceLink = "resource_link"
	blockResource     = "resource"
)

// Block is one MCP content block as engram shows it. Data is never
// decoded or fetched: DataLen is the length of its base64 text.
type Block struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	Data        string `json:"data,omitempty"`
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Resource is an embedded resource's contents (type resource).
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType,omitempty"`
		Text     string `json:"text,omitempty"`
	} `json:"resource,omitempty"`
}

// Blocks is result.content decoded, nil when absent or not an array of
// objects (Validate says why).
func (r *Result) Blocks() []Block {
	if r == nil || !set(r.Content) {
		return nil
	}
	var bs []Block
	if json.Unmarshal(r.Content, &bs) != nil {
		return nil
	}
	return bs
}

// Describe is the block in one line for a reader: a text block's text,
// an image or a link named (never fetched).
func (b Block) Describe() string {
	switch b.Type {
	case blockText:
		return b.Text
	case blockImage, blockAudio:
		return fmt.Sprintf("%s %s, %s (not shown)", b.Type, orUnknown(b.MimeType), sizeOfBase64(b.Data))
	case blockResourceLink:
		s := "link " + b.URI
		if n := firstNonEmpty(b.Title, b.Name); n != "" {
			s = "link " + n + " <" + b.URI + ">"
		}
		if b.MimeType != "" {
			s += " " + b.MimeType
		}
		if b.Description != "" {
			s += ": " + b.Description
		}
		return s + " (not fetched)"
	case blockResource:
		if b.Resource != nil {
			s := "resource <" + b.Resource.URI + ">"
			if b.Resource.Text != "" {
				s += ": " + b.Resource.Text
			}
			return s
		}
	}
	return b.Type + " block"
}

func orUnknown(s string) string {
	if s == "" {
		return "(no mimeType)"
	}
	return s
}

// sizeOfBase64 is the decoded size of base64 text, in words.
func sizeOfBase64(data string) string {
	b := len(data) / 4 * 3
	if len(data)%4 == 0 {
		b -= len(data) - len(strings.TrimRight(data, "="))
	}
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
}

// subtypeOperationalSignal is the subtype of an operational signal: an
// event whose payload says what happened to which services.
const subtypeOperationalSignal = "OperationalSignal"

// Signal is an OperationalSignal's payload.
type Signal struct {
	Source               string            `json:"source"`
	Severity             string            `json:"severity"`
	AffectedServices     []string          `json:"affectedServices,omitempty"`
	CorrelationEmbedding []float64         `json:"correlationEmbedding,omitempty"`
	GraphSeeds           []json.RawMessage `json:"graphSeeds,omitempty"`
}

// Signal is the event's OperationalSignal payload, nil for another
// subtype or a payload that does not decode (Validate says why).
func (e *Event) Signal() *Signal {
	if e.Subtype != subtypeOperationalSignal || !set(e.Payload) {
		return nil
	}
	var s Signal
	if json.Unmarshal(e.Payload, &s) != nil {
		return nil
	}
	return &s
}

// Seeds is the graph seeds as words: a string as it is, an object by its
// id (else its JSON).
func (s *Signal) Seeds() []string {
	var out []string
	for _, raw := range s.GraphSeeds {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			out = append(out, str)
			continue
		}
		var obj struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.ID != "" {
			if obj.Type != "" {
				out = append(out, obj.Type+":"+obj.ID)
			} else {
				out = append(out, obj.ID)
			}
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			out = append(out, b.String())
		}
	}
	return out
}

// Tag prefixes of the replacement chain: a memory-critique worker
// republishes an event as a replacement tagged replaces:<id> and
// critique:<id>.
const (
	TagReplaces = "replaces:"
	TagCritique = "critique:"
)

// Links are the events one event names: what it replaces, the critique
// behind it, and (a CaseHub reflection) the memories it reflects on.
type Links struct {
	Replaces, Critiques, Sources []string
}

// Empty reports whether l names nothing.
func (l Links) Empty() bool { return len(l.Replaces)+len(l.Critiques)+len(l.Sources) == 0 }

// LinksOf reads the links from an event's tags and input.structured.
func LinksOf(tags []string, structured json.RawMessage) Links {
	var l Links
	for _, t := range tags {
		if id, ok := strings.CutPrefix(t, TagReplaces); ok && id != "" && !slices.Contains(l.Replaces, id) {
			l.Replaces = append(l.Replaces, id)
		}
		if id, ok := strings.CutPrefix(t, TagCritique); ok && id != "" && !slices.Contains(l.Critiques, id) {
			l.Critiques = append(l.Critiques, id)
		}
	}
	if m := MemoryOf(structured); m != nil {
		l.Sources = m.SourceMemoryIDs
	}
	return l
}

// CaseHub memory-domain attribute keys (metadata, beside experience's).
const (
	attrOtherAgent      = "other-agent"
	attrQualitySignal   = "quality-signal"
	attrInsight         = "insight"
	attrReflectionLevel = "reflection-level"
	attrSourceMemoryIDs = "source-memory-ids"
	attrSubThoughtCount = "sub-thought-count"
	attrSubThought      = "sub-thought-"
)

// SubThought is one sub-thought-N-* group of attributes.
type SubThought struct {
	N          int
	Type       string
	Text       string
	Entity     string
	Graduated  string // "true" / "false" as given, "" when absent
	Confidence string // as given
}

// Memory is a CaseHub event's memory-domain attributes, read from
// input.structured.metadata.
type Memory struct {
	// relationship
	OtherAgent, QualitySignal string
	// reflection
	Insight, ReflectionLevel string
	SourceMemoryIDs          []string
	// sub-thoughts
	SubThoughtCount string
	SubThoughts     []SubThought
}

// Domains names the memory domains m has, in a fixed order.
func (m *Memory) Domains() []string {
	var d []string
	if m.OtherAgent != "" || m.QualitySignal != "" {
		d = append(d, "relationship")
	}
	if m.Insight != "" || m.ReflectionLevel != "" || len(m.SourceMemoryIDs) > 0 {
		d = append(d, "reflection")
	}
	if m.SubThoughtCount != "" || len(m.SubThoughts) > 0 {
		d = append(d, "sub-thoughts")
	}
	return d
}

// MemoryOf reads the memory-domain attributes from input.structured
// (its metadata object of strings); nil when there are none.
func MemoryOf(structured json.RawMessage) *Memory {
	if !set(structured) {
		return nil
	}
	var s struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(structured, &s) != nil || len(s.Metadata) == 0 {
		return nil
	}
	md := make(map[string]string, len(s.Metadata))
	for k, raw := range s.Metadata {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			v = strings.TrimSpace(string(raw))
		}
		md[k] = v
	}
	return memoryOf(md)
}

func memoryOf(md map[string]string) *Memory {
	m := &Memory{
		OtherAgent:      md[attrOtherAgent],
		QualitySignal:   md[attrQualitySignal],
		Insight:         md[attrInsight],
		ReflectionLevel: md[attrReflectionLevel],
		SourceMemoryIDs: splitIDs(md[attrSourceMemoryIDs]),
		SubThoughtCount: md[attrSubThoughtCount],
	}
	byN := map[int]*SubThought{}
	for k, v := range md {
		n, field, ok := subThoughtKey(k)
		if !ok {
			continue
		}
		st := byN[n]
		if st == nil {
			st = &SubThought{N: n}
			byN[n] = st
		}
		switch field {
		case "type":
			st.Type = v
		case "text":
			st.Text = v
		case "entity":
			st.Entity = v
		case "graduated":
			st.Graduated = v
		case "confidence":
			st.Confidence = v
		}
	}
	for _, st := range byN {
		m.SubThoughts = append(m.SubThoughts, *st)
	}
	slices.SortFunc(m.SubThoughts, func(a, b SubThought) int { return a.N - b.N })
	if len(m.Domains()) == 0 {
		return nil
	}
	return m
}

// subThoughtKey splits sub-thought-N-field.
func subThoughtKey(k string) (n int, field string, ok bool) {
	rest, ok := strings.CutPrefix(k, attrSubThought)
	if !ok {
		return 0, "", false
	}
	num, field, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", false
	}
	switch field {
	case "type", "text", "entity", "graduated", "confidence":
		return n, field, true
	}
	return 0, "", false
}

// splitIDs reads a list of ids written as one attribute: comma- or
// space-separated, or a JSON array of strings.
func splitIDs(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var arr []string
	if strings.HasPrefix(s, "[") && json.Unmarshal([]byte(s), &arr) == nil {
		return compactIDs(arr)
	}
	return compactIDs(strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }))
}

func compactIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		id = strings.Trim(strings.TrimSpace(id), `"'[]`)
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// validateShapes checks the newer members (Validate calls it).
func (e *Event) validateShapes(ps *Problems) {
	if s := e.Context.Source; s != "" && !slices.Contains(Sources, s) {
		ps.add("context.source", Quote(s)+" is not one of "+strings.Join(Sources, ", "))
	}
	if r := e.Result; r != nil && set(r.Content) {
		validateContent(ps, r.Content)
	}
	if e.Subtype == subtypeOperationalSignal {
		validateSignal(ps, e.Payload) // another subtype's payload is kept as it came
	}
}

func validateContent(ps *Problems, raw json.RawMessage) {
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		ps.add("result.content", "expected an array of content blocks")
		return
	}
	for i, b := range blocks {
		path := fmt.Sprintf("result.content[%d]", i)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || m == nil {
			ps.add(path, "expected an object (a content block)")
			continue
		}
		typ, ok := stringMember(ps, m, path, "type", true)
		if !ok {
			continue
		}
		switch typ {
		case blockText:
			stringMember(ps, m, path, "text", true)
		case blockImage, blockAudio:
			stringMember(ps, m, path, "data", true)
			stringMember(ps, m, path, "mimeType", true)
		case blockResourceLink:
			stringMember(ps, m, path, "uri", true)
			stringMember(ps, m, path, "name", true)
			stringMember(ps, m, path, "mimeType", false)
			stringMember(ps, m, path, "description", false)
		case blockResource:
			if r, ok := m["resource"]; !ok || !set(r) || r[0] != '{' {
				ps.add(path+".resource", "required (an object) for a resource block")
			}
		}
	}
}

// stringMember checks that m[name] is a string (required: and present,
// not empty) and returns it.
func stringMember(ps *Problems, m map[string]json.RawMessage, path, name string, required bool) (string, bool) {
	raw, ok := m[name]
	if !ok || !set(raw) {
		if required {
			ps.add(path+"."+name, "required")
		}
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		ps.add(path+"."+name, "expected a string")
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		ps.add(path+"."+name, "must not be empty")
		return "", false
	}
	return s, true
}

func validateSignal(ps *Problems, raw json.RawMessage) {
	if !set(raw) {
		ps.add("payload", "required for an "+subtypeOperationalSignal)
		return
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		ps.add("payload", "expected an object")
		return
	}
	stringMember(ps, m, "payload", "source", true)
	stringMember(ps, m, "payload", "severity", true)
	if v, ok := m["affectedServices"]; ok && set(v) {
		var ss []json.RawMessage
		if json.Unmarshal(v, &ss) != nil {
			ps.add("payload.affectedServices", "expected an array of strings")
		}
		for i, s := range ss {
			var str string
			if json.Unmarshal(s, &str) != nil || str == "" {
				ps.add(fmt.Sprintf("payload.affectedServices[%d]", i), "expected a non-empty string")
			}
		}
	}
	if v, ok := m["correlationEmbedding"]; ok && set(v) {
		var ns []json.RawMessage
		if json.Unmarshal(v, &ns) != nil {
			ps.add("payload.correlationEmbedding", "expected an array of numbers")
		}
		for i, n := range ns {
			var f float64
			if json.Unmarshal(n, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				ps.add(fmt.Sprintf("payload.correlationEmbedding[%d]", i), "not a finite number")
			}
		}
	}
	if v, ok := m["graphSeeds"]; ok && set(v) {
		var seeds []json.RawMessage
		if json.Unmarshal(v, &seeds) != nil {
			ps.add("payload.graphSeeds", "expected an array")
		}
		for i, s := range seeds {
			if len(s) == 0 || (s[0] != '"' && s[0] != '{') {
				ps.add(fmt.Sprintf("payload.graphSeeds[%d]", i), "expected a string or an object")
			}
		}
	}
}

// checkMemory checks the memory-domain attributes of CaseHub metadata,
// each problem at its metadata path.
func checkMemory(ps *Problems, md map[string]string) {
	m := memoryOf(md)
	if m == nil {
		return
	}
	if v := m.ReflectionLevel; v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			ps.add("metadata."+attrReflectionLevel, Quote(v)+" is not a whole number ≥ 0")
		}
	}
	if v := m.QualitySignal; v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && (f < -1 || f > 1) {
			ps.add("metadata."+attrQualitySignal, v+" is outside [-1, 1]")
		}
	}
	count := -1
	if v := m.SubThoughtCount; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			ps.add("metadata."+attrSubThoughtCount, Quote(v)+" is not a whole number ≥ 0")
		} else {
			count = n
		}
	}
	base := 1 // sub-thoughts count from 1, or from 0 when a 0 is given
	if len(m.SubThoughts) > 0 && m.SubThoughts[0].N == 0 {
		base = 0
	}
	for _, st := range m.SubThoughts {
		p := fmt.Sprintf("metadata.%s%d-", attrSubThought, st.N)
		if count >= 0 && (st.N < base || st.N >= base+count) {
			ps.add(p+"type", fmt.Sprintf("sub-thought %d given, but %s is %d", st.N, attrSubThoughtCount, count))
		}
		if strings.TrimSpace(st.Text) == "" {
			ps.add(p+"text", "required for each sub-thought")
		}
		if st.Graduated != "" && st.Graduated != "true" && st.Graduated != "false" {
			ps.add(p+"graduated", Quote(st.Graduated)+" is not true or false")
		}
		if st.Confidence != "" {
			f, err := strconv.ParseFloat(st.Confidence, 64)
			switch {
			case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
				ps.add(p+"confidence", Quote(st.Confidence)+" is not a number")
			case f < 0 || f > 1:
				ps.add(p+"confidence", st.Confidence+" is outside [0, 1]")
			}
		}
	}
}
