package kafka

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// Avro body <-> the event's JSON, driven by the writer's schema, so the
// pipeline, tail and the Topics view get from an Avro message the JSON the
// JSON path gets; the mapping is in docs/kafka.md ("Avro through a schema
// registry"). Encoding is the inverse, and a member the schema lacks is an
// error, since it would be lost.

// jsonProp marks a string schema whose text is a JSON value.
const jsonProp = "engram.json"

// Limits of the decoder, so that a hostile or corrupt payload cannot make
// it loop, allocate or recurse without bound.
const (
	avroMaxDepth    = 1000
	avroMaxItems    = 1 << 20  // array items and map entries of one message
	avroMaxJSON     = 16 << 20 // bytes of JSON one message may decode to
	avroMaxByteSize = 4 << 20  // one string or bytes value (ingest's line limit)
)

var avroAPI = avro.Config{MaxByteSliceSize: avroMaxByteSize, MaxSliceAllocSize: avroMaxItems}.Freeze()

// parseAvroSchema parses schema text (as the registry serves it) with a
// cache of its own, so that two schemas with the same record name (two
// versions of one subject) never mix.
func parseAvroSchema(text string) (avro.Schema, error) {
	return avro.ParseWithCache(text, "", &avro.SchemaCache{})
}

// avroToJSON decodes an Avro binary body written with schema into JSON.
func avroToJSON(schema avro.Schema, body []byte) ([]byte, error) {
	d := &avroDecoder{r: avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI)).Reset(body)}
	d.value(schema, 0)
	if d.err == nil && d.r.Error != nil {
		d.err = d.r.Error
	}
	if d.err != nil {
		at := d.at
		if at == "" {
			at = "(the event)"
		}
		if errors.Is(d.err, errAvroEOF) || strings.Contains(d.err.Error(), "EOF") {
			return nil, fmt.Errorf("%s: the body ends before the value does (%d bytes)", at, len(body))
		}
		return nil, fmt.Errorf("%s: %w", at, d.err)
	}
	if d.r.Peek(); d.r.Error == nil {
		return nil, errors.New("(the event): bytes left over after the value: not written with this schema")
	}
	return d.out.Bytes(), nil
}

var errAvroEOF = errors.New("the body ends before the value does")

type avroDecoder struct {
	r     *avro.Reader
	out   bytes.Buffer
	items int
	err   error
	path  []avroStep // where the value being read is
	at    string     // the path where err was met
}

// avroStep is one step of a path into the value: a record's field or a
// map's key (name, index -1), or an array's item (index).
type avroStep struct {
	name  string
	index int
}

func (d *avroDecoder) setErr(err error) {
	if d.err == nil {
		d.err = err
		d.at = stepsPath(d.path)
	}
}

// stepsPath is the path as jsonToAvro's errors write it (input.text,
// tags[1]); a key that is no plain name is quoted in brackets.
func stepsPath(steps []avroStep) string {
	var b strings.Builder
	for _, st := range steps {
		switch {
		case st.index >= 0:
			fmt.Fprintf(&b, "[%d]", st.index)
		case plainKey(st.name):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.name)
		default:
			k := st.name
			if len(k) > 40 {
				k = k[:40] + "…"
			}
			fmt.Fprintf(&b, "[%+q]", k)
		}
	}
	return b.String()
}

