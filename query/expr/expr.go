// Package expr is the filter language of engram's read path, parsed once
// into a small AST that each backend (SQLite, OpenSearch) translates.
//
// # Language
//
// An expression is a list of terms separated by white space; every term must
// hold (AND). "" matches everything.
//
//	memory  "fast retrieval"       free words and quoted phrases: full text on summary, ranked
//	type:tool_result               exact match on a keyword field; the value may be quoted:
//	tool:"web search"                type session turn agent tenant trace tool tag id
//	success:true  success:false    the result's success (unknown matches neither)
//	importance>=0.7  reward<0.3    numeric comparisons with > >= < <= = on
//	latency>500  confidence=0.5      importance reward confidence latency (ms)
//	since:15m  until:2h            relative to now (units s m h d w), or absolute:
//	since:2026-05-08                 a UTC date or an RFC 3339 time with a zone;
//	until:2026-05-08T10:00:00Z       since is inclusive, until exclusive
//	-tag:demo  -word  -"a phrase"  negation of any term
//
// Field names are case-insensitive. Inside quotes, \" is a quote and \\ a
// backslash. A document that lacks a field (no latency, success unknown)
// matches no positive term on it, and so every negated one.
//
// Parse is pure: relative times are kept as durations and resolved by the
// backend against the "now" of each query (Time.Resolve).
package expr

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind is what a term tests.
type Kind uint8

// Kinds of term.
const (
	// KindText is a free word (Phrase false) or a quoted phrase (Phrase
	// true) in Value, matched by full text on summary.
	KindText Kind = iota + 1
	// KindField is Field:Value, an exact match on a keyword field (one of
	// KeywordFields).
	KindField
	// KindSuccess is success:Bool.
	KindSuccess
	// KindCompare is Field Op Num on a numeric field (one of NumericFields).
	KindCompare
	// KindSince is since:Time, timestamp >= Time (inclusive).
	KindSince
	// KindUntil is until:Time, timestamp < Time (exclusive).
	KindUntil
)

