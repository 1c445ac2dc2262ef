package source

// syntax follows the JSON syntax of a value a byte at a time across the
// lines given to it, as encoding/json's decoder would, keeping only its
// state: it tells whether the value can go on, where checking the value
// joined with a line would cost its whole size for each line.
type syntax struct {
	open   []byte // the containers open, innermost last
	st     synState
	key    bool   // the string being read is an object key
	hex    int    // hex digits still due in a \u escape
	lit    string // the rest of a literal (true, false, null) being read
	done   bool   // the value is complete
	failed bool   // a syntax error was found
	outer  int    // containers open around the value, not counted in its depth
}

// maxDepth is the decoder's limit on nesting.
const maxDepth = 10000

// errorAt returns where in b, an array element and what follows it, the
// decoder found a syntax error (its offsets cannot tell: they count bytes
// over several elements, not all of them), or len(b) if that is not in b.
func errorAt(b []byte) int {
	s := syntax{open: []byte{'['}, outer: 1}
	for i, c := range b {
		if s.step(c); s.failed {
			return i
		}
	}
	return len(b)
}

type synState uint8

const (
	synValue        synState = iota // a value is due
	synValueOrClose                 // after '[': a value or ']'
	synKeyOrClose                   // after '{': a key or '}'
	synKey                          // after ',' in an object: a key
	synColon                        // after a key
	synAfter                        // after a value in a container: ',' or its close
	synStr
	synEsc
	synHex
	synLit
	synNeg    // after '-'
	synZero   // after a leading 0
	synInt    // in the integer part
	synDot    // after '.'
	synFrac   // in the fraction
	synExp    // after 'e'
	synExpSgn // after the exponent's sign
	synExpDig // in the exponent
)

// acceptsValue tells whether a value may begin on the next line.
func (s *syntax) acceptsValue() bool {
	t := *s // a newline pushes and pops nothing: t may share open
	t.feed(newline)
	return !t.failed && !t.done && (t.st == synValue || t.st == synValueOrClose)
}

// feed follows b, up to the value's end or a syntax error.
func (s *syntax) feed(b []byte) {
	for i := 0; i < len(b) && !s.done && !s.failed; i++ {
		s.step(b[i])
	}
}

func (s *syntax) step(c byte) {
	switch s.st {
	case synStr:
		switch {
		case c == '"':
			if s.key {
				s.st = synColon
			} else {
				s.valueDone()
			}
		case c == '\\':
			s.st = synEsc
		case c < 0x20:
			s.failed = true
		}
		return
	case synEsc:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.st = synStr
		case 'u':
			s.st, s.hex = synHex, 4
		default:
			s.failed = true
		}
		return
	case synHex:
		if !isHex(c) {
			s.failed = true
			return
		}
		if s.hex--; s.hex == 0 {
			s.st = synStr
		}
		return
	case synLit:
		if c != s.lit[0] {
			s.failed = true
			return
		}
		if s.lit = s.lit[1:]; s.lit == "" {
			s.valueDone()
		}
		return
	case synNeg:
		switch {
		case c == '0':
			s.st = synZero
		case '1' <= c && c <= '9':
			s.st = synInt
		default:
			s.failed = true
		}
		return
	case synZero, synInt, synFrac:
		switch {
		case s.st != synZero && '0' <= c && c <= '9':
			return
		case s.st != synFrac && c == '.':
			s.st = synDot
			return
		case c == 'e' || c == 'E':
			s.st = synExp
			return
		}
		s.valueDone()
		if !s.done {
			s.step(c)
		}
		return
	case synDot:
		if '0' <= c && c <= '9' {
			s.st = synFrac
		} else {
			s.failed = true
		}
		return
	case synExp, synExpSgn:
		switch {
		case '0' <= c && c <= '9':
			s.st = synExpDig
		case s.st == synExp && (c == '+' || c == '-'):
			s.st = synExpSgn
		default:
			s.failed = true
		}
		return
	case synExpDig:
		if '0' <= c && c <= '9' {
			return
		}
		s.valueDone()
		if !s.done {
			s.step(c)
		}
		return
	}
	if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
		return
	}
	switch s.st {
	case synValue, synValueOrClose:
		switch {
		case (c == '{' || c == '[') && len(s.open) >= s.outer+maxDepth:
			s.failed = true // as the decoder: "exceeded max depth"
		case c == '{':
			s.open = append(s.open, c)
			s.st = synKeyOrClose
		case c == '[':
			s.open = append(s.open, c)
			s.st = synValueOrClose
		case c == '"':
			s.st, s.key = synStr, false
		case c == '-':
			s.st = synNeg
		case c == '0':
			s.st = synZero
		case '1' <= c && c <= '9':
			s.st = synInt
		case c == 't':
			s.st, s.lit = synLit, "rue"
		case c == 'f':
			s.st, s.lit = synLit, "alse"
		case c == 'n':
			s.st, s.lit = synLit, "ull"
		case c == ']' && s.st == synValueOrClose:
			s.close()
		default:
			s.failed = true
		}
	case synKeyOrClose, synKey:
		switch {
		case c == '"':
			s.st, s.key = synStr, true
		case c == '}' && s.st == synKeyOrClose:
			s.close()
		default:
			s.failed = true
		}
	case synColon:
		if c == ':' {
			s.st = synValue
		} else {
			s.failed = true
		}
	case synAfter:
		top := s.open[len(s.open)-1]
		switch {
		case c == ',' && top == '{':
			s.st = synKey
		case c == ',':
			s.st = synValue
		case c == top+2: // '}' is '{'+2, ']' is '['+2
			s.close()
		default:
			s.failed = true
		}
	}
}

func (s *syntax) close() {
	s.open = s.open[:len(s.open)-1]
	s.valueDone()
}

func (s *syntax) valueDone() {
	if len(s.open) == 0 {
		s.done = true
	} else {
		s.st = synAfter
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
