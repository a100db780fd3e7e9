package cortex

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
)

// Entity normalization: the same file, URL, project or peer gets one value
// wherever it is seen, so episodes of different sessions and agents link.

// homeOf guesses the home directory a working directory lies in (for ~
// in paths): /home/<user>, /Users/<user> or /root.
func homeOf(cwd string) string {
	for _, prefix := range []string{"/home/", "/Users/"} {
		if rest, ok := strings.CutPrefix(cwd, prefix); ok && rest != "" {
			user, _, _ := strings.Cut(rest, "/")
			return prefix + user
		}
	}
	if cwd == "/root" || strings.HasPrefix(cwd, "/root/") {
		return "/root"
	}
	return ""
}

var windowsPath = regexp.MustCompile(`^[A-Za-z]:[\\/]`)

// NormalizePath makes a path as written in a tool call absolute and clean:
// relative to the session's working directory, ~ in the home it lies in.
// A relative path with no absolute cwd to resolve it against stays
// relative (cleaned). Windows paths keep their drive, with forward
// slashes. Secrets are masked.
func NormalizePath(p, cwd string) string {
	p = strings.TrimSpace(p)
	if len(p) >= 2 && (p[0] == '"' || p[0] == '\'') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		if u, err := url.PathUnescape(rest); err == nil {
			rest = u
		}
		p = rest
	}
	if p == "" {
		return ""
	}
	switch {
	case windowsPath.MatchString(p):
		p = strings.ToUpper(p[:1]) + path.Clean(strings.ReplaceAll(p[1:], `\`, "/"))
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home := homeOf(cwd); home != "" {
			p = home + p[1:]
		}
		p = path.Clean(p)
	case !path.IsAbs(p) && path.IsAbs(cwd):
		p = path.Join(cwd, p)
	default:
		p = path.Clean(p)
	}
	if strings.ContainsAny(p, "\n\x00") {
		return ""
	}
	return redact.Secrets(p)
}

// NormalizeCwd is a working directory as the project facet names it.
func NormalizeCwd(cwd string) string {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" {
		return ""
	}
	if windowsPath.MatchString(cwd) {
		return NormalizePath(cwd, "")
	}
	return redact.Secrets(path.Clean(cwd))
}

// trackingParams are query parameters that only track where a click came
// from: dropped, so the same page links however it was reached.
var trackingParams = []string{"fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "_ga", "_gl", "igshid", "yclid"}

// secretParam reports whether a query parameter's value is a credential.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	if n == "key" || n == "code" || n == "sig" || n == "pass" || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "-key") {
		return true
	}
	for _, w := range []string{"token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "signature",
		"credential", "auth", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactedParam replaces the value of a query parameter that carries a credential.
const RedactedParam = "REDACTED"

// NormalizeURL canonicalizes an http(s) URL: lower-case scheme and host,
// no default port, no user info, no fragment, dot segments resolved, an
// empty path as "/", tracking parameters (utm_*, fbclid, ...) dropped, the
// rest sorted by name, credentials in parameters (token, key, signature,
// ...) masked, and any other secret masked too. It returns "" for what is
// not an http(s) URL.
func NormalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	host := strings.ToLower(u.Host)
	if h, port, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") &&
		(u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" || port == "") {
		host = h
	}
	if host == "" {
		return ""
	}
	u.Host = host
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	} else {
		p := path.Clean(u.Path)
		if strings.HasSuffix(u.Path, "/") && p != "/" {
			p += "/"
		}
		if p != u.Path {
			u.Path, u.RawPath = p, ""
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err == nil {
			for name, vals := range q {
				switch {
				case strings.HasPrefix(strings.ToLower(name), "utm_") || slices.Contains(trackingParams, strings.ToLower(name)):
					delete(q, name)
				case secretParam(name):
					for i := range vals {
						vals[i] = RedactedParam
					}
				}
			}
			u.RawQuery = q.Encode() // sorted by name
		}
	}
	u.ForceQuery = false
	return redact.Secrets(u.String())
}

// urlInText finds http(s) URLs in free text (a shell command).
var urlInText = regexp.MustCompile(`https?://[^\s"'<>()\[\]{}|\\^` + "`" + `]+`)

// URLsIn returns the URLs a text names, as written (trailing punctuation
// trimmed).
func URLsIn(s string) []string {
	if !strings.Contains(s, "://") {
		return nil
	}
	var out []string
	for _, m := range urlInText.FindAllString(s, -1) {
		if m = strings.TrimRight(m, ".,;:!?*"); m != "" {
			out = append(out, m)
		}
	}
	return out
}

var (
	// a query parameter: its name and value
	queryParam = regexp.MustCompile(`([?&])([A-Za-z0-9_.\-]+)=([^&\s#'"<>]*)`)
	// the password of a URL's user info
	urlPassword = regexp.MustCompile(`(://[^/\s:@]+):([^/\s@]+)@`)
)

// mask masks the secrets in text that leaves the ledger for the cortex:
// what redact finds, and what URLs carry (credential parameters, user
// passwords), wherever they are written (a command, an error, an ask).
func mask(s string) string {
	s = redact.Secrets(s)
	if !strings.Contains(s, "=") && !strings.Contains(s, "@") {
		return s
	}
	s = queryParam.ReplaceAllStringFunc(s, func(m string) string {
		p := queryParam.FindStringSubmatch(m)
		if !secretParam(p[2]) || p[3] == "" || p[3] == RedactedParam {
			return m
		}
		return p[1] + p[2] + "=" + RedactedParam
	})
	return urlPassword.ReplaceAllString(s, "$1:"+RedactedParam+"@")
}

// maxCommand bounds a command facet: enough to tell commands apart.
const maxCommand = 200

// NormalizeCommand is a shell command as the command facet names it: on
// one line, whitespace collapsed, secrets masked, clipped.
func NormalizeCommand(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if cmd == "" {
		return ""
	}
	cmd = mask(cmd)
	if len(cmd) > maxCommand {
		cmd = openclaw.Clip(cmd, maxCommand) + "…"
	}
	return cmd
}

// PeerOf says which channel and peer a session talks with: from its key
// when the key names them, else from the index's channel and recipient.
// The peer is "<channel>:<id>" (or "<channel>:group:<id>"), lower case, so
// the same person or group links across agents and sessions.
func PeerOf(ix *clawledger.IndexEntry) (channel, peer string) {
	if ix == nil {
		return "", ""
	}
	k := openclaw.ParseSessionKey(ix.Key)
	channel = strings.ToLower(strings.TrimSpace(firstOf(k.Channel, ix.Channel, ix.LastChannel)))
	if k.Kind == "cron" || k.Kind == "subagent" || k.Kind == "acp" || k.Kind == "hook" {
		return "", ""
	}
	peer = k.Peer
	if peer == "" && k.Kind != "main" {
		switch strings.ToLower(ix.ChatType) {
		case "direct":
			peer = strings.ToLower(strings.TrimSpace(ix.LastTo))
		case "group", "channel":
			if id := strings.ToLower(strings.TrimSpace(firstOf(ix.GroupID, ix.LastTo))); id != "" {
				peer = strings.ToLower(ix.ChatType) + ":" + id
			}
		}
	}
	if peer == "" {
		return channel, ""
	}
	if channel != "" && !strings.HasPrefix(peer, channel+":") {
		peer = channel + ":" + peer
	}
	return channel, redact.Secrets(peer)
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// LookupKey is the key a facet is found by besides its value: a file's
// base name, a URL's host, otherwise the value in lower case.
func LookupKey(t clawledger.FacetType, value string) string {
	switch t {
	case clawledger.FacetFile, clawledger.FacetProject:
		return strings.ToLower(path.Base(value))
	case clawledger.FacetURL:
		if u, err := url.Parse(value); err == nil && u.Host != "" {
			return u.Host
		}
	}
	return strings.ToLower(value)
}

// MatchesEntity reports whether a facet value is the entity a user named:
// the same value, or for a file or project a path ending in the named
// components ("report.md", "docs/report.md"), or for a URL its host.
func MatchesEntity(t clawledger.FacetType, value, query string) bool {
	if value == query {
		return true
	}
	switch t {
	case clawledger.FacetFile, clawledger.FacetProject:
		q := strings.Trim(query, "/")
		return q != "" && (strings.EqualFold(value, query) || strings.HasSuffix(strings.ToLower(value), "/"+strings.ToLower(q)))
	case clawledger.FacetURL:
		return LookupKey(t, value) == strings.ToLower(query)
	}
	return strings.EqualFold(value, query)
}
