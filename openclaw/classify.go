package openclaw

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
)

// SessionFile is what a file name in a sessions directory says about the file.
type SessionFile struct {
	Class      clawledger.FileClass
	SessionID  string // from the name; the header's id wins when present
	Topic      string // decoded topic of a topic file
	Compressed bool   // a .zst archive
	Reason     string // why a skipped or unknown file is not ingested
}

// The file name patterns are compiled on first use: most names never reach
// them (see the shortcuts below), and compiling them all, the session id's
// {0,127} above all, took a millisecond of every command's start.
var (
	sessionIDPattern = lazyRegexp(`(?i)^[a-z0-9][a-z0-9._-]{0,127}$`)
	forkPattern      = lazyRegexp(`(?i)^\d{4}-\d{2}-\d{2}T[0-9_.:-]+Z?_([a-z0-9][a-z0-9._-]*)$`)
	bakPattern       = lazyRegexp(`\.bak-[0-9]+-[0-9]+$|\.bak-[^/]*$`)
	checkpointRe     = lazyRegexp(`\.checkpoint\.[^./]+\.jsonl$`)
	archivePattern   = lazyRegexp(`^(.+\.jsonl)\.(deleted|reset)\.(.+)$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ValidSessionID reports whether s is a session id OpenClaw would write.
func ValidSessionID(s string) bool {
	// the pattern, by hand, for ASCII names (a scan classifies thousands);
	// (?i) lets [a-z] match two non-ASCII runes too, so others take the regexp
	if len(s) == 0 || len(s) > 128 {
		return sessionIDPattern().MatchString(s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return sessionIDPattern().MatchString(s)
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ClassifySessionFile classifies a file name found in a sessions directory
// (formats doc §3). Files that duplicate others (backups, checkpoints),
// locks and sidecars are ClassSkipped; names OpenClaw is not known to write
// are ClassUnknown.
func ClassifySessionFile(name string) SessionFile {
	switch {
	case name == "sessions.json":
		return SessionFile{Class: clawledger.ClassIndex}
	case strings.HasPrefix(name, "sessions.json."):
		return skipped("index backup or temp file")
	case strings.HasSuffix(name, ".lock"):
		return skipped("lock file")
	case strings.Contains(name, ".bak-") && bakPattern().MatchString(name):
		return skipped("backup written before a line repair")
	case strings.Contains(name, ".checkpoint.") && checkpointRe().MatchString(name):
		return skipped("pre-compaction checkpoint copy")
	case strings.HasSuffix(name, ".trajectory.jsonl"), strings.HasSuffix(name, ".trajectory-path.json"):
		return skipped("trajectory sidecar")
	case strings.HasSuffix(name, ".tmp"):
		return skipped("temporary file")
	}
	if m := archiveMatch(name); m != nil {
		sf := classifyJSONL(m[1])
		if sf.Class == clawledger.ClassUnknown {
			return sf
		}
		sf.Class = clawledger.FileClass(m[2])
		sf.Compressed = strings.HasSuffix(name, ".zst")
		return sf
	}
	if base, ok := strings.CutSuffix(name, ".jsonl.migrated"); ok {
		sf := classifyJSONL(base + ".jsonl")
		if sf.Class != clawledger.ClassUnknown {
			sf.Class = clawledger.ClassMigrated
		}
		return sf
	}
	if strings.HasSuffix(name, ".jsonl") {
		return classifyJSONL(name)
	}
	return SessionFile{Class: clawledger.ClassUnknown, Reason: "not a transcript name"}
}

// archiveMatch is archivePattern's submatches, looked for only in names
// that can match.
func archiveMatch(name string) []string {
	if !strings.Contains(name, ".jsonl.deleted.") && !strings.Contains(name, ".jsonl.reset.") {
		return nil
	}
	return archivePattern().FindStringSubmatch(name)
}

func skipped(reason string) SessionFile {
	return SessionFile{Class: clawledger.ClassSkipped, Reason: reason}
}

// forkMatch is forkPattern's submatches; they start with a digit.
func forkMatch(stem string) []string {
	if stem == "" || stem[0] < '0' || stem[0] > '9' {
		return nil
	}
	return forkPattern().FindStringSubmatch(stem)
}

func classifyJSONL(name string) SessionFile {
	stem := strings.TrimSuffix(name, ".jsonl")
	if m := forkMatch(stem); m != nil {
		return SessionFile{Class: clawledger.ClassFork, SessionID: m[1]}
	}
	if i := strings.Index(stem, "-topic-"); i > 0 {
		topic, err := url.PathUnescape(stem[i+len("-topic-"):])
		if err != nil {
			topic = stem[i+len("-topic-"):]
		}
		return SessionFile{Class: clawledger.ClassTopic, SessionID: stem[:i], Topic: topic}
	}
	if !ValidSessionID(stem) {
		return SessionFile{Class: clawledger.ClassUnknown, Reason: "not a valid session id"}
	}
	return SessionFile{Class: clawledger.ClassLive, SessionID: stem}
}

// Credentials a collector must never open or stat (formats doc §1): the
// state dir's credentials/, identity/ and devices/ trees and its
// exec-approvals.json, every agent's auth files, and any .env file.
var (
	credentialDirs  = map[string]bool{"credentials": true, "identity": true, "devices": true} // at the state dir's root
	credentialFiles = map[string]bool{"auth-profiles.json": true, "auth.json": true}          // anywhere
)

// IsCredentialPath reports whether a path (relative to a state directory,
// slash-separated) is or lies inside a credential file or directory.
func IsCredentialPath(rel string) bool {
	if rel == "exec-approvals.json" {
		return true
	}
	for first, rest := true, rel; ; first = false {
		part, after, more := strings.Cut(rest, "/")
		if first && credentialDirs[part] || credentialFiles[part] || part == ".env" || strings.HasPrefix(part, ".env.") {
			return true
		}
		if !more {
			return false
		}
		rest = after
	}
}
