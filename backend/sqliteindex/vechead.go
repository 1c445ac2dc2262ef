package sqliteindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The head file (<index>-vec<DIM>h) holds, per record of the sign-bit file,
// its time, 32 bits of each hash and its first headWords words of sign
// bits, so the scan of every document reads 80 bytes, not 224 at 1536
// dimensions. It is derived from the sign-bit file alone; its layout and
// why a stale one is safe are in docs/storage.md (The vector files).
const (
	headMagic = "engrvh1\n"
	headWords = 8
	headFixed = 2 // words before the sign bits
)

func headPath(abs string, dim int) string { return fmt.Sprintf("%s-vec%dh", abs, dim) }

// hasHead: the sign-bit records of dim are long enough to have a head.
func hasHead(dim int) bool { return bitsWords(dim) > headWords }

func headHeaderOf(dim int, id string) []byte {
	h := bitsHeaderOf(dim, id)
	copy(h, headMagic)
	binary.LittleEndian.PutUint32(h[12:], headWords)
	return h
}

// headOf appends to dst the head record of the sign-bit record rec (bytes).
func headOf(dst, rec []byte) []byte {
	dst = append(dst, rec[8:16]...)  // ts
	dst = append(dst, rec[16:20]...) // tenant hash, low half
	dst = append(dst, rec[24:28]...) // type hash, low half
	return append(dst, rec[8*bitsRecFixed:8*(bitsRecFixed+headWords)]...)
}

// syncHead brings the head file of dim up to date with the sign-bit file
// main (locked by the caller); fresh: main was just started over.
func syncHead(main *os.File, abs string, dim int, id string, fresh bool) error {
	if !hasHead(dim) {
		return nil
	}
	rec := int64(8 * (bitsRecFixed + bitsWords(dim)))
	hrec := int64(8 * (headFixed + headWords))
	st, err := main.Stat()
	if err != nil {
		return err
	}
	n := (st.Size() - bitsHeader) / rec
	h, err := os.OpenFile(headPath(abs, dim), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer h.Close()
	hst, err := h.Stat()
	if err != nil {
		return err
	}
	want := headHeaderOf(dim, id)
	nh := int64(0)
	if size := hst.Size(); !fresh && size >= bitsHeader {
		got := make([]byte, bitsHeader)
		if _, err := h.ReadAt(got, 0); err != nil {
			return err
		}
		if bytes.Equal(got, want) {
			nh = min((size-bitsHeader)/hrec, n)
		}
	}
	if nh > 0 {
		last := make([]byte, rec)
		if _, err := main.ReadAt(last, bitsHeader+(nh-1)*rec); err != nil {
			return err
		}
		got := make([]byte, hrec)
		if _, err := h.ReadAt(got, bitsHeader+(nh-1)*hrec); err != nil {
			return err
		}
		if !bytes.Equal(got, headOf(nil, last)) {
			nh = 0
		}
	}
	if nh == 0 {
		if err := h.Truncate(0); err != nil {
			return err
		}
		if _, err := h.WriteAt(want, 0); err != nil {
			return err
		}
	} else if hst.Size() != bitsHeader+nh*hrec {
		if err := h.Truncate(bitsHeader + nh*hrec); err != nil {
			return err
		}
	}
	if nh == n {
		return nil
	}
	if _, err := h.Seek(bitsHeader+nh*hrec, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(main, bitsHeader+nh*rec, (n-nh)*rec), 1<<20)
	w := bufio.NewWriterSize(h, 1<<20)
	buf := make([]byte, rec)
	out := make([]byte, 0, hrec)
	for range n - nh {
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		if _, err := w.Write(headOf(out[:0], buf)); err != nil {
			return err
		}
	}
	return w.Flush()
}

// headFile is a head file open for reading.
type headFile struct {
	f *os.File
	n int // records
}

// openHead opens the head file of dim when it belongs to the index of vec
// id id; nil (and no error) when there is none that does.
func openHead(abs string, dim int, id string) (*headFile, error) {
	if !hasHead(dim) {
		return nil, nil
	}
	f, err := os.Open(headPath(abs, dim))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	n := (int(st.Size()) - bitsHeader) / (8 * (headFixed + headWords))
	got := make([]byte, bitsHeader)
	if n <= 0 {
		_ = f.Close()
		return nil, nil
	}
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, headHeaderOf(dim, id)) {
		_ = f.Close()
		return nil, nil
	}
	return &headFile{f: f, n: n}, nil
}

func (h *headFile) close() {
	if h != nil {
		_ = h.f.Close()
	}
}

// matchHead is match on a head record, the seq asked about not known
// there: 32 bits of the hashes can let through a record match would not,
// which the full record's check drops.
func (f *bitsFilter) matchHead(r []uint64) bool {
	if f.hasTenant && uint32(r[1]) != uint32(f.tenant) {
		return false
	}
	if f.hasTime {
		if ts := int64(r[0]); ts < f.from || ts >= f.to {
			return false
		}
	}
	if len(f.types) > 0 {
		for _, t := range f.types {
			if uint32(r[1]>>32) == uint32(t) {
				return true
			}
		}
		return false
	}
	return true
}
