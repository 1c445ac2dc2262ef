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

// SyntaxError is a problem in an expression, at a 1-based column counted in
// characters (runes).
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// maxTerms bounds an expression: every term becomes a condition of the
// backend's query, whose own limits (SQLite's expression depth, say) a
// longer one would hit with a less helpful error.
const maxTerms = 100

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
		if len(e.Terms) == maxTerms {
			return nil, &SyntaxError{p.i + 1, fmt.Sprintf("too many terms (at most %d)", maxTerms)}
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
		if vals := closedValues(name); vals != nil {
			// A closed set: a misspelt value would match nothing, silently.
			canon, ok := closedValue(vals, val)
			if !ok {
				return t, p.errAt(v, "unknown %s %q; valid %ss: %s", name, val, name, strings.Join(vals, ", "))
			}
			val = canon
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
		if !ok && name == FieldLatency {
			n, ok = milliseconds(val)
			if !ok {
				return t, p.errAt(v, "expected milliseconds or a duration (like 500, 250ms, 1.5s, 2m) after %q", name+op)
			}
		}
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

// milliseconds parses a Go duration ("250ms", "1.5s", "2m", "100us") as
// the milliseconds latency_ms holds.
func milliseconds(s string) (float64, bool) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false
	}
	return float64(d) / float64(time.Millisecond), true
}

// closedValue finds v among vals, ignoring case (every closed value is
// lower case, so TYPE:Action means action), and returns its spelling.
func closedValue(vals []string, v string) (string, bool) {
	for _, c := range vals {
		if strings.EqualFold(c, v) {
			return c, true
		}
	}
	return "", false
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

// ParseTime reads a moment as since: and until: take it: a duration back
// from now (15m, 2d, 1w) or a time (2026-05-08, 2026-05-08T10:00:00Z).
func ParseTime(s string) (Time, error) {
	t, msg := parseTime(s)
	if msg != "" {
		return Time{}, fmt.Errorf("%q: %s", s, msg)
	}
	return t, nil
}

// ParseDuration reads a span: a Go duration (90s, 1h30m) or a whole number
// of the units since: takes (15m, 1d, 1w).
func ParseDuration(s string) (time.Duration, error) {
	if t, msg := parseTime(s); msg == "" && t.Relative {
		return t.Ago, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 90s, 15m, 1h30m, 1d or 1w", s)
	}
	return d, nil
}
