package cli

import "regexp"

// URL credentials: a URL's userinfo (everything up to the last @ before
// the path) and the value of any query parameter whose name looks like a
// secret. Client libraries quote whole URLs in their errors, and settings
// such as opensearch.url are printed by `engram config`, so every line
// engram prints goes through redactCredentials (see safeLine).
var (
	userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s"'<>]*@`)
	secretRE   = regexp.MustCompile(`(?i)([?&;][A-Za-z0-9_.-]*(?:key|token|passw|pwd|secret|signature|sig|credential|auth)[A-Za-z0-9_.-]*=)[^&;#\s"'<>]*`)
)

// redactCredentials replaces URL credentials in s with <redacted>.
func redactCredentials(s string) string {
	s = userinfoRE.ReplaceAllString(s, "${1}<redacted>@")
	return secretRE.ReplaceAllString(s, "${1}<redacted>")
}
