package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// readOnlyDataError is a data directory that a command that writes cannot
// write: dir, or ro, the nearest directory of it that exists.
type readOnlyDataError struct{ dir, ro string }

func (e *readOnlyDataError) Error() string {
	what := "data directory " + e.dir + " is read-only"
	if e.ro != e.dir {
		what = "data directory " + e.dir + " cannot be made: " + e.ro + " is read-only"
	}
	return what + ": the embedded archive and index are written there; choose a writable one with --data or ENGRAM_DATA (engram ui opens a read-only one for reading)"
}

// checkDataDir refuses a data directory that cannot be written before a
// store fails on it in its own words (a SQLite error code).
func checkDataDir(dir string) error {
	d := dir
	for {
		if _, err := os.Stat(d); err == nil {
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
	if !writable(d) {
		return &readOnlyDataError{dir, d}
	}
	return nil
}

// dataDirError is err, an embedded store's failure to open in dir, said as
// a read-only data directory when that is what it is.
func dataDirError(dir string, err error) error {
	var ro *readOnlyDataError
	if err == nil || errors.As(err, &ro) {
		return err
	}
	// SQLite cannot open a database whose directory it cannot write its
	// journal in (SQLITE_CANTOPEN); that is read-only only if dir is.
	if isReadOnly(err) || (sqliteCode(err) == 14 && unix.Access(dir, unix.W_OK) != nil) {
		return &readOnlyDataError{dir, dir}
	}
	return err
}

// isReadOnly reports whether err is a refusal to write: read-only media,
// no permission, or SQLite's SQLITE_READONLY.
func isReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) || sqliteCode(err) == 8
}

// sqliteCode is the primary result code of a SQLite error in err's chain
// (8 for every SQLITE_READONLY_*), else 0.
func sqliteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	// Errors that lost their type keep the code in the text: "(8)".
	for _, c := range []int{8, 14} {
		if strings.HasSuffix(err.Error(), fmt.Sprintf("(%d)", c)) && strings.Contains(err.Error(), "database") {
			return c
		}
	}
	return 0
}
