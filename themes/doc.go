// Package themes holds engram's palettes: semantic colours (text, muted,
// accent, success, warning, error, ...) that the ui package turns into
// styles. A palette says what a colour means, never where it is used.
package themes