var kindNames = [...]string{"", "text", "field", "success", "compare", "since", "until"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Op is a comparison operator.
type Op uint8

// Comparison operators.
const (
	OpEQ Op = iota + 1 // =
	OpLT               // <
	OpLE               // <=
	OpGT               // >
	OpGE               // >=
)

var opNames = [...]string{"", "=", "<", "<=", ">", ">="}

func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Holds reports whether a Op b.
func (o Op) Holds(a, b float64) bool {
	switch o {
	case OpEQ:
		return a == b
	case OpLT:
		return a < b
	case OpLE:
		return a <= b
	case OpGT:
		return a > b
	case OpGE:
		return a >= b
	}
	return false
}

// Field names.
const (
	FieldType    = "type"    // event_type
	FieldSession = "session" // session_id
	FieldTurn    = "turn"    // the turn key (turn_id, else trace_id, else event_id)
	FieldAgent   = "agent"   // agent_id
	FieldTenant  = "tenant"  // tenant_id
	FieldTrace   = "trace"   // trace_id
	FieldTool    = "tool"    // tool
	FieldTag     = "tag"     // one of tags
	FieldID      = "id"      // event_id

	FieldImportance = "importance" // importance_score
	FieldReward     = "reward"     // reward_score
	FieldConfidence = "confidence" // confidence
	FieldLatency    = "latency"    // latency_ms

	FieldSuccess = "success"
	FieldSince   = "since"
	FieldUntil   = "until"
)

// KeywordFields are the fields of KindField terms.
var KeywordFields = []string{FieldType, FieldSession, FieldTurn, FieldAgent, FieldTenant, FieldTrace, FieldTool, FieldTag, FieldID}

// NumericFields are the fields of KindCompare terms.
var NumericFields = []string{FieldImportance, FieldReward, FieldConfidence, FieldLatency}

// knownFields is every field name, sorted, for error messages.
const knownFields = "agent, confidence, id, importance, latency, reward, session, since, success, tag, tenant, tool, trace, turn, type, until"

// Time is the value of since: and until:, relative to the query's now or
// absolute.
type Time struct {
	// Relative: the time is Ago before now.
	Relative bool
	Ago      time.Duration
	// At is the absolute time, in UTC, when not Relative.
	At time.Time
}

// Resolve is the time t stands for when the query runs at now.
func (t Time) Resolve(now time.Time) time.Time {
	if t.Relative {
		return now.Add(-t.Ago)
	}
	return t.At
}

func (t Time) equal(u Time) bool {
	if t.Relative != u.Relative {
		return false
	}
	if t.Relative {
		return t.Ago == u.Ago
	}
	return t.At.Equal(u.At)
}

// Term is one condition of an expression; which fields are set depends on
// Kind.
type Term struct {
	Kind Kind
	// Neg: the term is negated (-term).
	Neg bool
	// Field is the field of KindField and KindCompare terms.
	Field string
	// Value is the word or phrase of KindText and the value of KindField.
	Value string
	// Phrase: a KindText term written in quotes.
	Phrase bool
	// Op and Num are the comparison of KindCompare.
	Op  Op
	Num float64
	// Bool is the value of KindSuccess.
	Bool bool
	// Time is the value of KindSince and KindUntil.
	Time Time
}

// Equal reports whether t and u are the same term.
func (t Term) Equal(u Term) bool {
	if t.Kind != u.Kind || t.Neg != u.Neg {
		return false
	}
	switch t.Kind {
	case KindText:
		return t.Value == u.Value && t.Phrase == u.Phrase
	case KindField:
		return t.Field == u.Field && t.Value == u.Value
	case KindSuccess:
		return t.Bool == u.Bool
	case KindCompare:
		return t.Field == u.Field && t.Op == u.Op && t.Num == u.Num
	case KindSince, KindUntil:
		return t.Time.equal(u.Time)
	}
	return true
}

// String is the term in canonical form.
func (t Term) String() string {
	var b strings.Builder
	if t.Neg {
		b.WriteByte('-')
	}
	switch t.Kind {
	case KindText:
		if t.Phrase || !bareWord(t.Value) {
			b.WriteString(quote(t.Value))
		} else {
			b.WriteString(t.Value)
		}
	case KindField:
		b.WriteString(t.Field)
		b.WriteByte(':')
		b.WriteString(value(t.Value))
	case KindSuccess:
		b.WriteString("success:")
		b.WriteString(strconv.FormatBool(t.Bool))
	case KindCompare:
		b.WriteString(t.Field)
		b.WriteString(t.Op.String())
		b.WriteString(strconv.FormatFloat(t.Num, 'g', -1, 64))
	case KindSince, KindUntil:
		if t.Kind == KindSince {
			b.WriteString("since:")
		} else {
			b.WriteString("until:")
		}
		b.WriteString(formatTime(t.Time))
	default:
		b.WriteString(quote(t.Value))
	}
	return b.String()
}

// Expr is a parsed expression: all Terms must hold. No terms matches
// everything.
type Expr struct {
	Terms []Term
}

// Empty reports whether e matches everything.
func (e *Expr) Empty() bool { return e == nil || len(e.Terms) == 0 }

// HasText reports whether e has a positive free word or phrase: results are
// then ranked by text relevance. (Negated words alone only filter.)
func (e *Expr) HasText() bool {
	if e == nil {
		return false
	}
	for _, t := range e.Terms {
		if t.Kind == KindText && !t.Neg {
			return true
		}
	}
	return false
}

// String is e in canonical form: Parse(e.String()) is equal to e.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	parts := make([]string, len(e.Terms))
	for i, t := range e.Terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, " ")
}

// Equal reports whether e and f have the same terms in the same order.
func (e *Expr) Equal(f *Expr) bool {
	if e.Empty() || f.Empty() {
		return e.Empty() == f.Empty()
	}
	if len(e.Terms) != len(f.Terms) {
		return false
	}
	for i := range e.Terms {
		if !e.Terms[i].Equal(f.Terms[i]) {
			return false
		}
	}
	return true
}

// SyntaxError is a problem in an expression, at a 1-based column counted in
// characters (runes).
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Parse parses s. Errors are *SyntaxError.
func Parse(s string) (*Expr, error) {
	if !utf8.ValidString(s) {
		col := 1
		for i, r := range s {
			if r == utf8.RuneError {
				if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
					break
				}
			}
			col++
		}
		return nil, &SyntaxError{col, "invalid UTF-8"}
	}
	p := &parser{r: []rune(s)}
	e := &Expr{}
	for {
		p.skipSpace()
		if p.i >= len(p.r) {
			return e, nil
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		e.Terms = append(e.Terms, t)
	}
}