func plainKey(k string) bool {
	if len(k) > 64 {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (d *avroDecoder) fail(format string, a ...any) { d.setErr(fmt.Errorf(format, a...)) }

func (d *avroDecoder) ok() bool {
	if d.err == nil && d.r.Error != nil {
		d.setErr(d.r.Error)
	}
	if d.err == nil && d.out.Len() > avroMaxJSON {
		d.fail("the value decodes to more than %d MiB of JSON", avroMaxJSON>>20)
	}
	return d.err == nil
}

// value writes the JSON of one value of schema s.
func (d *avroDecoder) value(s avro.Schema, depth int) {
	if depth > avroMaxDepth {
		d.fail("nested more than %d levels", avroMaxDepth)
		return
	}
	if !d.ok() {
		return
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		d.value(s.Schema(), depth+1)
	case *avro.NullSchema:
		d.out.WriteString("null")
	case *avro.PrimitiveSchema:
		d.primitive(s)
	case *avro.RecordSchema:
		d.out.WriteByte('{')
		n := 0
		for _, f := range s.Fields() {
			mark := d.out.Len()
			if n > 0 {
				d.out.WriteByte(',')
			}
			writeJSONString(&d.out, f.Name())
			d.out.WriteByte(':')
			start := d.out.Len()
			d.path = append(d.path, avroStep{name: f.Name(), index: -1})
			d.value(f.Type(), depth+1)
			if !d.ok() {
				return
			}
			d.path = d.path[:len(d.path)-1]
			if string(d.out.Bytes()[start:]) == "null" {
				d.out.Truncate(mark) // an absent member, as in JSON
				continue
			}
			n++
		}
		d.out.WriteByte('}')
	case *avro.UnionSchema:
		i := d.r.ReadLong()
		if !d.ok() {
			return
		}
		types := s.Types()
		if i < 0 || i >= int64(len(types)) {
			d.fail("union branch %d of a union of %d types", i, len(types))
			return
		}
		d.value(types[i], depth+1)
	case *avro.EnumSchema:
		i := d.r.ReadInt()
		if !d.ok() {
			return
		}
		syms := s.Symbols()
		if i < 0 || int(i) >= len(syms) {
			d.fail("enum %s: symbol %d of %d", s.FullName(), i, len(syms))
			return
		}
		writeJSONString(&d.out, syms[i])
	case *avro.ArraySchema:
		d.out.WriteByte('[')
		n := 0
		d.blocks(func() {
			if n > 0 {
				d.out.WriteByte(',')
			}
			d.path = append(d.path, avroStep{index: n})
			n++
			d.value(s.Items(), depth+1)
			if d.ok() {
				d.path = d.path[:len(d.path)-1]
			}
		})
		d.out.WriteByte(']')
	case *avro.MapSchema:
		d.out.WriteByte('{')
		n := 0
		d.blocks(func() {
			if n > 0 {
				d.out.WriteByte(',')
			}
			n++
			k := d.r.ReadString()
			if !d.ok() {
				return
			}
			writeJSONString(&d.out, k)
			d.out.WriteByte(':')
			d.path = append(d.path, avroStep{name: k, index: -1})
			d.value(s.Values(), depth+1)
			if d.ok() {
				d.path = d.path[:len(d.path)-1]
			}
		})
		d.out.WriteByte('}')
	case *avro.FixedSchema:
		b := make([]byte, s.Size())
		d.r.Read(b)
		if d.ok() {
			writeBytes(&d.out, b)
		}
	default:
		d.fail("schema type %s is not supported", s.Type())
	}
}

// blocks reads an array's or a map's blocks, calling item for each entry.
func (d *avroDecoder) blocks(item func()) {
	for d.ok() {
		n := d.r.ReadLong()
		if !d.ok() || n == 0 {
			return
		}
		if n < 0 {
			if n == math.MinInt64 {
				d.fail("block of %d items", n)
				return
			}
			n = -n
			if d.r.ReadLong(); !d.ok() { // the block's size in bytes
				return
			}
		}
		if n > avroMaxItems-int64(d.items) {
			d.fail("more than %d array items or map entries", avroMaxItems)
			return
		}
		d.items += int(n)
		for range n {
			item()
			if !d.ok() {
				return
			}
		}
	}
}

func (d *avroDecoder) primitive(s *avro.PrimitiveSchema) {
	switch s.Type() {
	case avro.Null:
		d.out.WriteString("null")
	case avro.Boolean:
		if d.r.ReadBool() {
			d.out.WriteString("true")
		} else {
			d.out.WriteString("false")
		}
	case avro.Int:
		d.out.WriteString(strconv.FormatInt(int64(d.r.ReadInt()), 10))
	case avro.Long:
		d.out.WriteString(strconv.FormatInt(d.r.ReadLong(), 10))
	case avro.Float, avro.Double:
		var f float64
		bits := 64
		if s.Type() == avro.Float {
			f, bits = float64(d.r.ReadFloat()), 32
		} else {
			f = d.r.ReadDouble()
		}
		if !d.ok() {
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail("%s %v: JSON holds no NaN or infinity", s.Type(), f)
			return
		}
		d.out.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	case avro.String:
		v := d.r.ReadString()
		if !d.ok() {
			return
		}
		if isJSONText(s) {
			if !json.Valid([]byte(v)) {
				d.fail("a string marked %q is not JSON", jsonProp)
				return
			}
			d.out.WriteString(v)
			return
		}
		if !utf8.ValidString(v) {
			d.fail("a string is not valid UTF-8")
			return
		}
		writeJSONString(&d.out, v)
	case avro.Bytes:
		b := d.r.ReadBytes()
		if d.ok() {
			writeBytes(&d.out, b)
		}
	default:
		d.fail("schema type %s is not supported", s.Type())
	}
}

func isJSONText(s avro.Schema) bool {
	p, ok := s.(avro.PropertySchema)
	if !ok {
		return false
	}
	v, _ := p.Prop(jsonProp).(bool)
	return v
}

func writeBytes(out *bytes.Buffer, b []byte) {
	if utf8.Valid(b) {
		writeJSONString(out, string(b))
		return
	}
	writeJSONString(out, base64.StdEncoding.EncodeToString(b))
}

func writeJSONString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a valid UTF-8 string always marshals
	out.Write(b)
}

// jsonToAvro encodes a JSON value as an Avro binary body of schema (see
// the mapping above); errors name the JSON path.
func jsonToAvro(schema avro.Schema, data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not one JSON value")
	}
	var buf bytes.Buffer
	w := avro.NewWriter(&buf, 512, avro.WithWriterConfig(avroAPI))
	e := &avroEncoder{w: w}
	e.value(schema, v, "", 0)
	if e.err != nil {
		return nil, e.err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type avroEncoder struct {
	w   *avro.Writer
	err error
}

func (e *avroEncoder) fail(path, format string, a ...any) {
	if e.err == nil {
		if path == "" {
			path = "(the event)"
		}
		e.err = fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
}

func member(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func (e *avroEncoder) value(s avro.Schema, v any, path string, depth int) {
	if e.err != nil {
		return
	}
	if depth > avroMaxDepth {
		e.fail(path, "nested more than %d levels", avroMaxDepth)
		return
	}
	mismatch := func(want string) { e.fail(path, "is %s, the Avro schema wants %s", kindOf(v), want) }
	switch s := s.(type) {
	case *avro.RefSchema:
		e.value(s.Schema(), v, path, depth+1)
	case *avro.NullSchema:
		if v != nil {
			mismatch("null")
		}
	case *avro.PrimitiveSchema:
		e.primitive(s, v, path, mismatch)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			mismatch("an object (record " + s.FullName() + ")")
			return
		}
		known := map[string]bool{}
		for _, f := range s.Fields() {
			known[f.Name()] = true
			fv, present := m[f.Name()]
			p := member(path, f.Name())
			if (!present || fv == nil) && !acceptsNull(f.Type()) {
				if present || !f.HasDefault() {
					e.fail(p, "missing (the Avro schema requires it)")
					return
				}
				fv = defaultJSON(f.Default())
			}
			e.value(f.Type(), fv, p, depth+1)
		}
		var extra []string
		for k := range m {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			e.fail(member(path, extra[0]), "not in the Avro schema (record %s): it would be lost", s.FullName())
		}
	case *avro.UnionSchema:
		i := unionBranch(s, v)
		if i < 0 {
			names := make([]string, len(s.Types()))
			for j, t := range s.Types() {
				names[j] = string(t.Type())
			}
			mismatch("one of " + strings.Join(names, ", "))
			return
		}
		e.w.WriteLong(int64(i))
		e.value(s.Types()[i], v, path, depth+1)
	case *avro.EnumSchema:
		str, ok := v.(string)
		if !ok {
			mismatch("a string (enum " + s.FullName() + ")")
			return
		}
		for i, sym := range s.Symbols() {
			if sym == str {
				e.w.WriteInt(int32(i))
				return
			}
		}
		e.fail(path, "%q is not a symbol of enum %s (%s)", str, s.FullName(), strings.Join(s.Symbols(), ", "))
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			mismatch("an array")
			return
		}
		if len(a) > 0 {
			e.w.WriteLong(int64(len(a)))
			for i, item := range a {
				e.value(s.Items(), item, fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		}
		e.w.WriteLong(0)
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			mismatch("an object (map)")
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			e.w.WriteLong(int64(len(keys)))
			for _, k := range keys {
				e.w.WriteString(k)
				e.value(s.Values(), m[k], member(path, k), depth+1)
			}
		}
		e.w.WriteLong(0)
	case *avro.FixedSchema:
		str, ok := v.(string)
		if !ok || len(str) != s.Size() {
			mismatch(fmt.Sprintf("a string of %d bytes (fixed %s)", s.Size(), s.FullName()))
			return
		}
		_, _ = e.w.Write([]byte(str))
	default:
		e.fail(path, "schema type %s is not supported", s.Type())
	}
}

func (e *avroEncoder) primitive(s *avro.PrimitiveSchema, v any, path string, mismatch func(string)) {
	switch s.Type() {
	case avro.Null:
		if v != nil {
			mismatch("null")
		}
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			mismatch("a boolean")
			return
		}
		e.w.WriteBool(b)
	case avro.Int, avro.Long:
		n, ok := v.(json.Number)
		if !ok {
			mismatch("a whole number")
			return
		}
		i, err := n.Int64()
		if err != nil || s.Type() == avro.Int && (i < math.MinInt32 || i > math.MaxInt32) {
			e.fail(path, "%s is not a whole number that fits an Avro %s", n, s.Type())
			return
		}
		if s.Type() == avro.Int {
			e.w.WriteInt(int32(i))
		} else {
			e.w.WriteLong(i)
		}
	case avro.Float, avro.Double:
		n, ok := v.(json.Number)
		if !ok {
			mismatch("a number")
			return
		}
		f, err := n.Float64()
		if err != nil {
			e.fail(path, "%s: %v", n, err)
			return
		}
		if s.Type() == avro.Float {
			e.w.WriteFloat(float32(f))
		} else {
			e.w.WriteDouble(f)
		}
	case avro.String:
		if isJSONText(s) {
			b, err := json.Marshal(v)
			if err != nil {
				e.fail(path, "%v", err)
				return
			}
			e.w.WriteString(string(b))
			return
		}
		str, ok := v.(string)
		if !ok {
			mismatch("a string")
			return
		}
		e.w.WriteString(str)
	case avro.Bytes:
		str, ok := v.(string)
		if !ok {
			mismatch("a string (bytes)")
			return
		}
		e.w.WriteBytes([]byte(str))
	default:
		e.fail(path, "schema type %s is not supported", s.Type())
	}
}

func acceptsNull(s avro.Schema) bool {
	switch s := s.(type) {
	case *avro.NullSchema:
		return true
	case *avro.PrimitiveSchema:
		return s.Type() == avro.Null
	case *avro.UnionSchema:
		return slicesContainsNull(s.Types())
	case *avro.RefSchema:
		return acceptsNull(s.Schema())
	}
	return false
}

func slicesContainsNull(ts []avro.Schema) bool {
	for _, t := range ts {
		if t.Type() == avro.Null {
			return true
		}
	}
	return false
}

// unionBranch picks the branch of u a JSON value v is encoded as, -1 when
// none fits.
func unionBranch(u *avro.UnionSchema, v any) int {
	types := u.Types()
	find := func(fit func(avro.Schema) bool) int {
		for i, t := range types {
			if r, ok := t.(*avro.RefSchema); ok {
				t = r.Schema()
			}
			if fit(t) {
				return i
			}
		}
		return -1
	}
	is := func(ts ...avro.Type) func(avro.Schema) bool {
		return func(s avro.Schema) bool {
			for _, t := range ts {
				if s.Type() == t {
					return true
				}
			}
			return false
		}
	}
	jsonText := func(s avro.Schema) bool { return s.Type() == avro.String && isJSONText(s) }
	var i int
	switch x := v.(type) {
	case nil:
		return find(is(avro.Null))
	case bool:
		i = find(is(avro.Boolean))
	case json.Number:
		if _, err := x.Int64(); err == nil {
			if i = find(is(avro.Long, avro.Int)); i >= 0 {
				return i
			}
		}
		i = find(is(avro.Double, avro.Float))
	case string:
		if i = find(func(s avro.Schema) bool { return s.Type() == avro.String && !isJSONText(s) }); i >= 0 {
			return i
		}
		if i = find(func(s avro.Schema) bool {
			e, ok := s.(*avro.EnumSchema)
			return ok && slices.Contains(e.Symbols(), x)
		}); i >= 0 {
			return i
		}
		i = find(is(avro.Bytes))
	case []any:
		i = find(is(avro.Array))
	case map[string]any:
		if i = find(is(avro.Record)); i >= 0 {
			return i
		}
		i = find(is(avro.Map))
	default:
		return -1
	}
	if i < 0 {
		i = find(jsonText)
	}
	return i
}

// defaultJSON turns a field default (as the schema parser holds it) into
// the form a decoded JSON value has.
func defaultJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}
