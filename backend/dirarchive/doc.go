// Package dirarchive is the embedded archive (the truth layer): a directory
// holding each event once, durably, under the object store's keys
// (<root>/events/YYYY/MM/DD/<eventId>.json).
package dirarchive