type parser struct {
	r []rune
	i int
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

func (p *parser) skipSpace() {
	for p.i < len(p.r) && isSpace(p.r[p.i]) {
		p.i++
	}
}

func (p *parser) errAt(i int, format string, args ...any) error {
	return &SyntaxError{Col: i + 1, Msg: fmt.Sprintf(format, args...)}
}

// atEnd reports whether a term may end at i.
func (p *parser) atEnd(i int) bool { return i >= len(p.r) || isSpace(p.r[i]) }

func (p *parser) term() (Term, error) {
	start := p.i
	neg := false
	if p.r[p.i] == '-' {
		neg = true
		p.i++
		if p.atEnd(p.i) || p.r[p.i] == '-' {
			return Term{}, p.errAt(start, `expected a term after "-"`)
		}
	}
	if p.r[p.i] == '"' {
		v, err := p.quoted()
		if err != nil {
			return Term{}, err
		}
		if v == "" {
			return Term{}, p.errAt(p.i-2, "empty phrase")
		}
		return Term{Kind: KindText, Neg: neg, Value: v, Phrase: true}, nil
	}
	// A bare run: a word, or a field term.
	b := p.i
	j := b
	for j < len(p.r) && !isSpace(p.r[j]) && p.r[j] != '"' {
		j++
	}
	k := b
	for k < j && isIdent(p.r[k]) {
		k++
	}
	if k > b && k < j && isOpStart(p.r[k]) {
		return p.field(neg, b, k)
	}
	if j < len(p.r) && p.r[j] == '"' {
		return Term{}, p.errAt(j, `unexpected '"' inside a word (put a space before a quoted phrase)`)
	}
	p.i = j
	return Term{Kind: KindText, Neg: neg, Value: string(p.r[b:j])}, nil
}

func isIdent(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func isOpStart(r rune) bool { return r == ':' || r == '<' || r == '>' || r == '=' }

// field parses the field term whose name is r[b:k] (r[k] starts an
// operator).
func (p *parser) field(neg bool, b, k int) (Term, error) {
	name := strings.ToLower(string(p.r[b:k]))
	op := string(p.r[k])
	if (p.r[k] == '<' || p.r[k] == '>') && k+1 < len(p.r) && p.r[k+1] == '=' {
		op += "="
	}
	v := k + utf8.RuneCountInString(op)
	t := Term{Neg: neg}
	switch {
	case isKeyword(name):
		if op != ":" {
			return t, p.errAt(k, "expected ':' after %q, as in %s:VALUE", name, name)
		}
		val, err := p.value(v, name+op)
		if err != nil {
			return t, err
		}
		t.Kind, t.Field, t.Value = KindField, name, val
	case name == FieldSuccess:
		if op != ":" {
			return t, p.errAt(k, `expected ':' after "success", as in success:false`)
		}
		val, err := p.value(v, name+op)
		if err != nil {
			return t, err
		}
		switch strings.ToLower(val) {
		case "true":
			t.Bool = true
		case "false":
		default:
			return t, p.errAt(v, `expected true or false after "success:"`)
		}
		t.Kind = KindSuccess
	case isNumeric(name):
		if op == ":" {
			return t, p.errAt(k, "expected one of >, >=, <, <=, = after %q, as in %s>=0.5", name, name)
		}
		val, err := p.value(v, name+op)
		if err != nil {
			return t, err
		}
		n, ok := number(val)
		if !ok {
			return t, p.errAt(v, "expected a number after %q", name+op)
		}
		t.Kind, t.Field, t.Op, t.Num = KindCompare, name, parseOp(op), n
	case name == FieldSince || name == FieldUntil:
		if op != ":" {
			return t, p.errAt(k, "expected ':' after %q, as in %s:15m", name, name)
		}
		val, err := p.value(v, name+op)
		if err != nil {
			return t, err
		}
		tm, msg := parseTime(val)
		if msg != "" {
			return t, p.errAt(v, "%s after %q", msg, name+op)
		}
		t.Kind, t.Time = KindSince, tm
		if name == FieldUntil {
			t.Kind = KindUntil
		}
	default:
		return t, p.errAt(b, "unknown field %q; known fields: %s", name, knownFields)
	}
	return t, nil
}

// value reads the value starting at v: a quoted string or a bare run.
// after names what it follows, for messages.
func (p *parser) value(v int, after string) (string, error) {
	p.i = v
	if v < len(p.r) && p.r[v] == '"' {
		s, err := p.quoted()
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", p.errAt(v, "expected a value after %q", after)
		}
		return s, nil
	}
	j := v
	for j < len(p.r) && !isSpace(p.r[j]) && p.r[j] != '"' {
		j++
	}
	if j < len(p.r) && p.r[j] == '"' {
		if j == v {
			return "", p.errAt(j, "expected a value after %q", after)
		}
		return "", p.errAt(j, `unexpected '"' inside a value (quote the whole value)`)
	}
	if j == v {
		return "", p.errAt(v, "expected a value after %q", after)
	}
	p.i = j
	return string(p.r[v:j]), nil
}

// quoted reads the quoted string at p.i (a '"') and leaves p.i after it;
// the term must end there.
func (p *parser) quoted() (string, error) {
	open := p.i
	var b strings.Builder
	for i := open + 1; i < len(p.r); i++ {
		switch c := p.r[i]; c {
		case '\\':
			if i+1 < len(p.r) && (p.r[i+1] == '"' || p.r[i+1] == '\\') {
				b.WriteRune(p.r[i+1])
				i++
				continue
			}
			b.WriteRune(c)
		case '"':
			p.i = i + 1
			if !p.atEnd(p.i) {
				return "", p.errAt(p.i, "expected a space after the closing quote")
			}
			return b.String(), nil
		default:
			b.WriteRune(c)
		}
	}
	return "", p.errAt(open, "unterminated quote")
}

func isKeyword(name string) bool {
	for _, f := range KeywordFields {
		if f == name {
			return true
		}
	}
	return false
}

func isNumeric(name string) bool {
	for _, f := range NumericFields {
		if f == name {
			return true
		}
	}
	return false
}

func parseOp(s string) Op {
	switch s {
	case "<":
		return OpLT
	case "<=":
		return OpLE
	case ">":
		return OpGT
	case ">=":
		return OpGE
	}
	return OpEQ
}

var numberRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// number parses a finite decimal number.
func number(s string) (float64, bool) {
	if !numberRE.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, false
	}
	return n, true
}

