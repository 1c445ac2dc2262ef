package publish

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrCutLine marks a topic file's last line that has no newline: a write
// a crash or a full disk cut short. It is skipped, never joined to the next.
var ErrCutLine = errors.New("cut last line")

// TopicMessage is one line of a topic file: the event it announces, or why
// the line cannot be read.
type TopicMessage struct {
	EventID, Key string
	Line         int
	Err          error
}

// ReadTopic calls fn for each line of dir's file of topic, in order. A
// missing file has no messages.
func ReadTopic(dir, topic string, fn func(TopicMessage) error) error {
	f, err := os.Open(TopicPath(dir, topic))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		m := parseMessage(line, n, err == io.EOF)
		if ferr := fn(m); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

func parseMessage(line []byte, n int, cut bool) TopicMessage {
	var v struct {
		EventID string `json:"eventId"`
		Key     string `json:"objectStorageKey"`
	}
	m := TopicMessage{Line: n}
	switch {
	case cut:
		m.Err = ErrCutLine
	case json.Unmarshal(line, &v) != nil:
		m.Err = fmt.Errorf("not a JSON notification")
	case v.EventID == "":
		m.Err = fmt.Errorf("notification without eventId")
	}
	m.EventID, m.Key = v.EventID, v.Key
	return m
}

// TopicPath is the file of topic in dir.
func TopicPath(dir, topic string) string { return filepath.Join(dir, topic+".jsonl") }
