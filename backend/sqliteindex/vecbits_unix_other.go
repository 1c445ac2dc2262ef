//go:build unix && !linux

package sqliteindex

const mapPopulate = 0
