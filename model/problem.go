package model

import "strings"

// Problem is one thing wrong with an input, located by its JSON path
// (dotted, with [i] for array elements; empty for the whole value).
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Reason
	}
	return p.Path + ": " + p.Reason
}

// Problems is every problem found in one input. It is an error so that a
// decoder or validator can return all of them at once.
type Problems []Problem

func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

func (ps *Problems) add(path, reason string) { *ps = append(*ps, Problem{path, reason}) }

// Err returns ps as an error, or nil when there is none.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
