package uikit

import (
	"charm.land/bubbles/v2/key"
)

// KeyMap is every binding of the inspector. Views pick the ones that work
// in their current state for the footer and the full help.
type KeyMap struct {
	// Global.
	Quit, Help, NextView, PrevView, Filter, Back key.Binding
	Command                                      key.Binding
	Yank, Export, Go, Duplicate, Record          key.Binding
	Mark, Compare                                key.Binding
	WhyNot                                       key.Binding

	// Lists.
	Up, Down, Move, PageUp, PageDown, Home, End, Enter key.Binding
	HalfDown, HalfUp, Top                              key.Binding
	Pause, ScrollLeft, ScrollRight                     key.Binding
	Order                                              key.Binding

	// Detail.
	Fold, Expand, Collapse, ExpandAll, CollapseAll key.Binding
	Search, NextMatch, PrevMatch, SideBySide       key.Binding
	Retry, NextEvent, PrevEvent, Similar           key.Binding

	// Record form.
	NextField, PrevField, Submit, Choice, LineBreak key.Binding
	FormHelp, Reset                                 key.Binding

	// Topics view and the record form's send.
	TopicNext, Send key.Binding

	// Chords (after y or g).
	YankID, YankKey, YankJSON, YankTrace   key.Binding
	GoTop, GoTurn, GoSession, GoTrace      key.Binding
	GoTimeline                             key.Binding
	GoTurnBack, GoSessionBack, GoTraceBack key.Binding
}

func bind(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

func k(keys ...string) []string { return keys }

// DefaultKeyMap is the inspector's bindings: arrows and vim keys.
func DefaultKeyMap() *KeyMap {
	return &KeyMap{
		Quit:      bind(k("q", "ctrl+c"), "q", "quit"),
		Help:      bind(k("?"), "?", "help"),
		NextView:  bind(k("tab"), "tab", "views"),
		PrevView:  bind(k("shift+tab"), "shift+tab", "prev view"),
		Filter:    bind(k("/"), "/", "filter"),
		Back:      bind(k("esc"), "esc", "back"),
		Command:   bind(k(":"), ":", "command"),
		Yank:      bind(k("y"), "y", "yank…"),
		Export:    bind(k("e"), "e", "export"),
		Go:        bind(k("g"), "g", "go to…"),
		Duplicate: bind(k("D"), "D", "duplicate as new"),
		Record:    bind(k("R"), "R", "record event"),
		Mark:      bind(k("m"), "m", "mark to compare"),
		Compare:   bind(k("="), "=", "compare with the mark"),
		WhyNot:    bind(k("w"), "w", "why not? (recall)"),

		Up:       bind(k("up", "k"), "↑/k", "up"),
		Down:     bind(k("down", "j"), "↓/j", "down"),
		Move:     bind(k("up", "k", "down", "j"), "j/k", "move"),
		PageUp:   bind(k("pgup", "ctrl+b"), "pgup", "page up"),
		PageDown: bind(k("pgdown", "ctrl+f"), "pgdn", "page down"),
		Home:     bind(k("home"), "home", "newest"),
		HalfDown: bind(k("ctrl+d"), "ctrl+d/u", "half page"),
		HalfUp:   bind(k("ctrl+u"), "ctrl+u", "half page up"),
		Top:      bind(k("g"), "g", "top"),
		End:      bind(k("end", "G"), "end/G", "oldest"),
		Enter:    bind(k("enter"), "enter", "open"),
		Pause:    bind(k("space", "p"), "space", "pause/follow"),
		Order:    bind(k("o"), "o", "order: indexing/event time"),

		ScrollLeft:  bind(k("left"), "←/→", "scroll text"),
		ScrollRight: bind(k("right"), "→", "scroll text"),

		Fold:        bind(k("space", "enter"), "space", "fold"),
		Expand:      bind(k("right", "l"), "→/l", "unfold"),
		Collapse:    bind(k("left", "h"), "←/h", "fold"),
		ExpandAll:   bind(k("E"), "E", "unfold all"),
		CollapseAll: bind(k("C"), "C", "fold all"),
		Search:      bind(k("/"), "/", "search"),
		NextMatch:   bind(k("n"), "n", "next match"),
		PrevMatch:   bind(k("N"), "N", "prev match"),
		SideBySide:  bind(k("s"), "s", "side by side"),
		Retry:       bind(k("r"), "r", "refetch"),
		NextEvent:   bind(k("]"), "]", "next event"),
		PrevEvent:   bind(k("["), "[", "prev event"),
		Similar:     bind(k("S"), "S", "similar events"),

		NextField: bind(k("down", "tab"), "tab/↓", "next field"),
		PrevField: bind(k("up", "shift+tab"), "shift+tab/↑", "prev field"),
		FormHelp:  bind(k("f1"), "f1", "help"),
		Reset:     bind(k("ctrl+r"), "ctrl+r", "clear the form"),
		Submit:    bind(k("ctrl+s"), "ctrl+s", "record"),
		LineBreak: bind(k("ctrl+j", "alt+enter"), "ctrl+j", "line break"),
		Choice:    bind(k("left", "right"), "←/→", "change"),

		TopicNext: bind(k("t"), "t", "one topic / all"),
		Send:      bind(k("ctrl+p"), "ctrl+p", "send to the raw topic"),

		YankID:        bind(k("i"), "i", "event id"),
		YankKey:       bind(k("k"), "k", "archive key"),
		YankJSON:      bind(k("j"), "j", "JSON"),
		YankTrace:     bind(k("l"), "l", "trace link"),
		GoTop:         bind(k("g"), "g", "newest"),
		GoTurn:        bind(k("t"), "t/T", "next/prev same turn"),
		GoSession:     bind(k("s"), "s/S", "next/prev same session"),
		GoTrace:       bind(k("r"), "r/R", "next/prev same trace"),
		GoTurnBack:    bind(k("T"), "T", "prev same turn"),
		GoSessionBack: bind(k("S"), "S", "prev same session"),
		GoTraceBack:   bind(k("R"), "R", "prev same trace"),
		GoTimeline:    bind(k("L"), "L", "session timeline"),
	}
}

// ListKeys are the movement keys every list view shares.
func (km *KeyMap) ListKeys() []key.Binding {
	return []key.Binding{km.Up, km.Down, km.PageUp, km.PageDown, km.HalfDown, km.Home, km.End}
}

// RankKeys are ListKeys for what is not newest first (a ranking, a
// document, a diff, a session oldest first): home and end go to the
// first and the last.
func (km *KeyMap) RankKeys() []key.Binding {
	home, end := km.Home, km.End
	home.SetHelp(km.Home.Help().Key, "first")
	end.SetHelp(km.End.Help().Key, "last")
	return []key.Binding{km.Up, km.Down, km.PageUp, km.PageDown, km.HalfDown, home, end}
}

// Binding is a binding made on the spot, for help that names a key in
// one state (enter while typing a search).
func Binding(help, desc string, keys ...string) key.Binding { return bind(keys, help, desc) }
