// Package outage keeps a long-running command (the worker, tail) going
// through a failure that may pass: each attempt waits a backoff, and the
// failure is reported when it starts, now and then while it lasts, and when
// it is over, so a broker down for a minute is three lines, not one a retry.
package outage