var (
	durationRE = regexp.MustCompile(`^([0-9]+)([smhdw])$`)
	dateRE     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

var units = []struct {
	name byte
	d    time.Duration
}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}, {'h', time.Hour}, {'m', time.Minute}, {'s', time.Second}}

const timeHint = "expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z)"

// parseTime parses the value of since: and until:; msg says what is wrong.
func parseTime(s string) (Time, string) {
	if m := durationRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		var unit time.Duration
		for _, u := range units {
			if u.name == m[2][0] {
				unit = u.d
			}
		}
		if err != nil || n > math.MaxInt64/int64(unit) {
			return Time{}, "duration too long"
		}
		return Time{Relative: true, Ago: time.Duration(n) * unit}, ""
	}
	var t time.Time
	var err error
	if dateRE.MatchString(s) {
		t, err = time.Parse(time.DateOnly, s)
	} else {
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	if err != nil {
		return Time{}, timeHint
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return Time{}, "time out of range (years 0001 to 9999 in UTC)"
	}
	return Time{At: t}, ""
}

func formatTime(t Time) string {
	if t.Relative {
		if t.Ago == 0 {
			return "0s"
		}
		for _, u := range units {
			if t.Ago%u.d == 0 {
				return strconv.FormatInt(int64(t.Ago/u.d), 10) + string(u.name)
			}
		}
		// Not from Parse (sub-second): whole seconds, rounded up.
		return strconv.FormatInt(int64((t.Ago+time.Second-1)/time.Second), 10) + "s"
	}
	u := t.At.UTC()
	if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
		return u.Format(time.DateOnly)
	}
	return u.Format(time.RFC3339Nano)
}

// bareWord reports whether a text word can be written without quotes and
// read back as the same word.
func bareWord(s string) bool {
	if s == "" || s[0] == '-' || strings.ContainsAny(s, `"`) {
		return false
	}
	for _, r := range s {
		if isSpace(r) {
			return false
		}
	}
	// It must not read as a field term.
	r := []rune(s)
	k := 0
	for k < len(r) && isIdent(r[k]) {
		k++
	}
	return !(k > 0 && k < len(r) && isOpStart(r[k]))
}

// value writes a field value, quoted when a bare run would not read back.
func value(s string) string {
	if s == "" || strings.ContainsAny(s, `"\`) {
		return quote(s)
	}
	for _, r := range s {
		if isSpace(r) {
			return quote(s)
		}
	}
	return s
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
